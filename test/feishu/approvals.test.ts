/**
 * Approvals on Feishu. The spec's Feishu ran decider-less (every tool the policy did not allow was
 * denied); parley gives it the kit's typed-reply floor instead, a deliberate step beyond the spec:
 * the prompt is a reply saying "Reply 1 to approve or 2 to deny", a lone `1`/`2` is intercepted
 * before steering while a prompt is open, silence denies and is said, and a verdict quoting a prompt
 * that is gone (decided, or posted before a restart) matches nothing and gets the neutral receipt.
 */
import { describe, expect, it } from "vitest";
import { RECEIPT_EXPIRED } from "../../src/messaging/approval/approvals.js";
import type { ScriptedTurn } from "../../src/providers/scripted.js";
import { permissionRequest } from "../helpers/events.js";
import { ManualClock } from "../helpers/manual-clock.js";
import { done, fakeFeishuLab, OWNER, shown, startChannel, text } from "./channel-harness.js";

const lab = fakeFeishuLab();

const guarded = (requestId: string, title: string, after: string): ScriptedTurn => ({
  steps: [permissionRequest({ requestId, title })],
  onPermission: { approve: [text(`${after}: done`), done], deny: [text(`${after}: skipped`), done] },
});

const promptOf = (title: string) =>
  lab.fake.botMessages().find((m) => m.visible.includes(`Permission needed: ${title}`));
const until = (what: string, pred: () => boolean) => lab.fake.waitFor(pred, 5000, what);
const seen = (needle: string) => until(needle, () => shown(lab.fake).some((v) => v.includes(needle)));

