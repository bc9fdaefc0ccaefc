/**
 * Slack's deliveries and the Web API's rate limits: an envelope Slack delivers again (Socket Mode's
 * retry_attempt, the Events API's X-Slack-Retry-Num) is acknowledged and answered once; an event is
 * acknowledged only after it was journaled; a 429 on chat.update or chat.appendStream is waited out
 * (nothing is sent before its Retry-After, and the answer still lands whole).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Stack } from "./helpers.js";
import { ALICE, DM, done, settled, shown, startStack, text, until, untilFooter } from "./helpers.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe.each(["socket", "http"] as const)("redelivery (%s)", (mode) => {
  it("a delivery Slack sends again is acknowledged and answered once", async () => {
    stack = await startStack({
      mode,
      turns: [
        [text("the one answer"), done],
        [text("a second answer"), done],
      ],
    });
    const f = stack.fake;
    const { ts, deliveries } = f.userMessage({ channel: DM, user: ALICE, text: "hello" });
    const d = deliveries[0];
    if (!d) throw new Error("no delivery");
    await f.delivery.acked(d);
    await untilFooter(f, DM);
    d.acked = false;
    f.delivery.redeliver(d);
    await f.delivery.acked(d);
    await settled(stack);
    expect(d.attempts).toBe(2);
    expect(stack.audit.find("intake", "dropped").map((r) => r.fields.reason)).toEqual(["redelivered"]);
    expect(stack.startedKeys).toHaveLength(1);
    expect(shown(f, DM, ts).filter((t) => t.includes("answer"))).toEqual([
      expect.stringMatching(/^the one answer/),
    ]);
  });
});

describe.each(["socket", "http"] as const)("accept before ack (%s)", (mode) => {
  it("acknowledges an event only once the journal has it", async () => {
    stack = await startStack({ mode, turns: [[text("answered"), done]] });
    const s = stack;
    const journaledAtAck: Promise<string>[] = [];
    s.fake.delivery.onAck = (d) => {
      const eventId = String(d.payload.event_id ?? "");
      // At the moment the acknowledgement arrives, the journal already holds the event.
      journaledAtAck.push(
        s.parley.intake
          .accept({
            channel: "slack",
            platformMessageId: `event:${eventId}`,
            conversationKey: "x",
            payload: null,
            receivedAtMs: 0,
          })
          .then((r) => r.kind),
      );
    };
    s.fake.userMessage({ channel: DM, user: ALICE, text: "journal me" });
    await untilFooter(s.fake, DM);
    expect(await Promise.all(journaledAtAck)).toEqual(["duplicate"]);
  });

  it("leaves an event the journal could not take unacknowledged, so Slack delivers it again", async () => {
    stack = await startStack({ mode, turns: [[text("answered after the retry"), done]] });
    const s = stack;
    s.fake.delivery.ackTimeoutMs = 300;
    const intake = s.parley.intake;
    const accept = intake.accept.bind(intake);
    let failures = 1;
    intake.accept = (message) => (failures-- > 0 ? Promise.reject(new Error("disk full")) : accept(message));
    const { ts, deliveries } = s.fake.userMessage({ channel: DM, user: ALICE, text: "try me" });
    await untilFooter(s.fake, DM);
    const d = deliveries[0];
    expect(d?.attempts).toBe(2);
    if (mode === "http") expect(d?.statuses[0]).not.toBe(200);
    expect(shown(s.fake, DM, ts).filter((t) => t.includes("answered"))).toHaveLength(1);
  });
});

describe("rate limits", () => {
  it("waits out a 429 on chat.appendStream and still streams the whole answer", async () => {
    stack = await startStack({
      turns: [[text("First line.\n"), text("Second line.\n"), text("Third line.\n"), done]],
    });
    const f = stack.fake;
    f.failNext("chat.appendStream", { retryAfterSec: 1 });
    const { ts } = f.userMessage({ channel: DM, user: ALICE, text: "go" });
    await untilFooter(f, DM);
    await settled(stack);
    const appends = f.callsTo("chat.appendStream");
    expect(appends[0]?.status).toBe(429);
    expect(appends[1]?.status).toBe(200);
    expect((appends[1]?.at ?? 0) - (appends[0]?.at ?? 0)).toBeGreaterThanOrEqual(950);
    expect(f.violations).toEqual([]);
    expect(shown(f, DM, ts)[0]).toMatch(/^First line\.\nSecond line\.\nThird line\./);
  });

  it("waits out a 429 on chat.update and the edited answer still lands", async () => {
    stack = await startStack({
      slack: { streaming: false },
      overrides: { throttleMs: 0 },
      turns: [[text("Working on it.\n"), { delayMs: 30 }, text("Done now."), done]],
    });
    const f = stack.fake;
    f.failNext("chat.update", { retryAfterSec: 1 });
    const { ts } = f.userMessage({ channel: DM, user: ALICE, text: "go" });
    await untilFooter(f, DM);
    await settled(stack);
    const updates = f.callsTo("chat.update");
    expect(updates[0]?.status).toBe(429);
    expect(updates.some((c) => c.status === 200)).toBe(true);
    expect(f.violations).toEqual([]);
    expect(shown(f, DM, ts)[0]).toMatch(/^Working on it\.\nDone now\./);
    await until(() => f.botMessages(DM).length === 1, "one message, edited");
  });
});
