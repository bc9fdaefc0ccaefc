/**
 * Socket Mode through Bolt's receiver against the fake: apps.connections.open goes to slack.apiUrl
 * with the app token (the receiver is given the origin explicitly: its own options have none); a
 * `disconnect` from Slack reconnects and intake goes on; a peer that accepts and then closes at once
 * is dialled on a growing backoff (the minimum-healthy guard), not at the SDK's fixed interval.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Stack } from "./helpers.js";
import { ALICE, DM, done, startStack, text, until, untilFooter } from "./helpers.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe("slack socket mode", () => {
  it("opens its connection through the configured origin, with the app token only there", async () => {
    stack = await startStack({ turns: [[text("hi"), done]] });
    const opens = stack.fake.callsTo("apps.connections.open");
    expect(opens.map((c) => c.token)).toEqual([stack.fake.appToken]);
    // Every other call carries the bot token, to the same origin.
    expect(
      stack.fake.calls
        .filter((c) => c.method !== "apps.connections.open")
        .every((c) => c.token === stack?.fake.botToken),
    ).toBe(true);
    expect(stack.running.receiver.connected).toBe(true);
  });

  it("reconnects when Slack sends disconnect, and keeps answering", async () => {
    stack = await startStack({
      turns: [
        [text("before"), done],
        [text("after"), done],
      ],
    });
    const f = stack.fake;
    f.userMessage({ channel: DM, user: ALICE, text: "one" });
    await untilFooter(f, DM);
    f.delivery.disconnect("refresh_requested");
    await until(() => f.delivery.connections === 2 && f.delivery.openSockets === 1, "the second connection");
    expect(f.callsTo("apps.connections.open")).toHaveLength(2);
    f.userMessage({ channel: DM, user: ALICE, text: "two" });
    await untilFooter(f, DM, 2);
  });

  it("backs off a peer that accepts and closes at once, instead of dialling at a fixed rate", async () => {
    stack = await startStack({
      turns: [[text("finally"), done]],
      overrides: { reconnect: { baseMs: 80, maxMs: 2_000, minHealthyMs: 60_000 } },
    });
    const f = stack.fake;
    const dialled: number[] = [];
    f.delivery.onConnect = (close) => {
      dialled.push(Date.now());
      if (dialled.length < 5) close();
    };
    f.delivery.disconnect("refresh_requested");
    await until(() => dialled.length >= 5, "five dials", 15_000);
    // The guard's own schedule: each immediate close doubles the wait.
    const backoffs = stack.logger.entries
      .filter((x) => x.message === "slack socket reconnect backoff")
      .map((x) => x.fields?.ms);
    expect(backoffs.slice(0, 4)).toEqual([80, 160, 320, 640]);
    const gaps = dialled.slice(1).map((t, i) => t - (dialled[i] as number));
    // 80, 160, 320 ms apart at least: each immediate close doubles the wait.
    expect(gaps[0]).toBeGreaterThanOrEqual(140);
    expect(gaps[1]).toBeGreaterThanOrEqual(300);
    expect(gaps[2]).toBeGreaterThanOrEqual(600);
    f.userMessage({ channel: DM, user: ALICE, text: "still there?" });
    await untilFooter(f, DM);
  });
});
