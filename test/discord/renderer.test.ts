/**
 * DiscordRenderer over the real REST client and the fake: steer rotation with a lazy quote chip,
 * tables converted into the buffer (a grid too wide for one segment becomes cards), show_thinking as
 * one subtext message, the footer dropped rather than truncated, and the display floor on live
 * frames and seals alike.
 */
import { afterEach, describe, expect, it } from "vitest";
import { DiscordClient } from "../../src/discord/client.js";
import type { DiscordRendererOptions } from "../../src/discord/renderer.js";
import { DiscordRenderer } from "../../src/discord/renderer.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { FakeDiscord } from "../fakes/discord/server.js";
import { DM, FakeTimers, fenceLines } from "./helpers.js";

let fake: FakeDiscord | undefined;
let client: DiscordClient | undefined;
afterEach(async () => {
  await client?.close();
  await fake?.close();
});

async function setup(o: Partial<DiscordRendererOptions> = {}) {
  fake = await new FakeDiscord().start();
  client = new DiscordClient({
    token: fake.token,
    apiBase: fake.apiBase,
    intents: 0,
    logger: new MemoryLogger(),
    onDispatch: () => {},
  });
  const clock = new FakeTimers();
  const renderer = new DiscordRenderer({
    rest: client,
    channelId: DM,
    toggles: { reactionsEnabled: false, showThinking: false },
    audit: new MemoryAuditSink(),
    logger: new MemoryLogger(),
    clock,
    throttleMs: 1000,
    ...o,
  });
  const contents = () => (fake as FakeDiscord).channelMessages(DM).map((m) => m.content);
  return { fake, renderer, clock, contents };
}

/** Let the renderer's queued REST calls reach the fake. */
async function drain(renderer: DiscordRenderer): Promise<void> {
  await (renderer as unknown as { queue: { idle(): Promise<void> } }).queue.idle();
}

describe("discord renderer", () => {
  it("rotates at a steer boundary: the continuation opens with a chip quoting the user's words", async () => {
    const { renderer, contents } = await setup();
    await renderer.onTextChunk("The directory has 3 files.");
    renderer.noteSteer("also check   the weather");
    await renderer.onSteerConsumed("backend echo", "s1");
    await renderer.onTextChunk("Weather is sunny.");
    await renderer.onDone("end_turn");
    await renderer.close();
    expect(contents()).toEqual([
      "The directory has 3 files.",
      expect.stringMatching(/^> ↪️ also check the weather\n\nWeather is sunny\.\n-# Finished in 0s$/),
    ]);
  });

  it("a steer at the very end posts no chip-only message", async () => {
    const { renderer, contents } = await setup();
    await renderer.onTextChunk("Answer already covers it.");
    await renderer.onSteerConsumed("covered", "s1");
    await renderer.onDone("end_turn");
    await renderer.close();
    expect(contents()).toEqual([expect.stringMatching(/^Answer already covers it\.\n-# Finished in 0s$/)]);
  });

  it("holds a growing table off the live frame, then converts it in the buffer", async () => {
    const { renderer, clock, contents } = await setup();
    await renderer.onTextChunk("Results:\n\n| name | score |\n|---|---|\n| ann | 3 |\n");
    clock.advanceSync(1000);
    await drain(renderer);
    // A recognized table is still growing: the frame holds rather than show half of it.
    expect(contents()).toEqual([]);
    await renderer.onTextChunk("| bob | 5 |\n\nThat is all.");
    await renderer.onDone("end_turn");
    await renderer.close();
    const [final] = contents();
    expect(final).not.toContain("|---|");
    expect(final).toContain("bob");
    expect(final).toMatch(/That is all\.\n-# Finished/);
  });

  it("re-renders a grid wider than one segment as cards", async () => {
    const { renderer, contents } = await setup();
    const rows = Array.from({ length: 100 }, (_, i) => `| item${i} | ${"x".repeat(10)} | ok |`).join("\n");
    await renderer.onTextChunk(`| item | value | state |\n|---|---|---|\n${rows}\n\nEnd.`);
    await renderer.onDone("end_turn");
    await renderer.close();
    const all = contents();
    expect(all.length).toBeGreaterThan(1);
    for (const m of all) {
      expect(m).not.toContain("```");
      expect(Array.from(m).length).toBeLessThanOrEqual(2000);
    }
    expect(all.join("\n")).toContain("item99");
  });

  it("show_thinking posts the reasoning once, as subtext, ahead of the answer", async () => {
    const { renderer, clock, contents } = await setup({
      toggles: { reactionsEnabled: false, showThinking: true },
    });
    await renderer.onThinking("First I consider ");
    await renderer.onThinking("the options.\nThen I answer.");
    await renderer.onTextChunk("Answer.");
    clock.advanceSync(1000);
    await drain(renderer);
    await renderer.onThinking("more thoughts later");
    await renderer.onDone("end_turn");
    await renderer.close();
    expect(contents()).toEqual([
      "-# 💭 First I consider the options. Then I answer.",
      expect.stringMatching(/^Answer\.\n-# Finished/),
    ]);
  });

  it("redacts a credential hidden by emphasis on the live frame and on the seal", async () => {
    const { renderer, clock, fake } = await setup();
    await renderer.onTextChunk("key AKIA**IOSFODNN7EXAMPLE** here\n");
    clock.advanceSync(1000);
    await drain(renderer);
    await renderer.onTextChunk("more\n");
    await renderer.onDone("end_turn");
    await renderer.close();
    const sent = fake.calls.filter((c) => /messages/.test(c.path)).map((c) => JSON.stringify(c.body));
    expect(sent.length).toBeGreaterThan(1);
    for (const body of sent) expect(body.replace(/\*/g, "")).not.toContain("AKIAIOSFODNN7EXAMPLE");
  });

  it("a code block longer than a segment arrives balanced in every message", async () => {
    const { renderer, clock, contents } = await setup();
    const code = Array.from({ length: 400 }, (_, i) => `print(${i})`).join("\n");
    const text = `Intro\n\n\`\`\`python\n${code}\n\`\`\`\nOutro`;
    for (const piece of text.match(/[\s\S]{1,50}/g) ?? []) {
      await renderer.onTextChunk(piece);
      clock.advanceSync(1000);
      await drain(renderer);
    }
    await renderer.onDone("end_turn");
    await renderer.close();
    const all = contents();
    expect(all.length).toBeGreaterThan(1);
    for (const m of all) expect(fenceLines(m) % 2, m).toBe(0);
    expect(all.slice(1).every((m) => m.startsWith("```python"))).toBe(true);
  });

  it("a failed turn with nothing delivered says so", async () => {
    const { renderer, contents } = await setup();
    await renderer.close("turn_failed");
    expect(contents()).toEqual([expect.stringMatching(/^⚠️ The agent did not answer/)]);
  });
});
