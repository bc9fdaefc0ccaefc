/**
 * The Discord channel end to end against the loopback fake (REST + Gateway): DM turns streamed by
 * edits, long answers split under the cap with balanced fences, and the mention guard on every
 * outbound payload.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Stack } from "./helpers.js";
import {
  ALICE,
  DM,
  fenceLines,
  MALLORY,
  mentionGuardViolations,
  startStack,
  untilFooter,
} from "./helpers.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

function expectMentionGuardEverywhere(s: Stack): void {
  expect(s.fake.calls.length).toBeGreaterThan(0);
  expect(mentionGuardViolations(s.fake)).toEqual([]);
}

describe("discord: a DM turn", () => {
  it("connects through gateway discovery with DM intents only, and registers commands", async () => {
    stack = await startStack({});
    const identify = stack.fake.identifies[0] as { intents: number; token: string };
    expect(identify.token).toBe(stack.fake.token);
    expect(identify.intents).toBe(1 << 12);
    expect(stack.fake.calls[0]?.path).toBe("/gateway/bot");
    const rows = stack.fake.commands[0] as Array<{ name: string; contexts: number[] }>;
    expect(rows.map((r) => r.name)).toEqual([
      "new",
      "compact",
      "model",
      "stop",
      "status",
      "link",
      "unlink",
      "yolo",
      // issue 16: every channel lists its conversation's history.
      "history",
      "help",
      "sessions",
    ]);
    expect(rows.every((r) => r.contexts.join() === "0,1")).toBe(true);
  });

  it("streams by editing one live message, then seals it with the footer", async () => {
    stack = await startStack({
      turns: [
        [
          { type: "text", text: "Hello " },
          { delayMs: 30 },
          { type: "text", text: "there, @everyone.\n" },
          { delayMs: 30 },
          { type: "text", text: "Second line." },
          { type: "complete", stopReason: "end_turn" },
        ],
      ],
    });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "hi" });
    await untilFooter(stack.fake, DM);
    const answers = stack.fake.channelMessages(DM);
    expect(answers).toHaveLength(1);
    const answer = answers[0]!;
    expect(answer.edits).toBeGreaterThan(0);
    expect(answer.content).toMatch(/^Hello there, @\u200beveryone\.\nSecond line\.\n-# Finished in \d+s$/);
    expect(stack.fake.callsTo("POST", /^\/channels\/\d+\/messages$/)).toHaveLength(1);
    expectMentionGuardEverywhere(stack);
  });

  it("splits a long answer under 2000 with balanced fences, losing nothing", async () => {
    const prose = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(20);
    const code = Array.from({ length: 120 }, (_, i) => `const value${i} = compute(${i}); // step ${i}`).join(
      "\n",
    );
    const answer = `${prose}\n\n\`\`\`ts\n${code}\n\`\`\`\n\nDone.`;
    const pieces = answer.match(/[\s\S]{1,97}/g) ?? [];
    stack = await startStack({
      turns: [
        [
          ...pieces.map((text) => ({ type: "text" as const, text })),
          { type: "complete", stopReason: "end_turn" },
        ],
      ],
    });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "long please" });
    await untilFooter(stack.fake, DM);
    const messages = stack.fake.channelMessages(DM);
    expect(messages.length).toBeGreaterThan(2);
    for (const m of messages) {
      expect(Array.from(m.content).length).toBeLessThanOrEqual(2000);
      expect(fenceLines(m.content) % 2, m.content).toBe(0);
    }
    const joined = messages.map((m) => m.content).join("\n");
    for (let i = 0; i < 120; i++) expect(joined).toContain(`const value${i} = compute(${i}); // step ${i}`);
    expect(joined).toContain("Done.");
    expect(messages.at(-1)?.content).toMatch(/-# Finished in/);
    expectMentionGuardEverywhere(stack);
  });

  it("denies a stranger with an audit record and sends them nothing", async () => {
    stack = await startStack({ turns: [] });
    stack.fake.userMessage({ channelId: DM, userId: MALLORY, content: "hi" });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "x", bot: true });
    await expect.poll(() => stack?.audit.find("inbound", "denied").length, { timeout: 5000 }).toBe(1);
    expect(stack.fake.channelMessages(DM)).toHaveLength(0);
    expect(stack.provider.prompts).toHaveLength(0);
  });
});
