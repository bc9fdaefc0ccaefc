/**
 * No activity is dropped silently: every one that does not become a message, a press or an install
 * is counted per reason in the channel's drop ledger and audited (an unknown type, a replay, an
 * update that is not an install, an unreadable activity, a refused request, a refused channel).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Stack } from "./helpers.js";
import { done, seen, startStack, text } from "./helpers.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe("teams: inbound drops are counted", () => {
  it("an activity type parley does not know is counted as an unknown shape, warned once, and answered 200", async () => {
    stack = await startStack();
    const { driver, alice } = stack;
    expect((await driver.post(driver.typing(alice))).status).toBe(200);
    expect((await driver.post(driver.typing(alice))).status).toBe(200);
    expect(stack.drops.count("teams", "unknown_shape")).toBe(2);
    expect(stack.audit.find("inbound", "dropped").map((r) => [r.fields.reason, r.fields.shape])).toEqual([
      ["unknown_shape", "typing"],
      ["unknown_shape", "typing"],
    ]);
    expect(stack.logger.entries.filter((e) => e.level === "warn" && /shape/.test(e.message))).toHaveLength(1);
    expect(stack.startedKeys).toEqual([]);
  });

  it("the same activity delivered again is counted once as a replay and runs once", async () => {
    stack = await startStack({ turns: [[text("once"), done]] });
    const { driver, alice, fake } = stack;
    const activity = driver.message(alice, "hello");
    await driver.post(activity);
    await seen(fake, "once");
    await driver.post(activity);
    expect(stack.drops.count("teams", "replayed_activity")).toBe(1);
    await vi.waitFor(() => expect(stack?.sessions.isBusy(stack.startedKeys[0] ?? "")).toBe(false));
    expect(stack.provider.prompts).toEqual(["hello"]);
  });

  it("an update that is not the bot's install is counted, not ignored", async () => {
    stack = await startStack();
    const { driver, alice } = stack;
    expect((await driver.post(driver.uninstall(alice))).status).toBe(200);
    expect(stack.drops.count("teams", "update_ignored")).toBe(1);
    expect(stack.audit.find("inbound", "dropped").map((r) => r.fields.activity_type)).toEqual([
      "installationUpdate",
    ]);
  });

  it("an activity the SDK takes but parley cannot read is counted as unparseable", async () => {
    stack = await startStack();
    const { driver, alice } = stack;
    const { conversation: _dropped, ...noConversation } = driver.message(alice, "hello") as Record<
      string,
      unknown
    >;
    await driver.post(noConversation);
    expect(stack.drops.count("teams", "unparseable")).toBe(1);
    expect(stack.startedKeys).toEqual([]);
  });

  it("a request refused before the SDK (no token) is counted with its status", async () => {
    stack = await startStack();
    const { driver, alice } = stack;
    expect((await driver.post(driver.message(alice, "hello"), { token: null })).status).toBe(401);
    expect(stack.drops.count("teams", "missing_token")).toBe(1);
    expect(stack.audit.find("teams_inbound", "denied").map((r) => r.fields)).toEqual([
      { channel: "teams", reason: "missing_token", status: 401 },
    ]);
  });

  it("a Direct Line activity is refused with 403, counted under its own activity channel", async () => {
    stack = await startStack();
    const { driver, alice } = stack;
    for (const channelId of ["directline", "webchat"])
      expect((await driver.post({ ...driver.message(alice, "hello"), channelId })).status).toBe(403);
    expect(stack.drops.count("teams", "channel_not_msteams")).toBe(2);
    expect(stack.audit.find("inbound", "denied").map((r) => r.fields.activity_channel)).toEqual([
      "directline",
      "webchat",
    ]);
    expect(stack.startedKeys).toEqual([]);
  });
});
