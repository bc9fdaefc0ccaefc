/**
 * The device socket's reconnect guard, on injected timers (no real waiting): a WDM outage is met
 * with a doubling wait capped at a minute and the channel recovers; a peer that accepts and closes
 * at once stays on the curve (the minimum-healthy guard); a connection that lived past
 * minHealthyMs reconnects at once.
 */
import { describe, expect, it } from "vitest";
import { shown } from "../conformance/webex.harness.js";
import { ManualClock } from "../helpers/manual-clock.js";
import type { WebexOptions } from "./harness.js";
import { ALICE, DM, done, text, until, webexLab } from "./harness.js";

const lab = webexLab();
const channel = (o?: WebexOptions) => lab.channel(o);
const everything = () => lab.fake.botMessages().flatMap(shown);
const registrations = () => lab.fake.callsTo("POST", /^\/wdm\/devices$/);

/** Wait for the one armed reconnect timer, check its delay, and let it fire. */
async function nextAttempt(clock: ManualClock, expectedMs: number): Promise<void> {
  await until(() => clock.pending === 1, `a reconnect armed (${expectedMs} ms)`);
  expect(clock.pendingDelays()).toEqual([expectedMs]);
  await clock.advance(expectedMs);
}

describe("webex reconnect guard", () => {
  it("a WDM outage: the wait doubles from 1 s, is capped at 60 s, and the channel recovers", async () => {
    const clock = new ManualClock();
    const c = await channel({ turns: [[text("back again"), done]], clock });
    lab.fake.failDeviceRegistrations(8);
    lab.fake.dropSockets();
    for (const ms of [1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000]) {
      const before = registrations().length;
      await nextAttempt(clock, ms);
      // Each armed attempt is exactly one registration, refused by the outage.
      await until(() => registrations().length === before + 1, "the attempt");
    }
    // The ninth attempt, still a minute out, finds WDM back.
    await nextAttempt(clock, 60_000);
    await until(() => registrations().at(-1)?.status === 200, "a registration");
    expect(registrations().filter((r) => r.status === 503)).toHaveLength(8);
    expect(c.logger.entries.filter((e) => e.message === "webex: reconnect failed")).toHaveLength(8);
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "hello?" });
    await until(() => everything().some((v) => v.includes("back again")), "the answer");
    // Nothing else is armed: a working connection leaves no retry behind.
    expect(clock.pending).toBe(0);
  });

  it("accept-then-close stays on the curve; a connection that lived minHealthyMs resets it", async () => {
    const clock = new ManualClock();
    await channel({ clock, overrides: { client: { minHealthyMs: 30_000 } } });
    lab.fake.closeSocketsAfterAuth(2);
    lab.fake.dropSockets();
    // Opened and closed at once, twice: each counts as a failure, never as a healthy reset.
    await nextAttempt(clock, 1000);
    await nextAttempt(clock, 2000);
    await nextAttempt(clock, 4000);
    await until(() => registrations().length === 4 && lab.fake.liveSockets === 1, "the fourth connection up");
    // This one stays up past the guard's minimum, then drops: the next attempt is immediate.
    await clock.advance(30_000);
    lab.fake.dropSockets();
    await nextAttempt(clock, 0);
    await until(() => registrations().length === 5, "the immediate reconnect");
  });
});
