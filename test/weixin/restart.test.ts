/**
 * Restarts with the real store. The getupdates cursor is stored only once its batch is journaled,
 * and a restarted channel polls from it (nothing answered twice); a turn cut short by a kill is
 * answered after the restart, the part its first run landed is not sent again, and its answer
 * arrives once. A process "dies" here by its poll stopping without anything settled.
 */
import { describe, expect, it } from "vitest";
import { permissionRequest } from "../helpers/events.js";
import { ManualClock } from "../helpers/manual-clock.js";
import { done, fakeIlinkLab, OWNER, startChannel, text } from "./channel-harness.js";

const lab = fakeIlinkLab();
const until = (what: string, pred: () => boolean | Promise<boolean>) =>
  (async () => {
    const deadline = Date.now() + 5000;
    while (!(await pred())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();

describe("weixin restart", () => {
  it("polls from the stored cursor after a restart: nothing answered twice", async () => {
    const a = await lab.channel({ turns: () => [[text("answer to first"), done]] });
    lab.fake.push(OWNER, "first");
    await until("the answer", () => lab.fake.sent.length === 1);
    await until("the message done", async () => (await a.parley.intake.countUnfinished()) === 0);
    await until(
      "the cursor stored",
      async () => (await a.parley.routes.get("weixin", "#getupdates")) !== undefined,
    );
    await a.running.poller.stop();
    const b = await startChannel(lab.fake, { home: a.home, turns: () => [[text("answered AGAIN"), done]] });
    try {
      await until("b polling", () => b.running.poller.polls > 0);
      await new Promise((r) => setTimeout(r, 400));
      expect(lab.fake.callsTo("getupdates").at(-1)?.body?.get_updates_buf).toBe("buf-1");
      // The opaque cursor's write was followed by the store's durable (fsynced) cursor commit.
      expect(await b.parley.cursors.get("weixin.getupdates")).toBeGreaterThanOrEqual(1);
      expect(b.providers.size).toBe(0);
      expect(lab.fake.visible()).toEqual([expect.stringMatching(/^answer to first/)]);
    } finally {
      await b.stop();
    }
  });

  it("a batch the journal did not take keeps the cursor: iLink delivers it again, deduped", async () => {
    const a = await lab.channel({ turns: () => [[text("once"), done]] });
    // The store's journal fails once: the poll must not move past that message.
    const intake = a.parley.intake as unknown as { accept: (...args: unknown[]) => Promise<unknown> };
    const real = intake.accept.bind(intake);
    let failures = 1;
    intake.accept = (...args: unknown[]) =>
      failures-- > 0 ? Promise.reject(new Error("disk full")) : real(...args);
    lab.fake.push(OWNER, "hello", { messageId: 5 });
    await until("the answer", () => lab.fake.sent.length === 1);
    const bufs = lab.fake.callsTo("getupdates").map((c) => c.body?.get_updates_buf);
    // The poll after the failure asked from the old cursor again.
    expect(bufs.filter((b) => b === "").length).toBeGreaterThanOrEqual(2);
    expect(lab.fake.sent).toHaveLength(1);
    expect(failures).toBe(-1);
    expect(a.logger.entries.some((e) => e.message.includes("could not be journaled"))).toBe(true);
  });

  it("a turn cut short by a kill is answered after the restart: nothing lost, nothing twice", async () => {
    const clock = new ManualClock();
    const a = await lab.channel({
      provider: { timers: clock },
      turns: () => [
        { steps: [text("working on it…"), permissionRequest({ requestId: "r1", title: "slow tool" })] },
      ],
    });
    lab.fake.push(OWNER, "do the thing");
    await until("the prompt", () => lab.fake.visible().some((v) => v.includes("slow tool")));
    expect(await a.parley.intake.countUnfinished()).toBe(1);
    await a.running.poller.stop();

    const b = await startChannel(lab.fake, {
      home: a.home,
      turns: () => [[text("working on it…"), text("\n\nthe real answer"), done]],
    });
    try {
      await until("the resumed answer", () => lab.fake.visible().some((v) => v.includes("the real answer")));
      await until("the message done", async () => (await b.parley.intake.countUnfinished()) === 0);
      expect(lab.fake.visible().filter((v) => v.includes("the real answer"))).toHaveLength(1);
      expect([...b.providers.values()][0]?.prompts).toEqual(["do the thing"]);
      // Every part went out under its ledger key: no client_id was used twice.
      const ids = lab.fake.sent.map((m) => m.clientId);
      expect(new Set(ids).size).toBe(ids.length);
    } finally {
      await b.stop();
    }
  });
});
