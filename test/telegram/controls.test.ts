/**
 * The agent controls over the wire (lab.fake Bot API, grammY's real client): `/model` posts a picker
 * whose presses resolve by index against the exact list shown (owner-checked, single use, ten
 * minutes on the injected clock), and `/compact` answers with the shared terse receipts.
 */
import { describe, expect, it } from "vitest";
import { PICK_REFUSAL_TEXT } from "../../src/messaging/channel/picker.js";
import type { ModelMenu } from "../../src/messaging/session/agent-controls.js";
import {
  COMPACT_BUSY,
  COMPACT_NOTHING,
  compactUnsupportedReply,
  MODEL_NOT_OFFERED,
} from "../../src/messaging/session/agent-controls.js";
import type { ScriptStep } from "../../src/providers/scripted.js";
import type { FakeTelegram } from "../fakes/telegram/server.js";
import { permissionRequest } from "../helpers/events.js";
import type { ChannelOptions, ChannelUnderTest } from "./channel-harness.js";
import { done, fakeTelegramLab, OWNER, text } from "./channel-harness.js";
import { ManualClock, until } from "./helpers.js";

const KEY = "telegram:default:direct:42";
const FORUM = { id: -100777, type: "supergroup" as const, is_forum: true };
const TOPIC_KEY = "telegram:default:forum:-100777:5";
const OTHER = 43;

const MENU: ModelMenu = {
  configId: "model",
  current: "swift",
  options: [
    { id: "swift", name: "Swift" },
    { id: "deep", name: "Deep", description: "slower, more careful" },
  ],
};

const hold: ScriptStep = permissionRequest({ title: "wait", kind: "execute", denyOnly: true });

const lab = fakeTelegramLab();
const channel = (o?: ChannelOptions) => lab.channel(o);

type SendOpts = Parameters<FakeTelegram["pushMessage"]>[2];

/** Send a message and return the visible text of the next message the bot sends to that chat. */
async function say(body: string, opts: SendOpts = {}): Promise<string> {
  const chat = opts.chat?.id ?? OWNER;
  const before = lab.fake.sentMessages(chat).length;
  lab.fake.pushMessage({ id: OWNER }, body, opts);
  await lab.fake.waitFor(() => lab.fake.sentMessages(chat).length > before, 5000, `the reply to ${body}`);
  return lab.fake.sentMessages(chat)[before]?.visible ?? "";
}

/** The keyboard a message was first sent with (the stored one changes when it is edited). */
function sentKeyboard(messageId: number): { text: string; callback_data?: string }[][] | undefined {
  const call = lab.fake.calls.find(
    (c) =>
      c.method === "sendMessage" &&
      (c.result as { message_id?: number } | undefined)?.message_id === messageId,
  );
  return (call?.params.reply_markup as { inline_keyboard?: { text: string; callback_data?: string }[][] })
    ?.inline_keyboard;
}

/** `/model` and the picker message it posts, once its list is registered (a press can resolve). */
async function askForModels(c: ChannelUnderTest, opts: SendOpts = {}) {
  const chat = opts.chat?.id ?? OWNER;
  const models = c.running.hub.models;
  const before = models.size;
  const shown = await say("/model", opts);
  const picker = lab.fake.sentMessages(chat).find((m) => m.visible === shown && m.replyMarkup !== undefined);
  if (!picker) throw new Error(`no picker was posted; the bot said: ${shown}`);
  // The lab.fake shows the message before the bot has read sendMessage's answer and recorded the list.
  await until(() => models.size > before, "the list to be recorded");
  return picker;
}

const messageById = (chat: number, id: number) => lab.fake.sentMessages(chat).find((m) => m.messageId === id);

/** Press and wait for the press to be answered; returns the answer's text. */
async function press(from: number, messageId: number, data: string): Promise<string | undefined> {
  const before = lab.fake.callsOf("answerCallbackQuery").length;
  lab.fake.pushCallback({ id: from }, messageId, data);
  await lab.fake.waitFor(
    () => lab.fake.callsOf("answerCallbackQuery").length > before,
    5000,
    `the answer to ${data}`,
  );
  return lab.fake.callsOf("answerCallbackQuery")[before]?.params.text as string | undefined;
}

