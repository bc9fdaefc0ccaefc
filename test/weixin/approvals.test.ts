/**
 * Approvals on Weixin: the kit's typed floor (no buttons). The prompt is its own message saying
 * "Reply 1 to approve or 2 to deny"; a lone 1/2 is a verdict only while a prompt is open; silence
 * denies and is said; a 1 journaled before a restart approves nothing after it.
 */
import { describe, expect, it } from "vitest";
import { RECEIPT_EXPIRED } from "../../src/messaging/approval/approvals.js";
import type { ScriptedTurn } from "../../src/providers/scripted.js";
import { permissionRequest } from "../helpers/events.js";
import { ManualClock } from "../helpers/manual-clock.js";
import { done, fakeIlinkLab, OWNER, startChannel, text } from "./channel-harness.js";

const lab = fakeIlinkLab();

const guarded = (requestId: string, title: string, after: string): ScriptedTurn => ({
  steps: [permissionRequest({ requestId, title })],
  onPermission: { approve: [text(`${after}: done`), done], deny: [text(`${after}: skipped`), done] },
});
const until = (what: string, pred: () => boolean) => lab.fake.waitFor(pred, 5000, what);
const seen = (needle: string) => until(needle, () => lab.fake.visible().some((v) => v.includes(needle)));

describe("weixin typed approvals", () => {
  it("a 1 with no prompt open is an ordinary message for the agent", async () => {
    const c = await lab.channel({ turns: () => [[text("one what?"), done]] });
    lab.fake.push(OWNER, "1");
    await seen("one what?");
    expect([...c.providers.values()][0]?.prompts).toEqual(["1"]);
  });

  it("the prompt is its own message; a typed 1 approves while it is open and the outcome is spoken", async () => {
    const c = await lab.channel({
      supportsSteer: true,
      turns: () => [guarded("r1", "rm -rf build", "cleanup")],
    });
    lab.fake.push(OWNER, "clean up");
    await seen("Permission needed: rm -rf build");
    const prompt = lab.fake.visible().find((v) => v.includes("Permission needed"));
    expect(prompt).toContain("Reply 1 to approve or 2 to deny.");
    lab.fake.push(OWNER, "1");
    await seen("cleanup: done");
    const provider = [...c.providers.values()][0];
    expect(provider?.answers).toEqual([{ requestId: "r1", verdict: "approve" }]);
    expect(provider?.prompts).toEqual(["clean up"]);
    expect(provider?.steers).toEqual([]);
    const order = lab.fake.visible();
    const outcome = order.indexOf("🔐 rm -rf build: ✅ Approved (this once)");
    expect(outcome).toBeGreaterThan(order.findIndex((v) => v.includes("Permission needed")));
    expect(outcome).toBeLessThan(order.findIndex((v) => v.includes("cleanup: done")));
  });

  it("silence denies, and the timeout is spoken", async () => {
    const c = await lab.channel({
      turns: () => [guarded("r1", "drop the table", "drop")],
      overrides: { approvalTimeoutMs: 300 },
    });
    lab.fake.push(OWNER, "tidy the database");
    await seen("drop: skipped");
    expect([...c.providers.values()][0]?.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
    expect(lab.fake.visible()).toContain("🔐 drop the table: ⌛ No answer in time: denied");
  });

  it("a typed 1 journaled before a restart approves nothing after it", async () => {
    const clock = new ManualClock();
    const a = await lab.channel({
      supportsSteer: true,
      provider: { timers: clock },
      turns: () => [
        { steps: [{ delayMs: 1000 }, permissionRequest({ requestId: "r1", title: "wipe disk" })] },
      ],
    });
    lab.fake.push(OWNER, "free some space");
    await until("the turn", () => [...a.providers.values()][0]?.hasActiveTurn() === true);
    lab.fake.push(OWNER, "1");
    for (const deadline = Date.now() + 5000; (await a.parley.intake.countUnfinished()) < 2; ) {
      if (Date.now() > deadline) throw new Error("the 1 was never journaled");
      await new Promise((r) => setTimeout(r, 10));
    }
    // The process dies: its poll stops, nothing is settled.
    await a.running.poller.stop();
    const b = await startChannel(lab.fake, {
      home: a.home,
      turns: () => [guarded("r1", "wipe disk", "wipe")],
    });
    try {
      await seen("Permission needed: wipe disk");
      await new Promise((r) => setTimeout(r, 200));
      expect([...b.providers.values()][0]?.answers).toEqual([]);
      lab.fake.push(OWNER, "2");
      await seen("wipe: skipped");
      expect([...b.providers.values()][0]?.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
      expect(lab.fake.visible().some((v) => v.includes(RECEIPT_EXPIRED))).toBe(true);
    } finally {
      await b.stop();
    }
  });
});
