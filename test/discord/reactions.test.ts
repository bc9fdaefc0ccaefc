/**
 * The phase-reaction ladder on the user's message, on a fake clock: queued lands at once, then
 * thinking and tool phases are debounced (a tool burst costs one swap), and done ends it. Reactions
 * off (the live toggle) means no reaction call at all.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { DiscordClient } from "../../src/discord/client.js";
import { DiscordRenderer } from "../../src/discord/renderer.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { FakeDiscord } from "../fakes/discord/server.js";
import { ALICE, DM, FakeTimers } from "./helpers.js";

let fake: FakeDiscord | undefined;
let client: DiscordClient | undefined;
afterEach(async () => {
  await client?.close();
  await fake?.close();
});

async function setup(reactionsEnabled: boolean) {
  fake = await new FakeDiscord().start();
  client = new DiscordClient({
    token: fake.token,
    apiBase: fake.apiBase,
    intents: 0,
    logger: new MemoryLogger(),
    onDispatch: () => {},
  });
  const userMessageId = fake.userMessage({ channelId: DM, userId: ALICE, content: "do the thing" });
  const clock = new FakeTimers();
  const renderer = new DiscordRenderer({
    rest: client,
    channelId: DM,
    userMessageId,
    toggles: { reactionsEnabled, showThinking: false },
    audit: new MemoryAuditSink(),
    logger: new MemoryLogger(),
    clock,
  });
  return { fake, renderer, clock, userMessageId };
}

describe("discord: phase reactions", () => {
  it("queued -> thinking -> tool -> done, with the debounce swallowing a tool burst", async () => {
    const { fake, renderer, clock, userMessageId } = await setup(true);
    const log = () => fake.reactionLog.filter(([id]) => id === userMessageId).map(([, op, e]) => `${op}${e}`);
    await renderer.onTurnStart();
    await vi.waitFor(() => expect(log()).toEqual(["+👀"]), { timeout: 5000 });

    await renderer.onThinking("hmm");
    clock.advanceSync(300);
    expect(log()).toEqual(["+👀"]); // still inside the debounce window
    clock.advanceSync(400);
    await vi.waitFor(() => expect(log()).toEqual(["+👀", "-👀", "+🤔"]), { timeout: 5000 });

    // A coding tool immediately followed by a generic one: only the phase that holds still lands.
    await renderer.onToolCall("t1", "Running: ls", "execute", "");
    clock.advanceSync(200);
    await renderer.onToolCall("t2", "fetch_weather", "other", "");
    clock.advanceSync(700);
    await vi.waitFor(() => expect(log()).toEqual(["+👀", "-👀", "+🤔", "-🤔", "+🔧"]), { timeout: 5000 });

    await renderer.onDone("end_turn");
    await renderer.close();
    expect(log()).toEqual(["+👀", "-👀", "+🤔", "-🤔", "+🔧", "-🔧", "+✅"]);
  });

  it("a stall mark appears after the soft timeout and goes before the terminal emoji", async () => {
    const { fake, renderer, clock, userMessageId } = await setup(true);
    const log = () => fake.reactionLog.filter(([id]) => id === userMessageId).map(([, op, e]) => `${op}${e}`);
    await renderer.onTurnStart();
    await vi.waitFor(() => expect(log()).toEqual(["+👀"]), { timeout: 5000 });
    clock.advanceSync(15_000);
    await vi.waitFor(() => expect(log()).toEqual(["+👀", "+⏳"]), { timeout: 5000 });
    await renderer.onDone("end_turn");
    await renderer.close();
    expect(log()).toEqual(["+👀", "+⏳", "-⏳", "-👀", "+✅"]);
  });

  it("reactions off: the ladder is never armed", async () => {
    const { fake, renderer, clock } = await setup(false);
    await renderer.onTurnStart();
    await renderer.onThinking("x");
    await renderer.onToolCall("t", "ls", "execute", "");
    clock.advanceSync(60_000);
    await renderer.onDone("end_turn");
    await renderer.close();
    expect(fake.reactionLog).toEqual([]);
  });
});
