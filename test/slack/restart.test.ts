/**
 * Kill mid-turn and restart, with the real store: the process "dies" (its connection closes, its
 * open turn is abandoned, never settled), a new one on the same data home answers the message it
 * had journaled, on the messages the first run posted (no duplicate answer, nothing lost), and an
 * envelope Slack delivers again to the new process is acknowledged and answered nowhere. What the
 * first run posted beyond the new answer (its prompt) is deleted, never left looking live.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FakeSlack } from "../fakes/slack/server.js";
import { permissionRequest } from "../helpers/events.js";
import type { Stack } from "./helpers.js";
import { ALICE, DM, done, settled, shown, startStack, text, until, untilFooter } from "./helpers.js";

const stacks: Stack[] = [];
let fake: FakeSlack | undefined;
afterEach(async () => {
  // The new process first: the dead one's late shutdown must not disturb it.
  for (const s of stacks.splice(0).reverse()) await s.close();
  await fake?.close();
  fake = undefined;
});

/** The process dies: no more deliveries, and its turns are left exactly where they were. */
async function crash(s: Stack): Promise<void> {
  await s.running.receiver.stop();
}

describe.each(["socket", "http"] as const)("restart (%s)", (mode) => {
  it("a turn killed mid-answer is answered once after the restart, on what the first run posted", async () => {
    fake = await new FakeSlack().start();
    const home = mkdtempSync(join(tmpdir(), "parley-slack-kill-"));
    const first = await startStack({
      mode,
      fake,
      home,
      // Streams a first paragraph, then waits on a prompt nobody answers: the kill lands mid-turn.
      turns: [{ steps: [text("working on it…\n\n"), permissionRequest({ title: "slow tool" })] }],
    });
    stacks.push(first);
    const { ts: thread, deliveries } = fake.userMessage({ channel: DM, user: ALICE, text: "go" });
    await until(
      () => shown(fake as FakeSlack, DM, thread).some((t) => t.includes("slow tool")),
      "the prompt",
    );
    await until(
      () => shown(fake as FakeSlack, DM, thread).some((t) => t.includes("working on it")),
      "the text",
    );
    expect(await first.parley.intake.countUnfinished()).toBe(1);
    const posted = fake.botMessages(DM).map((m) => m.ts);
    await crash(first);

    const second = await startStack({ mode, fake, home, turns: [[text("the one answer"), done]] });
    stacks.push(second);
    await untilFooter(fake, DM);
    await until(async () => (await second.parley.intake.countUnfinished()) === 0, "the message done");
    // Slack also delivers the event again (the first process's ack may never have reached it).
    const d = deliveries[0];
    if (!d) throw new Error("no delivery");
    d.acked = false;
    fake.delivery.redeliver(d);
    await fake.delivery.acked(d);
    await settled(second);

    expect(second.startedKeys).toHaveLength(1);
    expect(second.audit.find("intake", "dropped").map((r) => r.fields.reason)).toEqual(["redelivered"]);
    const seen = shown(fake, DM, thread);
    expect(seen.filter((t) => t.includes("the one answer"))).toHaveLength(1);
    // The answer took the place of what the first run had streamed: no second copy, no leftover;
    // the first run's prompt, which this run never asked, is gone rather than left looking live.
    expect(seen.some((t) => t.includes("working on it"))).toBe(false);
    expect(seen.some((t) => t.includes("slow tool"))).toBe(false);
    expect(fake.botMessages(DM).map((m) => m.ts)).toEqual([posted[0]]);
    expect(fake.callsTo("chat.delete").map((c) => c.args.ts)).toEqual(posted.slice(1));
  });

  it("a first-run message Slack will not edit is deleted, and the answer posted once", async () => {
    fake = await new FakeSlack().start();
    const home = mkdtempSync(join(tmpdir(), "parley-slack-kill-"));
    const first = await startStack({
      mode,
      fake,
      home,
      turns: [{ steps: [text("half an answer…\n\n"), permissionRequest({ title: "slow tool" })] }],
    });
    stacks.push(first);
    const { ts: thread } = fake.userMessage({ channel: DM, user: ALICE, text: "go" });
    await until(
      () => shown(fake as FakeSlack, DM, thread).some((t) => t.includes("slow tool")),
      "the prompt",
    );
    await crash(first);
    // The resumed turn's edit of the first run's message is refused.
    fake.failNext("chat.update", { error: "cant_update_message" });
    const second = await startStack({ mode, fake, home, turns: [[text("the whole answer"), done]] });
    stacks.push(second);
    await untilFooter(fake, DM);
    await settled(second);
    const seen = shown(fake, DM, thread);
    expect(seen.filter((t) => t.includes("the whole answer"))).toHaveLength(1);
    expect(seen.some((t) => t.includes("half an answer") || t.includes("slow tool"))).toBe(false);
    expect(fake.botMessages(DM)).toHaveLength(1);
  });

  it("an event answered before the kill and delivered again after it is not answered twice", async () => {
    fake = await new FakeSlack().start();
    const home = mkdtempSync(join(tmpdir(), "parley-slack-kill-"));
    const first = await startStack({ mode, fake, home, turns: [[text("answered before"), done]] });
    stacks.push(first);
    const { ts: thread, deliveries } = fake.userMessage({ channel: DM, user: ALICE, text: "hello" });
    await untilFooter(fake, DM);
    await until(async () => (await first.parley.intake.countUnfinished()) === 0, "the message done");
    await crash(first);

    const second = await startStack({ mode, fake, home, turns: [[text("answered AGAIN"), done]] });
    stacks.push(second);
    const d = deliveries[0];
    if (!d) throw new Error("no delivery");
    d.acked = false;
    fake.delivery.redeliver(d);
    await fake.delivery.acked(d);
    await settled(second);
    expect(second.audit.find("intake", "dropped").map((r) => r.fields.reason)).toEqual(["redelivered"]);
    expect(second.startedKeys).toEqual([]);
    const seen = shown(fake, DM, thread).join("\n");
    expect(seen).toContain("answered before");
    expect(seen).not.toContain("AGAIN");
  });
});
