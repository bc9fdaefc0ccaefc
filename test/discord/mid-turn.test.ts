/**
 * A message that arrives mid-turn: steered into the live turn (a 📥 reaction on it, and the
 * continuation opens with a chip quoting it), or queued behind one receipt that flips to
 * "Now answering" when the held burst runs as ONE turn. !stop cancels and drops the queue.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Stack } from "./helpers.js";
import { ALICE, DM, startStack, untilFooter } from "./helpers.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const slowTurn = [
  { type: "text" as const, text: "Working on the first thing." },
  { delayMs: 400 },
  { type: "text" as const, text: " Still going." },
  { type: "complete" as const, stopReason: "end_turn" },
];

describe("discord: mid-turn messages", () => {
  it("steers into the live turn: a reaction receipt, and a chip quoting the user", async () => {
    stack = await startStack({ turns: [slowTurn], provider: { supportsSteer: true } });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "start" });
    await vi.waitFor(() => expect(stack?.provider.hasActiveTurn()).toBe(true), { timeout: 5000 });
    const steerId = stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "also the weather" });
    await untilFooter(stack.fake, DM);
    expect(stack.provider.steers).toEqual(["also the weather"]);
    expect(stack.fake.userMessages.get(steerId)?.reactions.has("📥")).toBe(true);
    const contents = stack.fake.channelMessages(DM).map((m) => m.content);
    expect(contents.at(-1)).toMatch(/^> ↪️ also the weather\n/);
    expect(stack.provider.prompts).toEqual(["start"]);
  });

  it("queue mode: one receipt grows, then flips when the burst runs as one turn", async () => {
    stack = await startStack({
      turns: [
        slowTurn,
        [
          { type: "text", text: "Both answered." },
          { type: "complete", stopReason: "end_turn" },
        ],
      ],
      discord: { queueMode: "queue" },
    });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "start" });
    await vi.waitFor(() => expect(stack?.provider.hasActiveTurn()).toBe(true), { timeout: 5000 });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "what time is it" });
    await vi.waitFor(
      () =>
        expect(stack?.fake.channelMessages(DM).some((m) => m.content.startsWith("⏳ Queued (1)"))).toBe(true),
      { timeout: 5000 },
    );
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "and the weather?" });
    await untilFooter(stack.fake, DM, 2);
    const receipt = stack.fake.channelMessages(DM).find((m) => m.content.includes("what time is it"));
    expect(receipt?.content).toBe('▶️ Now answering (2): "what time is it" · "and the weather?"');
    expect(stack.provider.prompts).toEqual(["start", "what time is it\n\nand the weather?"]);
  });
});