/** A first turn so the conversation has an agent session, waited until the session is released. */
async function firstTurn(c: ChannelUnderTest): Promise<void> {
  lab.fake.pushMessage({ id: OWNER }, "hi");
  await lab.fake.waitFor(
    () => lab.fake.sentMessages(OWNER).some((m) => m.visible.includes("Finished")),
    5000,
    "the first answer",
  );
  // The footer lands before post-turn bookkeeping releases the session; until then /compact is "busy".
  await until(() => !c.sessions.isBusy(KEY), "the session to be released");
}

describe("telegram: /model", () => {
  it("posts the list as buttons; a press switches the model and retires the buttons; a reuse is refused", async () => {
    const c = await channel({ provider: { modelMenu: MENU } });
    const picker = await askForModels(c);
    expect(picker.visible).toBe(
      "Model: Swift\n1. Swift ✓\n2. Deep — slower, more careful\n\nPick one below.",
    );
    expect(sentKeyboard(picker.messageId)).toEqual([
      [
        { text: "✓ Swift", callback_data: "m:0" },
        { text: "Deep", callback_data: "m:1" },
      ],
    ]);

    expect(await press(OWNER, picker.messageId, "m:1")).toBeUndefined();
    await lab.fake.waitFor(
      () => messageById(OWNER, picker.messageId)?.visible === "✅ Model: Deep",
      5000,
      "the outcome on the picker",
    );
    expect(c.providers.get(KEY)?.modelChoices).toEqual(["deep"]);
    expect(messageById(OWNER, picker.messageId)?.replyMarkup).toEqual({ inline_keyboard: [] });

    // The same list again: used up, refused visibly to the presser, nothing applied.
    expect(await press(OWNER, picker.messageId, "m:0")).toBe(PICK_REFUSAL_TEXT.consumed);
    expect(c.providers.get(KEY)?.modelChoices).toEqual(["deep"]);
    expect(messageById(OWNER, picker.messageId)?.visible).toBe("✅ Model: Deep");
    // The model was switched, not prompted: no turn ran.
    expect(c.providers.get(KEY)?.prompts).toEqual([]);
  });

  it("in a Topic, another allowed user's press is refused and the asker's press still works", async () => {
    const c = await channel({
      provider: { modelMenu: MENU },
      telegram: {
        allowedUserIds: [String(OWNER), String(OTHER)],
        allowForum: true,
        allowedForumChatIds: [String(FORUM.id)],
      },
    });
    const picker = await askForModels(c, { chat: FORUM, threadId: 5 });
    expect(picker.threadId).toBe(5);

    expect(await press(OTHER, picker.messageId, "m:1")).toBe(PICK_REFUSAL_TEXT.wrong_owner);
    expect(c.providers.get(TOPIC_KEY)?.modelChoices).toEqual([]);
    // Not consumed: the list still offers its buttons to the one who asked.
    expect(messageById(FORUM.id, picker.messageId)?.replyMarkup).toEqual({
      inline_keyboard: sentKeyboard(picker.messageId),
    });

    expect(await press(OWNER, picker.messageId, "m:1")).toBeUndefined();
    await lab.fake.waitFor(
      () => messageById(FORUM.id, picker.messageId)?.visible === "✅ Model: Deep",
      5000,
      "the outcome on the picker",
    );
    expect(c.providers.get(TOPIC_KEY)?.modelChoices).toEqual(["deep"]);
  });

  it("a list past its ten minutes is refused, applies nothing and loses its buttons", async () => {
    const clock = new ManualClock();
    const c = await channel({ provider: { modelMenu: MENU }, overrides: { clock } });
    const picker = await askForModels(c);
    await clock.advance(10 * 60_000 + 1);
    expect(await press(OWNER, picker.messageId, "m:1")).toBe(PICK_REFUSAL_TEXT.expired);
    await lab.fake.waitFor(
      () => lab.fake.callsOf("editMessageReplyMarkup").length === 1,
      5000,
      "the stale keyboard to be cleared",
    );
    expect(messageById(OWNER, picker.messageId)?.replyMarkup).toEqual({ inline_keyboard: [] });
    expect(c.providers.get(KEY)?.modelChoices).toEqual([]);
    expect(messageById(OWNER, picker.messageId)?.visible).toContain("Pick one below.");
  });

  it("an agent without a model selector says so, with no buttons", async () => {
    await channel();
    expect(await say("/model")).toBe(MODEL_NOT_OFFERED);
    expect(lab.fake.sentMessages(OWNER).every((m) => m.replyMarkup === undefined)).toBe(true);
  });
});

