/**
 * `-14` (session expired) in a 200 body: polling and sending pause for weixin.sessionPauseMinutes,
 * the channel shows unhealthy ("relink may be needed", recorded for doctor), nothing hot-loops, and
 * after the pause ONE poll goes out (no burst) and the channel is healthy again.
 */
import { describe, expect, it } from "vitest";
import { SessionPausedError } from "../../src/weixin/errors.js";
import { clearHealth, readHealth } from "../../src/weixin/home.js";
import { ManualClock, settle } from "../helpers/manual-clock.js";
import { done, fakeIlinkLab, OWNER, text } from "./channel-harness.js";

const lab = fakeIlinkLab({ holdMs: 100 });

async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
    await settle();
  }
}

describe("weixin -14 pause", () => {
  it("pauses polling and sending, shows unhealthy, resumes after the pause without a burst", async () => {
    const clock = new ManualClock(Date.now());
    const c = await lab.channel({
      clock,
      weixin: { sessionPauseMinutes: 60 },
      turns: () => [[text("hi"), done]],
    });
    lab.fake.push(OWNER, "hello");
    await until(() => lab.fake.sent.length === 1, "the first answer");
    lab.fake.inject("getupdates", -14);
    await until(() => c.running.pause.remainingMs() > 0, "the pause");
    const pollsAtPause = lab.fake.callsTo("getupdates").length;

    expect(c.running.health()).toEqual({
      healthy: false,
      reason: expect.stringContaining("relink may be needed"),
    });
    expect(readHealth(c.home)?.pausedUntil).toBe(clock.now() + 60 * 60_000);
    expect(c.audit.records.some((r) => r.operation === "weixin.session" && r.outcome === "expired")).toBe(
      true,
    );

    // Sending is paused too: refused locally, nothing reaches iLink.
    await expect(c.running.transport.sendMessage(OWNER, "proactive")).rejects.toBeInstanceOf(
      SessionPausedError,
    );
    // Real time passes; the loop sleeps on the (manual) clock: no poll, no hot loop.
    await new Promise((r) => setTimeout(r, 300));
    expect(lab.fake.callsTo("getupdates").length).toBe(pollsAtPause);
    expect(lab.fake.sent).toHaveLength(1);

    await clock.advance(59 * 60_000);
    await new Promise((r) => setTimeout(r, 100));
    expect(lab.fake.callsTo("getupdates").length).toBe(pollsAtPause);

    await clock.advance(60_000);
    await until(() => lab.fake.callsTo("getupdates").length > pollsAtPause, "the first poll after the pause");
    // One poll, held by the server: not a burst of retries.
    await new Promise((r) => setTimeout(r, 50));
    expect(lab.fake.callsTo("getupdates").length).toBe(pollsAtPause + 1);
    await until(() => c.running.health().healthy, "healthy again");
    expect(readHealth(c.home)?.pausedUntil).toBe(0);
    await c.running.transport.sendMessage(OWNER, "back");
    expect(lab.fake.visible().at(-1)).toBe("back");
  });

  it("a -14 on a send pauses the poll as well", async () => {
    const clock = new ManualClock(Date.now());
    const c = await lab.channel({ clock, turns: () => [[text("a"), done]] });
    lab.fake.push(OWNER, "hello");
    await until(() => lab.fake.sent.length === 1, "the first answer");
    lab.fake.inject("sendmessage", -14);
    await expect(c.running.transport.sendMessage(OWNER, "x")).rejects.toThrow(/-14/);
    const polls = lab.fake.callsTo("getupdates").length;
    await new Promise((r) => setTimeout(r, 400));
    // At most the poll already in flight finishes; none starts while paused.
    expect(lab.fake.callsTo("getupdates").length).toBeLessThanOrEqual(polls + 1);
    expect(c.running.health().healthy).toBe(false);
  });

  it("a restart inside a pause keeps it; a relink clears it", async () => {
    const clock = new ManualClock(Date.now());
    const a = await lab.channel({ clock, turns: () => [] });
    lab.fake.inject("getupdates", -14);
    await until(() => a.running.pause.remainingMs() > 0, "the pause");
    await a.stop();
    const polls = lab.fake.callsTo("getupdates").length;
    const b = await lab.channel({ clock, home: a.home, turns: () => [] });
    await new Promise((r) => setTimeout(r, 300));
    expect(b.running.pause.remainingMs()).toBeGreaterThan(0);
    expect(lab.fake.callsTo("getupdates").length).toBe(polls);
    await b.stop();
    clearHealth(a.home);
    const c = await lab.channel({ clock, home: a.home, turns: () => [] });
    await until(() => lab.fake.callsTo("getupdates").length > polls, "polling after the relink");
    expect(c.running.pause.remainingMs()).toBe(0);
  });

  it("other errors back off exponentially (1 s, 2 s, 4 s): no hot loop, healthy again after a success", async () => {
    const clock = new ManualClock(Date.now());
    const c = await lab.channel({ clock, turns: () => [] });
    await until(() => lab.fake.callsTo("getupdates").length >= 1, "the first poll");
    lab.fake.inject("getupdates", 5000, 3);
    const failed = () => lab.fake.callsTo("getupdates").filter((x) => x.code === 5000).length;
    await until(() => failed() === 1, "the first failure");
    // The fake records the call before the client has read the error body: wait for the client.
    await until(() => !c.running.health().healthy, "the failure seen by the client");
    expect(c.running.health()).toEqual({
      healthy: false,
      reason: expect.stringContaining("iLink error 5000"),
    });
    for (const [gap, expected] of [
      [1000, 2],
      [2000, 3],
    ] as const) {
      await new Promise((r) => setTimeout(r, 100));
      expect(failed()).toBe(expected - 1);
      await clock.advance(gap - 1);
      expect(failed()).toBe(expected - 1);
      await clock.advance(1);
      await until(() => failed() === expected, `failure ${expected}`);
    }
    await clock.advance(4000);
    await until(() => c.running.health().healthy, "healthy again");
  });
});
