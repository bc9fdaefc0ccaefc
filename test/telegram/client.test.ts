/**
 * The client's pacing and 429 handling, through grammY's real client against the fake Bot API. The
 * fake stamps each call with the test's manual clock, so pace is checked on virtual time.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TelegramOps } from "../../src/telegram/wire.js";
import { FakeTelegram } from "../fakes/telegram/server.js";
import { ManualClock, opsFor, until } from "./helpers.js";

let fake: FakeTelegram;
let clock: ManualClock;
let ops: TelegramOps;

beforeEach(async () => {
  clock = new ManualClock();
  fake = await FakeTelegram.start({ now: () => clock.now(), lifetimeMs: 20_000 });
  ops = opsFor(fake, { clock, pace: { privateIntervalMs: 1000, groupIntervalMs: 3000 } });
});

afterEach(async () => {
  await fake.stop();
});

describe("429 retry_after", () => {
  it("waits out retry_after on the clock, then retries the same call", async () => {
    fake.inject("sendMessage", { code: 429, description: "Too Many Requests: retry after 3", retryAfter: 3 });
    const sent = ops.call<{ message_id: number }>("sendMessage", { chat_id: 42, text: "hello" });
    await until(() => fake.callsOf("sendMessage").length === 1 && clock.pending === 1, "the refused call");
    expect(clock.pendingDelays()).toEqual([3000]);
    await clock.advance(2999);
    expect(fake.callsOf("sendMessage")).toHaveLength(1);
    await clock.advance(1);
    const result = await sent;
    const [refused, retried] = fake.callsOf("sendMessage");
    expect(refused?.ok).toBe(false);
    expect(retried?.ok).toBe(true);
    expect((retried?.at ?? 0) - (refused?.at ?? 0)).toBeGreaterThanOrEqual(3000);
    expect(result.message_id).toBeGreaterThan(0);
  });

  it("blocks the whole chat: a call queued behind the refused one waits too", async () => {
    fake.inject("sendMessage", { code: 429, description: "Too Many Requests: retry after 5", retryAfter: 5 });
    const first = ops.call("sendMessage", { chat_id: 42, text: "one" });
    const second = ops.call("sendMessage", { chat_id: 42, text: "two" });
    await until(() => fake.callsOf("sendMessage").length === 1 && clock.pending > 0, "the refused call");
    await clock.advance(4999);
    expect(fake.callsOf("sendMessage")).toHaveLength(1);
    await clock.advance(1);
    await first;
    await until(() => clock.pending > 0, "the next turn");
    await clock.advance(1000);
    await second;
    const times = fake.callsOf("sendMessage").map((c) => c.at);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(5000);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(1000);
  });

  it("gives up past the retry budget and reports the refusal", async () => {
    fake.inject("sendMessage", { code: 429, description: "Too Many Requests", retryAfter: 600 });
    await expect(ops.call("sendMessage", { chat_id: 42, text: "x" })).rejects.toMatchObject({
      error_code: 429,
    });
    expect(fake.callsOf("sendMessage")).toHaveLength(1);
  });
});

describe("a network failure under a call", () => {
  /** A fetch whose connection breaks under the first `n` calls of `method` (the request never answered). */
  function breaking(method: string, n: number): typeof fetch {
    let left = n;
    return async (input, init) => {
      if (String(input).endsWith(`/${method}`) && left > 0) {
        left -= 1;
        throw new TypeError("fetch failed: other side closed");
      }
      return fetch(input, init);
    };
  }

  it("an idempotent call (an edit) is retried, on the clock", async () => {
    const net = opsFor(fake, { clock, fetch: breaking("editMessageText", 1) });
    const sent = await net.call<{ message_id: number }>("sendMessage", { chat_id: 42, text: "draft" });
    const edited = net.call("editMessageText", { chat_id: 42, message_id: sent.message_id, text: "final" });
    await until(() => clock.pending > 0, "the retry wait");
    await clock.advance(250);
    await edited;
    expect(fake.sentMessages(42).map((m) => m.visible)).toEqual(["final"]);
  });

  it("a send is not retried (it may have landed): the failure reaches the caller", async () => {
    const net = opsFor(fake, { clock, fetch: breaking("sendMessage", 1) });
    await expect(net.call("sendMessage", { chat_id: 42, text: "once" })).rejects.toThrow(/sendMessage/);
    expect(fake.callsOf("sendMessage")).toHaveLength(0);
  });
});

describe("per-chat pace", () => {
  async function burst(chatId: number, n: number, gap: number) {
    const calls = Array.from({ length: n }, (_, i) =>
      ops.call("sendMessage", { chat_id: chatId, text: `m${i}` }),
    );
    for (let i = 1; i < n; i += 1) {
      await until(() => fake.callsOf("sendMessage").length === i && clock.pending > 0, `call ${i}`);
      // Nothing more may go before the interval passed.
      await clock.advance(gap - 1);
      expect(fake.callsOf("sendMessage")).toHaveLength(i);
      await clock.advance(1);
    }
    await Promise.all(calls);
    return fake.callsOf("sendMessage").map((c) => c.at);
  }

  it("spaces a private chat's burst by the private interval", async () => {
    const times = await burst(42, 5, 1000);
    for (let i = 1; i < times.length; i += 1) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(1000);
  });

  it("spaces a group's burst by the group interval", async () => {
    const times = await burst(-1001234, 3, 3000);
    for (let i = 1; i < times.length; i += 1) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(3000);
  });

  it("a call's onWire runs when its paced turn comes, just before the request leaves", async () => {
    await ops.call("sendMessage", { chat_id: 42, text: "first" });
    const wired: number[] = [];
    const second = ops.call("sendMessage", { chat_id: 42, text: "second" }, undefined, async () => {
      wired.push(fake.callsOf("sendMessage").length);
    });
    await until(() => clock.pending > 0, "the pacing wait");
    // Still waiting its turn: nothing is "on the wire" yet (a crash now sent nothing).
    expect(wired).toEqual([]);
    await clock.advance(1000);
    await second;
    expect(wired).toEqual([1]);
    expect(fake.callsOf("sendMessage")).toHaveLength(2);
  });

  it("does not pace typing or callback answers", async () => {
    await ops.call("sendMessage", { chat_id: 42, text: "a" });
    await ops.call("sendChatAction", { chat_id: 42, action: "typing" });
    await ops.call("answerCallbackQuery", { callback_query_id: "x" });
    expect(fake.calls.map((c) => c.method)).toEqual(["sendMessage", "sendChatAction", "answerCallbackQuery"]);
  });
});