describe("telegram: /compact", () => {
  it("answers with a terse receipt: no session yet, then the usage the agent reported", async () => {
    const c = await channel({
      turns: () => [[text("hello"), done]],
      provider: { compaction: { outcome: { ok: true, contextUsagePct: 4 } } },
    });
    expect(await say("/compact")).toBe(COMPACT_NOTHING);
    expect(c.providers.size).toBe(0);
    await firstTurn(c);
    expect(await say("/compact")).toBe("✅ Context compacted. Context usage is now 4%.");
    expect(c.providers.get(KEY)?.compactions).toBe(1);
    // Compaction is the agent's own control, not a prompt turn.
    expect(c.providers.get(KEY)?.prompts).toEqual(["hi"]);
  });

  it("a failed compaction says so instead of claiming success", async () => {
    const c = await channel({
      turns: () => [[text("hello"), done]],
      provider: { compaction: { outcome: { ok: false, error: "context too small" } } },
    });
    await firstTurn(c);
    expect(await say("/compact")).toBe("⚠️ Compaction failed: context too small");
    expect(c.providers.get(KEY)?.compactions).toBe(1);
  });

  it("an agent without compaction is pointed at /new", async () => {
    const c = await channel({ turns: () => [[text("hello"), done]] });
    await firstTurn(c);
    expect(await say("/compact")).toBe(compactUnsupportedReply("/new"));
    expect(c.providers.get(KEY)?.prompts).toEqual(["hi"]);
  });

  it("while a turn runs, /compact is refused as busy and compacts nothing", async () => {
    const c = await channel({
      turns: () => [{ steps: [text("working"), hold] }],
      provider: { compaction: {} },
    });
    lab.fake.pushMessage({ id: OWNER }, "go");
    await lab.fake.waitFor(
      () => lab.fake.sentMessages(OWNER).some((m) => m.visible.includes("Permission needed")),
      5000,
      "the prompt",
    );
    expect(await say("/compact")).toBe(COMPACT_BUSY);
    expect(c.providers.get(KEY)?.compactions).toBe(0);
  });

  it("a message sent during a compaction is held, not steered into it, and runs after the receipt", async () => {
    const timers = new ManualClock();
    const c = await channel({
      // An agent that accepts steering while it compacts: the message must still not go into it.
      supportsSteer: true,
      turns: () => [
        [text("hello"), done],
        [text("second answer"), done],
      ],
      provider: { timers, compaction: { delayMs: 1000, outcome: { ok: true, contextUsagePct: 12 } } },
    });
    await firstTurn(c);
    lab.fake.pushMessage({ id: OWNER }, "/compact");
    // The provider's timers serve only the compaction's delay here: one armed = it is running.
    await until(() => timers.pending === 1, "the compaction to start");
    expect(await say("/compact")).toBe(COMPACT_BUSY);
    expect(await say("after")).toMatch(/^⏳ Queued/);
    expect(c.providers.get(KEY)?.prompts).toEqual(["hi"]);

    await timers.advance(1000);
    await lab.fake.waitFor(
      () => lab.fake.sentMessages(OWNER).some((m) => m.visible.startsWith("second answer")),
      5000,
      "the held message's turn",
    );
    const shown = lab.fake.sentMessages(OWNER).map((m) => m.visible);
    const receipt = shown.indexOf("✅ Context compacted. Context usage is now 12%.");
    const answer = shown.findIndex((v) => v.startsWith("second answer"));
    expect(receipt).toBeGreaterThan(-1);
    expect(receipt).toBeLessThan(answer);
    expect(c.providers.get(KEY)?.prompts).toEqual(["hi", "after"]);
    expect(c.providers.get(KEY)?.steers).toEqual([]);
    expect(lab.fake.callsOf("setMessageReaction")).toHaveLength(0);
    expect(c.providers.get(KEY)?.compactions).toBe(1);
  });
});
