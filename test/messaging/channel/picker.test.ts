import { describe, expect, it } from "vitest";
import { PICK_REFUSAL_TEXT, PickerRegistry } from "../../../src/messaging/channel/picker.js";

function registry(opts: { ttlMs?: number; capacity?: number } = {}) {
  let now = 1_000;
  const reg = new PickerRegistry<string>({ ...opts, now: () => now });
  return { reg, advance: (ms: number) => (now += ms) };
}

const alice = { owner: "u1", scope: "c1" };

describe("PickerRegistry", () => {
  it("resolves an index against the exact list posted and consumes it once", () => {
    const { reg } = registry();
    reg.offer("m1", { ...alice, items: ["a", "b", "c"] });
    expect(reg.take("m1", 1, alice)).toEqual({ ok: true, item: "b", index: 1 });
    expect(reg.take("m1", 1, alice)).toEqual({ ok: false, reason: "consumed" });
    expect(reg.take("m1", 0, alice)).toEqual({ ok: false, reason: "consumed" });
  });

  it("refuses an expired list and forgets it", () => {
    const { reg, advance } = registry({ ttlMs: 60_000 });
    reg.offer("m1", { ...alice, items: ["a"] });
    advance(59_999);
    reg.offer("m2", { ...alice, items: ["a"] });
    expect(reg.take("m2", 0, alice).ok).toBe(true);
    advance(1);
    expect(reg.take("m1", 0, alice)).toEqual({ ok: false, reason: "expired" });
    expect(reg.take("m1", 0, alice)).toEqual({ ok: false, reason: "unknown" });
  });

  it("evicts the oldest list beyond capacity", () => {
    const { reg } = registry({ capacity: 2 });
    reg.offer("m1", { ...alice, items: ["a"] });
    reg.offer("m2", { ...alice, items: ["b"] });
    reg.offer("m3", { ...alice, items: ["c"] });
    expect(reg.size).toBe(2);
    expect(reg.take("m1", 0, alice)).toEqual({ ok: false, reason: "unknown" });
    expect(reg.take("m3", 0, alice)).toEqual({ ok: true, item: "c", index: 0 });
  });

  it("a wrong owner, scope or index misses without spending the rightful press", () => {
    const { reg } = registry();
    reg.offer("m1", { ...alice, items: ["a", "b"] });
    expect(reg.take("m1", 0, { owner: "u2", scope: "c1" })).toEqual({ ok: false, reason: "wrong_owner" });
    expect(reg.take("m1", 0, { owner: "u1", scope: "c2" })).toEqual({ ok: false, reason: "wrong_scope" });
    expect(reg.take("m1", 2, alice)).toEqual({ ok: false, reason: "out_of_range" });
    expect(reg.take("m1", -1, alice)).toEqual({ ok: false, reason: "out_of_range" });
    expect(reg.take("m1", 0.5, alice)).toEqual({ ok: false, reason: "out_of_range" });
    expect(reg.take("m1", 0, alice)).toEqual({ ok: true, item: "a", index: 0 });
  });

  it("a re-offer under the same handle replaces the list; withdraw drops it", () => {
    const { reg } = registry();
    reg.offer("m1", { ...alice, items: ["old"] });
    reg.offer("m1", { ...alice, items: ["new"] });
    expect(reg.take("m1", 0, alice)).toEqual({ ok: true, item: "new", index: 0 });
    reg.offer("m2", { ...alice, items: ["x"] });
    expect(reg.withdraw("m2")).toBe(true);
    expect(reg.take("m2", 0, alice)).toEqual({ ok: false, reason: "unknown" });
  });

  it("keeps its own copy of the items and mints unguessable handles", () => {
    const { reg } = registry();
    const items = ["a"];
    reg.offer("m1", { ...alice, items });
    items[0] = "mutated";
    expect(reg.take("m1", 0, alice)).toEqual({ ok: true, item: "a", index: 0 });
    const a = PickerRegistry.newHandle();
    expect(a).toMatch(/^[A-Za-z0-9_-]{8,}$/);
    expect(PickerRegistry.newHandle()).not.toBe(a);
    for (const text of Object.values(PICK_REFUSAL_TEXT)) expect(text.length).toBeGreaterThan(10);
  });
});
