/**
 * The agent controls over the wire: `!model` posts a picker whose presses resolve by index against
 * the exact list shown (owner-scoped, single use, TTL-bounded), `/model` acknowledges ephemerally,
 * and `!compact` answers with terse receipts (the busy case is pinned in test/messaging).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { PICK_REFUSAL_TEXT } from "../../src/messaging/channel/picker.js";
import type { ModelMenu } from "../../src/messaging/session/agent-controls.js";
import type { Stack } from "./helpers.js";
import { ALICE, buttons, DM, FakeTimers, startStack, untilFooter } from "./helpers.js";

const BOB = "200000000000000002";

const MENU: ModelMenu = {
  configId: "model",
  current: "swift",
  options: [
    { id: "swift", name: "Swift" },
    { id: "deep", name: "Deep", description: "slower, more careful" },
  ],
};

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const messages = (s: Stack) => s.fake.channelMessages(DM);
const byId = (s: Stack, id: string | undefined) => messages(s).find((m) => m.id === id);

async function say(s: Stack, content: string, userId = ALICE): Promise<void> {
  const before = messages(s).length;
  s.fake.userMessage({ channelId: DM, userId, content });
  await vi.waitFor(() => expect(messages(s).length).toBeGreaterThan(before), { timeout: 5000 });
}

function followups(s: Stack): string[] {
  return s.fake.callsTo("POST", /^\/webhooks\//).map((c) => (c.body as { content: string }).content);
}

describe("discord: !model", () => {
  it("posts the list as buttons; a press switches the model and retires the buttons", async () => {
    stack = await startStack({ provider: { modelMenu: MENU } });
    await say(stack, "!model");
    const picker = messages(stack).at(-1);
    expect(picker?.content).toContain("**Model**: Swift");
    expect(picker?.content).toContain("2. **Deep** — slower, more careful");
    const ids = buttons(picker).map((b) => [b.custom_id, b.label]);
    expect(ids).toEqual([
      ["m:0", "✓ Swift"],
      ["m:1", "Deep"],
    ]);
    stack.fake.press({ messageId: picker?.id ?? "", customId: "m:1", userId: ALICE });
    await vi.waitFor(() => expect(stack?.provider.modelChoices).toEqual(["deep"]), { timeout: 5000 });
    await vi.waitFor(() => expect(byId(stack as Stack, picker?.id)?.content).toBe("✅ Model: Deep"), {
      timeout: 5000,
    });
    expect(byId(stack, picker?.id)?.components).toEqual([]);
    // The same list again: used up, refused visibly to the presser, nothing applied.
    stack.fake.press({ messageId: picker?.id ?? "", customId: "m:0", userId: ALICE });
    await vi.waitFor(() => expect(followups(stack as Stack)).toEqual([PICK_REFUSAL_TEXT.consumed]), {
      timeout: 5000,
    });
    expect(stack.provider.modelChoices).toEqual(["deep"]);
  });

  it("a press by someone else, or past the TTL, applies nothing", async () => {
    const clock = new FakeTimers();
    stack = await startStack({
      provider: { modelMenu: MENU },
      discord: { allowedUserIds: [ALICE, BOB] },
      overrides: { clock },
    });
    await say(stack, "!model");
    const first = messages(stack).at(-1)?.id ?? "";
    stack.fake.press({ messageId: first, customId: "m:1", userId: BOB });
    await vi.waitFor(() => expect(followups(stack as Stack)).toEqual([PICK_REFUSAL_TEXT.wrong_owner]), {
      timeout: 5000,
    });
    clock.advanceSync(10 * 60_000 + 1);
    stack.fake.press({ messageId: first, customId: "m:1", userId: ALICE });
    await vi.waitFor(() => expect(followups(stack as Stack)).toHaveLength(2), { timeout: 5000 });
    expect(followups(stack)[1]).toBe(PICK_REFUSAL_TEXT.expired);
    expect(stack.provider.modelChoices).toEqual([]);
  });

  it("/model posts the picker and acknowledges ephemerally; an agent without a selector says so", async () => {
    stack = await startStack({ provider: { modelMenu: MENU } });
    stack.fake.interaction({ type: 2, channelId: DM, userId: ALICE, data: { name: "model" } });
    await vi.waitFor(() => expect(stack?.fake.callsTo("POST", /\/callback$/)).toHaveLength(1), {
      timeout: 5000,
    });
    const ack = stack.fake.callsTo("POST", /\/callback$/)[0]?.body as {
      data: { content: string; flags: number };
    };
    expect(ack.data).toMatchObject({ content: "Posted in this conversation.", flags: 64 });
    expect(messages(stack).at(-1)?.content).toContain("**Model**: Swift");
    await stack.close();
    stack = await startStack({});
    await say(stack, "!model");
    expect(messages(stack).at(-1)?.content).toBe("This agent does not offer a choice of model.");
  });
});

describe("discord: !compact", () => {
  it("answers each case with a terse receipt", async () => {
    stack = await startStack({
      turns: [
        [
          { type: "text", text: "hello" },
          { type: "complete", stopReason: "end_turn" },
        ],
      ],
      provider: { compaction: { outcome: { ok: true, contextUsagePct: 4 } } },
    });
    await say(stack, "!compact");
    expect(messages(stack).at(-1)?.content).toBe(
      "Nothing to compact yet: this conversation has no agent session.",
    );
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "hi" });
    await untilFooter(stack.fake, DM);
    // The footer lands before post-turn bookkeeping releases the session; until then the receipt is "busy".
    const key = stack.startedKeys[0] ?? "";
    await vi.waitFor(() => expect(stack?.sessions.isBusy(key)).toBe(false), { timeout: 5000 });
    await say(stack, "!compact");
    expect(messages(stack).at(-1)?.content).toBe("✅ Context compacted. Context usage is now 4%.");
    expect(stack.provider.compactions).toBe(1);
  });

  it("a message sent during a compaction waits (never steered into it) and runs once it ends", async () => {
    stack = await startStack({
      turns: [
        [
          { type: "text", text: "first" },
          { type: "complete", stopReason: "end_turn" },
        ],
        [
          { type: "text", text: "after the compaction" },
          { type: "complete", stopReason: "end_turn" },
        ],
      ],
      provider: {
        supportsSteer: true,
        compaction: { delayMs: 300, outcome: { ok: true, contextUsagePct: 2 } },
      },
    });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "hi" });
    await untilFooter(stack.fake, DM);
    const key = stack.startedKeys[0] ?? "";
    await vi.waitFor(() => expect(stack?.sessions.isBusy(key)).toBe(false), { timeout: 5000 });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "!compact" });
    await vi.waitFor(() => expect(stack?.provider.compactions).toBe(1), { timeout: 5000 });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "and then?" });
    await untilFooter(stack.fake, DM, 2);
    expect(stack.provider.steers).toEqual([]);
    expect(stack.provider.prompts).toEqual(["hi", "and then?"]);
    const texts = messages(stack).map((m) => m.content);
    expect(texts).toContain("✅ Context compacted. Context usage is now 2%.");
    expect(texts.at(-1)).toMatch(/^after the compaction/);
  });
});
