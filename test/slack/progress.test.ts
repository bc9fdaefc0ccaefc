/**
 * Progress on Slack's surfaces, on a fake clock against the fake Web API: the shared phase ladder
 * as reactions (shortcodes) on the user's message, with its stall mark before the terminal one;
 * reactions off means no reaction call at all; the thread's assistant status while the agent works,
 * cleared at the end.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { TurnParts } from "../../src/messaging/channel/delivery.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { SlackClient } from "../../src/slack/client.js";
import { SlackRenderer } from "../../src/slack/renderer.js";
import { FakeTimers } from "../discord/helpers.js";
import { FakeSlack } from "../fakes/slack/server.js";
import type { Stack } from "./helpers.js";
import { ALICE, DM, done, startStack, text, until, untilFooter } from "./helpers.js";

let fake: FakeSlack | undefined;
let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
  await fake?.close();
  fake = undefined;
});

async function setup(reactionsEnabled: boolean, o: { throttleMs?: number; streaming?: boolean } = {}) {
  fake = await new FakeSlack().start();
  const f = fake;
  const api = new SlackClient({
    token: f.botToken,
    apiUrl: f.apiUrl,
    logger: new MemoryLogger(),
    retry: { retries: 0 },
  });
  const { ts } = f.userMessage({ channel: DM, user: ALICE, text: "do the thing" });
  const clock = new FakeTimers();
  const renderer = new SlackRenderer({
    api,
    channel: DM,
    threadTs: ts,
    userMessageTs: ts,
    parts: TurnParts.unrecorded(),
    logger: new MemoryLogger(),
    audit: new MemoryAuditSink(),
    toggles: { reactionsEnabled, showThinking: false, streaming: o.streaming ?? true },
    clock,
    throttleMs: o.throttleMs ?? 0,
  });
  /** Reaction calls on the user's message, in order: +name / -name. */
  const log = () =>
    f.calls
      .filter((c) => c.method.startsWith("reactions.") && c.args.timestamp === ts)
      .map((c) => `${c.method === "reactions.add" ? "+" : "-"}${String(c.args.name)}`);
  return { f, renderer, clock, ts, log };
}

describe("slack: phase reactions and status", () => {
  it("queued -> thinking -> tool -> done in shortcodes; the status shows while working and is cleared", async () => {
    const { f, renderer, clock, ts, log } = await setup(true);
    await renderer.onTurnStart();
    await vi.waitFor(() => expect(log()).toEqual(["+eyes"]), { timeout: 5000 });
    await renderer.onThinking("hmm");
    clock.advanceSync(700);
    await vi.waitFor(() => expect(log()).toEqual(["+eyes", "-eyes", "+thinking_face"]), { timeout: 5000 });
    expect(f.status.get(ts)).toBeTruthy();
    await renderer.onToolCall("t1", "Running: npm test", "execute", "");
    clock.advanceSync(700);
    await vi.waitFor(() => expect(log().at(-1)).toBe("+computer"), { timeout: 5000 });
    await renderer.onTextChunk("All green.");
    await renderer.onDone("end_turn");
    await renderer.close();
    await vi.waitFor(() => expect(log().at(-1)).toBe("+white_check_mark"), { timeout: 5000 });
    expect([...(f.messages.find((m) => m.ts === ts)?.reactions ?? [])]).toEqual(["white_check_mark"]);
    expect(f.status.get(ts)).toBe("");
  });

  it("a stall mark appears after the soft timeout and goes before the terminal one", async () => {
    const { f, renderer, clock, ts, log } = await setup(true);
    await renderer.onTurnStart();
    await vi.waitFor(() => expect(log()).toEqual(["+eyes"]), { timeout: 5000 });
    clock.advanceSync(15_000);
    await vi.waitFor(() => expect(log()).toEqual(["+eyes", "+hourglass_flowing_sand"]), { timeout: 5000 });
    await renderer.onDone("end_turn");
    await renderer.close();
    await vi.waitFor(() => expect(log().at(-1)).toBe("+white_check_mark"), { timeout: 5000 });
    expect(log()).toContain("-hourglass_flowing_sand");
    expect([...(f.messages.find((m) => m.ts === ts)?.reactions ?? [])]).toEqual(["white_check_mark"]);
  });

  it("reactions off: no reaction call at all, the answer still lands", async () => {
    const { f, renderer, clock, log } = await setup(false);
    await renderer.onTurnStart();
    await renderer.onThinking("hmm");
    clock.advanceSync(20_000);
    await renderer.onTextChunk("Done.");
    await renderer.onDone("end_turn");
    await renderer.close();
    expect(log()).toEqual([]);
    expect(f.botMessages(DM).some((m) => f.visible(m).startsWith("Done."))).toBe(true);
  });
});

describe("slack: the throttle", () => {
  it.each([
    ["edited", false, "chat.update"],
    ["streamed", true, "chat.appendStream"],
  ] as const)(
    "%s: a burst of text within the interval costs one frame, the next one the next",
    async (_n, streaming, method) => {
      const { f, renderer, clock } = await setup(false, { throttleMs: 1000, streaming });
      await renderer.onTurnStart();
      clock.advanceSync(1000);
      await vi.waitFor(() => expect(f.botMessages(DM).length).toBe(streaming ? 0 : 1), { timeout: 5000 });
      const frames = () => f.callsTo(method).length + f.callsTo("chat.startStream").length;
      const before = frames();
      for (let i = 0; i < 10; i++) await renderer.onTextChunk(`line ${i}\n`);
      // Nothing before the interval is over.
      expect(frames()).toBe(before);
      clock.advanceSync(1000);
      await vi.waitFor(() => expect(frames()).toBe(before + 1), { timeout: 5000 });
      for (let i = 10; i < 20; i++) await renderer.onTextChunk(`line ${i}\n`);
      clock.advanceSync(999);
      await new Promise((r) => setTimeout(r, 50));
      expect(frames()).toBe(before + 1);
      clock.advanceSync(1);
      await vi.waitFor(() => expect(frames()).toBe(before + 2), { timeout: 5000 });
      await renderer.onDone("end_turn");
      await renderer.close();
      // The whole answer landed in one message, live message and answer alike.
      const answer = f.botMessages(DM).filter((m) => f.visible(m).includes("line 0"));
      expect(answer).toHaveLength(1);
      expect(f.visible(answer[0] as (typeof answer)[number])).toContain("line 19");
    },
  );
});

describe("slack: the auto-title", () => {
  it("names the thread after the first good exchange, redacted in the form Slack shows", async () => {
    const key = "AKIAQ7ZR3M5TXW2KP9VB";
    stack = await startStack({
      turns: [[text("The deploy failed because the cache key changed; clear it and rerun."), done]],
      titles: async () => `Deploy fix ${key}`,
    });
    const f = stack.fake;
    const { ts } = f.userMessage({ channel: DM, user: ALICE, text: "why did the deploy fail last night?" });
    await untilFooter(f, DM);
    await until(() => f.titles.has(ts), "the thread title");
    const title = f.titles.get(ts) ?? "";
    expect(title).toMatch(/^Deploy fix/);
    expect(title).not.toContain(key);
  });
});