describe("typed approvals: the kit's floor on Feishu, a deliberate step beyond the spec (no decider there)", () => {
  it("a 1 with no prompt open is an ordinary message for the agent", async () => {
    const c = await lab.connected({ turns: () => [[text("one what?"), done]] });
    lab.fake.pushMessage(OWNER, "1");
    await seen("one what?");
    expect([...c.providers.values()][0]?.prompts).toEqual(["1"]);
  });

  it("the prompt offers exactly 1 and 2; a typed 1 approves while it is open, and the outcome is replied under it", async () => {
    // An agent that accepts steering: the 1 must still be a verdict, intercepted before the steer.
    const c = await lab.connected({
      supportsSteer: true,
      turns: () => [guarded("r1", "rm -rf build", "cleanup")],
    });
    lab.fake.pushMessage(OWNER, "clean up");
    await seen("Permission needed: rm -rf build");
    expect(promptOf("rm -rf build")?.visible).toContain("Reply 1 to approve or 2 to deny.");
    expect(promptOf("rm -rf build")?.visible).not.toContain("3");
    lab.fake.pushMessage(OWNER, "1");
    await seen("cleanup: done");
    const provider = [...c.providers.values()][0];
    expect(provider?.answers).toEqual([{ requestId: "r1", verdict: "approve" }]);
    // The 1 was a verdict, never a message to the agent.
    expect(provider?.prompts).toEqual(["clean up"]);
    expect(provider?.steers).toEqual([]);
    const order = shown(lab.fake);
    const outcome = order.indexOf("🔐 rm -rf build: ✅ Approved (this once)");
    expect(outcome).toBeGreaterThan(order.findIndex((v) => v.includes("Permission needed")));
    expect(outcome).toBeLessThan(order.findIndex((v) => v.includes("cleanup: done")));
  });

  it("a typed 2 denies", async () => {
    const c = await lab.connected({ turns: () => [guarded("r1", "deploy", "deploy")] });
    lab.fake.pushMessage(OWNER, "ship it");
    await seen("Permission needed: deploy");
    lab.fake.pushMessage(OWNER, "2");
    await seen("deploy: skipped");
    expect([...c.providers.values()][0]?.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
    expect(shown(lab.fake)).toContain("🔐 deploy: ❌ Denied");
  });

  it("silence denies, and the prompt is answered with the timeout on screen", async () => {
    const c = await lab.connected({
      turns: () => [guarded("r1", "drop the table", "drop")],
      overrides: { approvalTimeoutMs: 300 },
    });
    lab.fake.pushMessage(OWNER, "tidy the database");
    await seen("drop: skipped");
    expect([...c.providers.values()][0]?.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
    expect(shown(lab.fake)).toContain("🔐 drop the table: ⌛ No answer in time: denied");
  });

  it("a 1 quoting a prompt already decided matches nothing, is answered neutrally, and leaves the open one open", async () => {
    const c = await lab.connected({
      turns: () => [guarded("r1", "first tool", "first"), guarded("r2", "second tool", "second")],
    });
    lab.fake.pushMessage(OWNER, "one");
    await seen("Permission needed: first tool");
    const old = promptOf("first tool")?.messageId ?? "";
    lab.fake.pushMessage(OWNER, "2");
    await seen("first: skipped");
    lab.fake.pushMessage(OWNER, "two");
    await seen("Permission needed: second tool");
    lab.fake.pushMessage(OWNER, "1", { parentId: old });
    await seen(RECEIPT_EXPIRED);
    const provider = [...c.providers.values()][0];
    expect(provider?.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
    expect(c.audit.find("tool_permission", "refused").map((r) => r.fields.reason)).toContain("stale_typed");
    lab.fake.pushMessage(OWNER, "1");
    await seen("second: done");
    expect(provider?.answers).toEqual([
      { requestId: "r1", verdict: "deny" },
      { requestId: "r2", verdict: "approve" },
    ]);
  });

  it("a verdict quoting a prompt from before a restart matches nothing and is reported neutrally", async () => {
    const a = await lab.connected({ turns: () => [guarded("r1", "rotate keys", "rotate")] });
    lab.fake.pushMessage(OWNER, "rotate the keys");
    await seen("Permission needed: rotate keys");
    const old = promptOf("rotate keys")?.messageId ?? "";
    // The process dies: its long connection goes, its open prompt with it.
    a.running.connection.close();
    // Too old to run again after the restart: its sender is told, and the prompt stays as it was.
    const b = await startChannel(lab.fake, { home: a.home, staleAfterMs: 0 });
    try {
      await seen("it is now too old to run");
      expect(promptOf("rotate keys")?.messageId).toBe(old);
      lab.fake.pushMessage(OWNER, "1", { parentId: old });
      await seen(RECEIPT_EXPIRED);
      expect(b.providers.size).toBe(0);
      expect(b.audit.find("tool_permission", "refused").map((r) => r.fields.reason)).toEqual(["stale_typed"]);
    } finally {
      await b.stop();
    }
  });

  it("a typed 1 the earlier process journaled but never applied approves nothing after the restart", async () => {
    const clock = new ManualClock();
    const a = await lab.connected({
      supportsSteer: true,
      provider: { timers: clock },
      turns: () => [
        { steps: [{ delayMs: 1000 }, permissionRequest({ requestId: "r1", title: "wipe disk" })] },
      ],
    });
    lab.fake.pushMessage(OWNER, "free some space");
    await until("the turn", () => [...a.providers.values()][0]?.hasActiveTurn() === true);
    // Sent while nothing was asked yet: it rides the running turn (steered) and is journaled with it.
    const { event } = lab.fake.pushMessage(OWNER, "1");
    await until("the 1 journaled", () => event.acked);
    a.running.connection.close();
    const b = await startChannel(lab.fake, {
      home: a.home,
      turns: () => [guarded("r1", "wipe disk", "wipe")],
    });
    try {
      await seen(RECEIPT_EXPIRED);
      await seen("Permission needed: wipe disk");
      expect([...b.providers.values()][0]?.answers).toEqual([]);
      lab.fake.pushMessage(OWNER, "2");
      await seen("wipe: skipped");
      expect([...b.providers.values()][0]?.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
    } finally {
      await b.stop();
    }
  });
});
