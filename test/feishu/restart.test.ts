/**
 * Restarts against the fake, with the real store: an event is journaled before the SDK acknowledges
 * it, so a redelivery (an acknowledgement lost, a process killed before its ack left) is dropped by
 * the journal and answered once; a turn cut short by a kill is answered after the restart, editing
 * what its first run posted instead of posting again; and a part whose request left but whose
 * answer never came is sent again with the same uuid, which Feishu answers with the same message.
 * A process "dies" here by losing its long connection without settling anything.
 */
import { describe, expect, it } from "vitest";
import { ManualClock } from "../helpers/manual-clock.js";
import { dmChat, done, fakeFeishuLab, OWNER, shown, startChannel, text } from "./channel-harness.js";

const lab = fakeFeishuLab({ ackTimeoutMs: 60_000 });

const until = (what: string, pred: () => boolean | Promise<boolean>) =>
  (async () => {
    const deadline = Date.now() + 5000;
    while (!(await pred())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();

describe("restart", () => {
  it("a redelivered event is answered once (the ack was lost on the way)", async () => {
    const c = await lab.connected({ turns: () => [[text("answer to first"), done]] });
    lab.fake.ws.loseAcks(1);
    const { event } = lab.fake.pushMessage(OWNER, "first");
    await until("the answer", () => shown(lab.fake).length === 1);
    // The platform heard nothing: it delivers the event again, on a connection that comes back.
    lab.fake.ws.dropAll();
    await until("the redelivery acknowledged", () => event.acked);
    expect(event.deliveries).toBe(2);
    expect(c.audit.find("intake", "dropped").map((r) => r.fields.reason)).toEqual(["redelivered"]);
    expect(shown(lab.fake)).toHaveLength(1);
  });

  it("a redelivered event is answered once across a kill and a restart", async () => {
    const a = await lab.connected({ turns: () => [[text("answer to first"), done]] });
    lab.fake.ws.loseAcks(1);
    const { event } = lab.fake.pushMessage(OWNER, "first");
    await until("the answer", () => shown(lab.fake).length === 1);
    await until("the message done", async () => (await a.parley.intake.countUnfinished()) === 0);
    a.running.connection.close();

    const b = await startChannel(lab.fake, { home: a.home, turns: () => [[text("answered AGAIN"), done]] });
    try {
      await until("the redelivery acknowledged", () => event.acked);
      expect(b.audit.find("intake", "dropped").map((r) => r.fields.reason)).toEqual(["redelivered"]);
      expect(b.providers.size).toBe(0);
      expect(shown(lab.fake)).toEqual([expect.stringMatching(/^answer to first/)]);
    } finally {
      await b.stop();
    }
  });

  it("a turn cut short by a kill is answered after the restart: nothing lost, nothing twice", async () => {
    const clock = new ManualClock();
    const a = await lab.connected({
      provider: { timers: clock },
      turns: () => [
        {
          steps: [
            text("working on it…"),
            {
              type: "permission_request",
              requestId: "r1",
              toolCallId: "t1",
              title: "slow tool",
              kind: "execute",
              options: [{ optionId: "a", name: "Allow", kind: "allow_once" }],
            },
          ],
        },
      ],
    });
    const { messageId } = lab.fake.pushMessage(OWNER, "do the thing");
    await until("the turn waiting on a prompt", () => shown(lab.fake).some((v) => v.includes("slow tool")));
    expect(await a.parley.intake.countUnfinished()).toBe(1);
    const before = lab.fake.botMessages().length;
    a.running.connection.close();

    const b = await startChannel(lab.fake, { home: a.home, turns: () => [[text("the real answer"), done]] });
    try {
      await until("the resumed answer", () => shown(lab.fake).some((v) => v.startsWith("the real answer")));
      await until("the message done", async () => (await b.parley.intake.countUnfinished()) === 0);
      // The answer took the place of what the first run had posted as its first part: no new message.
      expect(lab.fake.botMessages()).toHaveLength(before);
      expect(shown(lab.fake).filter((v) => v.includes("working on it"))).toEqual([]);
      expect(shown(lab.fake).filter((v) => v.startsWith("the real answer"))).toHaveLength(1);
      expect(lab.fake.callsTo(/^PUT /)).toHaveLength(1);
      expect(lab.fake.botMessages().every((m) => m.parentId === messageId)).toBe(true);
      expect([...b.providers.values()][0]?.prompts).toEqual(["do the thing"]);
    } finally {
      await b.stop();
    }
  });

  it("a part whose request left but whose answer never came is not posted twice (same uuid)", async () => {
    const a = await lab.connected({ turns: () => [[text("exactly once"), done]] });
    // Feishu creates the message, and the process dies before the answer reaches it.
    lab.fake.inject("reply", { status: 0, code: 0, msg: "" });
    lab.fake.pushMessage(OWNER, "hello");
    await until("the message created", () => lab.fake.botMessages().length === 1);
    a.running.connection.close();

    const b = await startChannel(lab.fake, { home: a.home, turns: () => [[text("exactly once"), done]] });
    try {
      await until("the message done", async () => (await b.parley.intake.countUnfinished()) === 0);
      expect(b.audit.find("delivery", "sent").map((r) => r.fields.reason)).toEqual(["ambiguous_resend"]);
      const replies = lab.fake.callsTo(/reply$/);
      expect(replies).toHaveLength(2);
      expect(replies[0]?.body?.uuid).toBe(replies[1]?.body?.uuid);
      expect(lab.fake.botMessages()).toHaveLength(1);
    } finally {
      lab.fake.dropStalled();
      await b.stop();
    }
  });

  it("a data home started empty does not reuse an earlier home's uuids (its answers still land)", async () => {
    const a = await lab.connected({ turns: () => [[text("from the first home"), done]] });
    lab.fake.pushMessage(OWNER, "one");
    await until("the first answer", () => shown(lab.fake).length === 1);
    await a.stop();
    await lab.connected({ turns: () => [[text("from the second home"), done]] });
    lab.fake.pushMessage(OWNER, "two");
    await until("the second answer", () => shown(lab.fake, dmChat(OWNER)).length === 2);
    expect(shown(lab.fake)[1]).toMatch(/^from the second home/);
  });
});
