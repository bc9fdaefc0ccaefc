import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Locators } from "../../../src/messaging/channel/locators.js";

const DAY = 86_400_000;

function setup(key: Uint8Array = randomBytes(32)) {
  let now = 1_000_000;
  const locators = new Locators({
    key,
    adapters: () => ["telegram", "webchat"],
    now: () => now,
    ttlMs: 7 * DAY,
  });
  return { locators, advance: (ms: number) => (now += ms) };
}

describe("locators", () => {
  it("round-trips a message locator: the channel, its conversation and entry, and nothing sender-written", () => {
    const { locators } = setup();
    const loc = locators.mint("telegram", { kind: "message", conversation: "telegram:42", entry: 17 });
    expect(loc).toMatch(/^telegram:v1:[A-Za-z0-9_-]+$/);
    expect(locators.read(loc)).toEqual({
      ok: true,
      channel: "telegram",
      claims: { kind: "message", conversation: "telegram:42", entry: 17, issuedMs: 1_000_000 },
    });
    expect(
      locators.read(locators.mint("webchat", { kind: "chat", conversation: "webchat:c1" })),
    ).toMatchObject({
      ok: true,
      claims: { kind: "chat", conversation: "webchat:c1" },
    });
  });

  it("refuses a forged one: any changed byte, another install's key, or a moved adapter prefix", () => {
    const { locators } = setup();
    const loc = locators.mint("telegram", { kind: "message", conversation: "telegram:42", entry: 17 });
    const [, , data = ""] = loc.split(":");
    const bytes = Buffer.from(data, "base64url");
    // Rewrite the entry id inside the payload, keeping the old MAC.
    const tampered = Buffer.from(bytes.subarray(16).toString("utf8").replace('"e":17', '"e":18'), "utf8");
    const forged = `telegram:v1:${Buffer.concat([bytes.subarray(0, 16), tampered]).toString("base64url")}`;
    expect(locators.read(forged)).toMatchObject({ ok: false, reason: "forged" });
    expect(setup().locators.read(loc)).toMatchObject({ ok: false, reason: "forged" });
    expect(locators.read(loc.replace(/^telegram/, "webchat"))).toMatchObject({ ok: false, reason: "forged" });
  });

  it("refuses an unknown version, an unknown adapter, garbage and an expired locator, each saying why", () => {
    const { locators, advance } = setup();
    const loc = locators.mint("telegram", { kind: "chat", conversation: "telegram:42" });
    expect(locators.read(loc.replace(":v1:", ":v2:"))).toEqual({
      ok: false,
      reason: "unknown_version",
      message: "locator version v2 is not supported (this parley reads v1)",
    });
    expect(locators.read(loc.replace(/^telegram/, "slack"))).toMatchObject({
      ok: false,
      reason: "unknown_adapter",
    });
    for (const bad of ["", "telegram", "telegram:v1:", "telegram:v1:!!", 42, null, "x".repeat(600)])
      expect(locators.read(bad)).toMatchObject({ ok: false, reason: "malformed" });
    expect(locators.read("telegram:v1:AAAA")).toMatchObject({ ok: false, reason: "malformed" });
    advance(7 * DAY + 1);
    expect(locators.read(loc)).toMatchObject({ ok: false, reason: "stale" });
  });

  it("a channel may not mint for another channel's conversation, and a short key is refused", () => {
    const { locators } = setup();
    const crossed = locators.mint("webchat", { kind: "chat", conversation: "telegram:42" });
    expect(locators.read(crossed)).toMatchObject({ ok: false, reason: "forged" });
    expect(() => new Locators({ key: randomBytes(8), adapters: () => [], now: () => 0, ttlMs: 1 })).toThrow(
      RangeError,
    );
  });

  it("no random string verifies (property)", () => {
    const { locators } = setup();
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 17, maxLength: 120 }), (bytes) => {
        const reading = locators.read(`telegram:v1:${Buffer.from(bytes).toString("base64url")}`);
        expect(reading.ok).toBe(false);
      }),
    );
  });
});
