/**
 * The whole channel (poller, transport, dispatcher, renderer) against the lab.fake Bot API through
 * grammY's real client, driven by scripted agents: the acceptance list, end to end.
 */
import { describe, expect, it } from "vitest";
import { RECEIPT_EXPIRED } from "../../src/messaging/approval/approvals.js";
import type { ScriptStep } from "../../src/providers/scripted.js";
import { permissionRequest } from "../helpers/events.js";
import type { ChannelOptions } from "./channel-harness.js";
import { done, fakeTelegramLab, OWNER, startChannel, text } from "./channel-harness.js";
import { until } from "./helpers.js";

const permission = (requestId: string): ScriptStep => permissionRequest({ requestId, always: true });
const toolRan: ScriptStep = { type: "tool_result", toolCallId: "t1", status: "completed", final: true };

interface Prompt {
  messageId: number;
  buttons: string[];
  nonce: string;
  data: (code: string) => string;
}

function promptsIn(chatId: number): Prompt[] {
  return lab.fake.sentMessages(chatId).flatMap((m) => {
    const kb = m.replyMarkup as { inline_keyboard?: { callback_data?: string }[][] } | undefined;
    // The keyboard as first sent (the stored one is cleared once decided).
    const sent = lab.fake.calls.find(
      (c) =>
        c.method === "sendMessage" &&
        (c.result as { message_id?: number } | undefined)?.message_id === m.messageId,
    )?.params.reply_markup as typeof kb;
    const buttons = (sent?.inline_keyboard ?? kb?.inline_keyboard ?? [])
      .flat()
      .map((b) => b.callback_data ?? "");
    if (!buttons[0]?.startsWith("a:")) return [];
    const nonce = buttons[0].split(":").at(-2) ?? "";
    const requestId = buttons[0].slice(2, buttons[0].lastIndexOf(`:${nonce}:`));
    return [
      { messageId: m.messageId, buttons, nonce, data: (code: string) => `a:${requestId}:${nonce}:${code}` },
    ];
  });
}

async function promptIn(chatId: number): Promise<Prompt> {
  await lab.fake.waitFor(() => promptsIn(chatId).length > 0, 5000, "an approval prompt");
  return promptsIn(chatId)[0] as Prompt;
}

const lab = fakeTelegramLab();
const channel = (o?: ChannelOptions) => lab.channel(o);

const bodiesTo = (chatId: number) =>
  lab.fake.calls
    .filter(
      (c) =>
        (c.method === "sendMessage" || c.method === "editMessageText") && Number(c.params.chat_id) === chatId,
    )
    .map((c) => String(c.params.text));

describe("a DM turn", () => {
  it("identifies itself, registers the command menu once, and answers by editing one message", async () => {
    const c = await channel({ turns: () => [[text("Hello "), { delayMs: 5 }, text("**there**"), done]] });
    expect(lab.fake.callsOf("getMe")).toHaveLength(1);
    expect(lab.fake.callsOf("setMyCommands")).toHaveLength(1);
    lab.fake.pushMessage({ id: OWNER }, "hi");
    await lab.fake.waitFor(
      () => lab.fake.sentMessages(OWNER).some((m) => m.visible.includes("Finished")),
      5000,
      "the answer",
    );
    const [answer] = lab.fake.sentMessages(OWNER);
    expect(answer?.text).toMatch(/^Hello <b>there<\/b>\n\n<i>Finished in \d+s<\/i>$/);
    expect(lab.fake.callsOf("sendMessage")).toHaveLength(1);
    expect([...c.providers.keys()]).toEqual(["telegram:default:direct:42"]);
    expect(c.providers.get("telegram:default:direct:42")?.prompts).toEqual(["hi"]);
    expect(lab.fake.callsOf("deleteMessage")).toHaveLength(0);
  });

  it("does not re-register an unchanged command menu on restart", async () => {
    const first = await channel();
    await first.stop();
    await channel({ home: first.home });
    expect(lab.fake.callsOf("getMyCommands")).toHaveLength(2);
    expect(lab.fake.callsOf("setMyCommands")).toHaveLength(1);
  });
});

describe("startup", () => {
  it("a rejected token aborts startup; an unreachable Telegram does not", async () => {
    await expect(startChannel(lab.fake, { env: { TELEGRAM_BOT_TOKEN: "999:wrong" } })).rejects.toThrow(
      /rejected the bot token/,
    );
    lab.fake.inject("getMe", { code: 502, description: "Bad Gateway" });
    const c = await channel({ overrides: { identifyRetryMs: 300 } });
    expect(c.running.transport.identity).toBeNull();
    await until(() => c.running.transport.identity !== null, "the identity");
    // (The rejected token never got past the lab.fake's token check, so only this bot's calls are here.)
    expect(lab.fake.callsOf("getMe").map((x) => x.ok)).toEqual([false, true]);
    expect(c.running.transport.identity?.username).toBe("parley_test_bot");
  });
});

describe("deny by default", () => {
  it("an unauthorized user gets no reply and an audit record", async () => {
    const c = await channel({ turns: () => [[text("secret"), done]] });
    lab.fake.pushMessage({ id: 7 }, "hi");
    lab.fake.pushMessage({ id: OWNER }, "/help");
    await lab.fake.waitFor(() => lab.fake.sentMessages(OWNER).length > 0, 5000, "the owner's help");
    expect(lab.fake.sentMessages(7)).toHaveLength(0);
    expect(c.providers.size).toBe(0);
    expect(c.audit.find("inbound", "denied").map((r) => r.fields.user)).toEqual(["7"]);
  });

  it("a group outside the allow-list gets no reply and an audit record, even from an allowed user", async () => {
    const c = await channel({ telegram: { allowForum: true, allowedForumChatIds: ["-100777"] } });
    lab.fake.pushMessage({ id: OWNER }, "hi", { chat: { id: -5, type: "group" } });
    lab.fake.pushMessage({ id: OWNER }, "hi", {
      chat: { id: -100888, type: "supergroup", is_forum: true },
      threadId: 3,
    });
    lab.fake.pushMessage({ id: OWNER }, "hi", { chat: { id: -100777, type: "supergroup", is_forum: true } });
    lab.fake.pushMessage({ id: OWNER }, "/help");
    await lab.fake.waitFor(() => lab.fake.sentMessages(OWNER).length > 0, 5000, "the owner's help");
    expect(lab.fake.sentMessages().filter((m) => m.chatId !== OWNER)).toHaveLength(0);
    expect(c.audit.find("telegram.chat_gate", "denied").map((r) => r.fields.reason)).toEqual([
      "denied_non_private_chat",
      "denied_forum_not_allowed",
      "denied_non_private_chat",
    ]);
    expect(c.audit.find("inbound", "denied")).toHaveLength(3);
  });

  it("drops bot-authored messages without a turn", async () => {
    const c = await channel();
    lab.fake.pushMessage({ id: OWNER, is_bot: true }, "loop?");
    lab.fake.pushMessage({ id: OWNER }, "/help");
    await lab.fake.waitFor(() => lab.fake.sentMessages(OWNER).length > 0, 5000, "the help");
    expect(c.providers.size).toBe(0);
    expect(lab.fake.sentMessages(OWNER)).toHaveLength(1);
  });
});

describe("forum topics", () => {
  const FORUM = { id: -100777, type: "supergroup" as const, is_forum: true };

  it("each Topic routes to its own session and every reply lands in its Topic", async () => {
    const c = await channel({
      telegram: { allowForum: true, allowedForumChatIds: [String(FORUM.id)] },
      turns: (key) => [[text(`answer for ${key.split(":").slice(3).join(":")}`), done]],
    });
    lab.fake.pushMessage({ id: OWNER }, "in five", { chat: FORUM, threadId: 5 });
    lab.fake.pushMessage({ id: OWNER }, "in six", { chat: FORUM, threadId: 6 });
    lab.fake.pushMessage({ id: OWNER }, "in the DM");
    await lab.fake.waitFor(
      () => lab.fake.sentMessages().filter((m) => m.visible.includes("Finished")).length === 3,
      5000,
      "three answers",
    );
    expect([...c.providers.keys()].sort()).toEqual([
      "telegram:default:direct:42",
      "telegram:default:forum:-100777:5",
      "telegram:default:forum:-100777:6",
    ]);
    const inTopic = (t: number) => lab.fake.sentMessages(FORUM.id).filter((m) => m.threadId === t);
    expect(inTopic(5)[0]?.visible).toMatch(/^answer for -100777:5/);
    expect(inTopic(6)[0]?.visible).toMatch(/^answer for -100777:6/);
    for (const call of lab.fake.calls.filter(
      (x) => x.method === "sendMessage" && Number(x.params.chat_id) === FORUM.id,
    ))
      expect(call.params.message_thread_id).toBeDefined();
  });

  it("mention mode: a link containing @bot does not activate; a real mention does", async () => {
    const c = await channel({
      telegram: { allowForum: true, allowedForumChatIds: [String(FORUM.id)], forumActivation: "mention" },
      turns: () => [[text("you called?"), done]],
    });
    const link = "see https://host/@parley_test_bot/x";
    lab.fake.pushMessage({ id: OWNER }, link, {
      chat: FORUM,
      threadId: 5,
      entities: [{ type: "url", offset: 4, length: 31 }],
    });
    lab.fake.pushMessage({ id: OWNER }, "@parley_test_bot hello", {
      chat: FORUM,
      threadId: 5,
      entities: [{ type: "mention", offset: 0, length: 16 }],
    });
    await lab.fake.waitFor(
      () => lab.fake.sentMessages(FORUM.id).some((m) => m.visible.includes("Finished")),
      5000,
      "the answer",
    );
    expect(c.audit.find("telegram.activation", "denied").map((r) => r.fields.reason)).toEqual([
      "denied_activation_mention_only",
    ]);
    expect(c.providers.get("telegram:default:forum:-100777:5")?.prompts).toEqual(["@parley_test_bot hello"]);
  });
});

describe("commands", () => {
  it("/help is built from the one command table; a bare /queue gets its usage", async () => {
    await channel();
    lab.fake.pushMessage({ id: OWNER }, "/help");
    lab.fake.pushMessage({ id: OWNER }, "/queue");
    await lab.fake.waitFor(() => lab.fake.sentMessages(OWNER).length === 2, 5000, "two replies");
    const [help, usage] = lab.fake.sentMessages(OWNER);
    expect(help?.visible).toContain("/compact");
    expect(help?.visible).toContain("/temporary");
    expect(usage?.visible).toBe("Usage: /queue <message>");
    const menu = lab.fake.callsOf("setMyCommands")[0]?.params.commands as { command: string }[];
    for (const m of menu) expect(help?.visible).toContain(`/${m.command}`);
  });

  it("queue mode: one receipt grows in place, flips to answering, and is never deleted", async () => {
    const c = await channel({
      queueMode: "queue",
      turns: () => [
        { steps: [permission("r1")], onPermission: { approve: [text("first"), done] } },
        [text("combined"), done],
      ],
    });
    lab.fake.pushMessage({ id: OWNER }, "one");
    const prompt = await promptIn(OWNER);
    lab.fake.pushMessage({ id: OWNER }, "two");
    lab.fake.pushMessage({ id: OWNER }, "three");
    await lab.fake.waitFor(
      () => lab.fake.sentMessages(OWNER).some((m) => m.visible.startsWith('⏳ Queued (2): "two" · "three"')),
      5000,
      "the receipt",
    );
    expect(lab.fake.sentMessages(OWNER).filter((m) => m.visible.startsWith("⏳"))).toHaveLength(1);
    lab.fake.pushCallback({ id: OWNER }, prompt.messageId, prompt.data("1"));
    await lab.fake.waitFor(
      () => lab.fake.sentMessages(OWNER).some((m) => m.visible.startsWith("combined")),
      5000,
      "the combined turn",
    );
    expect(
      lab.fake.sentMessages(OWNER).some((m) => m.visible.startsWith('▶️ Now answering (2): "two" · "three"')),
    ).toBe(true);
    expect(lab.fake.callsOf("deleteMessage")).toHaveLength(0);
    expect(c.providers.get("telegram:default:direct:42")?.prompts).toEqual(["one", "two\n\nthree"]);
  });

  it("steer mode: a mid-turn message folds in and is acknowledged with a reaction, not a bubble", async () => {
    const c = await channel({
      supportsSteer: true,
      turns: () => [{ steps: [permission("r1")], onPermission: { approve: [text("done with both"), done] } }],
    });
    lab.fake.pushMessage({ id: OWNER }, "one");
    const prompt = await promptIn(OWNER);
    const { messageId } = lab.fake.pushMessage({ id: OWNER }, "also this");
    await lab.fake.waitFor(
      () => lab.fake.callsOf("setMessageReaction").length === 1,
      5000,
      "the steer reaction",
    );
    expect(lab.fake.callsOf("setMessageReaction")[0]?.params).toMatchObject({
      chat_id: String(OWNER),
      message_id: messageId,
    });
    expect(c.providers.get("telegram:default:direct:42")?.steers).toEqual(["also this"]);
    lab.fake.pushCallback({ id: OWNER }, prompt.messageId, prompt.data("1"));
    await lab.fake.waitFor(
      () => lab.fake.sentMessages(OWNER).some((m) => m.visible.includes("done with both")),
      5000,
      "the answer",
    );
  });
});

describe("approvals", () => {
  it("approving by button runs the tool; the prompt shows the outcome and loses its buttons", async () => {
    const c = await channel({
      turns: () => [
        { steps: [permission("r1")], onPermission: { approve: [toolRan, text("removed."), done] } },
      ],
    });
    lab.fake.pushMessage({ id: OWNER }, "clean up");
    const prompt = await promptIn(OWNER);
    expect(prompt.buttons).toEqual([
      `a:r1:${prompt.nonce}:1`,
      `a:r1:${prompt.nonce}:t`,
      `a:r1:${prompt.nonce}:0`,
    ]);
    for (const b of prompt.buttons) expect(Buffer.byteLength(b)).toBeLessThanOrEqual(64);
    lab.fake.pushCallback({ id: OWNER }, prompt.messageId, prompt.data("1"));
    await lab.fake.waitFor(
      () => lab.fake.sentMessages(OWNER).some((m) => m.visible.startsWith("removed.")),
      5000,
      "the tool result",
    );
    expect(c.providers.get("telegram:default:direct:42")?.answers).toEqual([
      { requestId: "r1", verdict: "approve" },
    ]);
    const shown = lab.fake.sentMessages(OWNER).find((m) => m.messageId === prompt.messageId);
    await lab.fake.waitFor(
      () => shown?.visible.includes("✅ Approved") ?? false,
      5000,
      "the outcome on the prompt",
    );
    expect(shown?.visible).toContain("✅ Approved");
    expect(shown?.replyMarkup).toEqual({ inline_keyboard: [] });
    expect(lab.fake.callsOf("answerCallbackQuery")[0]?.params.text).toBe("✅ Approved (this once)");
  });

  it("a press with a stale nonce (from before a restart) does not run the tool", async () => {
    const script = () => [
      {
        steps: [permission("r1")],
        onPermission: { approve: [toolRan, text("ran"), done], deny: [text("skipped"), done] },
      },
    ];
    const first = await channel({ turns: script });
    lab.fake.pushMessage({ id: OWNER }, "clean up");
    const old = await promptIn(OWNER);
    // A restart: the open prompt is denied and its nonce retired; the interrupted message stays
    // unfinished in the journal, so the next process answers it.
    await first.stop();
    const second = await channel({ home: first.home, turns: script, overrides: { approvalTimeoutMs: 400 } });
    // It asks again on the same message (the turn's same part), with the SAME request id (ACP ids
    // restart) and a fresh nonce.
    const asked = () =>
      lab.fake.calls
        .filter((c) => c.method === "editMessageText" && c.params.message_id === old.messageId)
        .map(
          (c) =>
            (
              c.params.reply_markup as { inline_keyboard?: { callback_data?: string }[][] } | undefined
            )?.inline_keyboard?.flat()[0]?.callback_data ?? "",
        )
        .filter((data) => data.startsWith("a:r1:"))
        .at(-1);
    await lab.fake.waitFor(() => asked() !== undefined, 5000, "the prompt asked again");
    expect(asked()).not.toContain(`:${old.nonce}:`);
    expect(promptsIn(OWNER)).toHaveLength(1);
    lab.fake.pushCallback({ id: OWNER }, old.messageId, old.data("1"));
    await lab.fake.waitFor(() => lab.fake.callsOf("answerCallbackQuery").length === 1, 5000, "the refusal");
    expect(lab.fake.callsOf("answerCallbackQuery")[0]?.params.text).toBe(RECEIPT_EXPIRED);
    // The prompt times out to DENY: the tool never ran.
    await lab.fake.waitFor(
      () => lab.fake.sentMessages(OWNER).some((m) => m.visible.startsWith("skipped")),
      5000,
      "the deny path",
    );
    expect(second.providers.get("telegram:default:direct:42")?.answers).toEqual([
      { requestId: "r1", verdict: "deny" },
    ]);
    expect(second.audit.find("tool_permission", "refused")).toHaveLength(1);
  });

  it("an unauthorized presser gets nothing, and the prompt stays open", async () => {
    const c = await channel({
      turns: () => [{ steps: [permission("r1")], onPermission: { approve: [text("ran"), done] } }],
    });
    lab.fake.pushMessage({ id: OWNER }, "go");
    const prompt = await promptIn(OWNER);
    lab.fake.pushCallback({ id: 7 }, prompt.messageId, prompt.data("1"));
    lab.fake.pushMessage({ id: OWNER }, "2");
    await lab.fake.waitFor(
      () => (c.providers.get("telegram:default:direct:42")?.answers.length ?? 0) === 1,
      5000,
      "the typed deny",
    );
    expect(c.providers.get("telegram:default:direct:42")?.answers).toEqual([
      { requestId: "r1", verdict: "deny" },
    ]);
    expect(lab.fake.callsOf("answerCallbackQuery")).toHaveLength(0);
  });
});

describe("credentials", () => {
  it("a key split across chunks and inside emphasis never appears in any send or edit body", async () => {
    await channel({
      turns: () => [
        [
          text("Here: AKIA**IOSF"),
          { delayMs: 2 },
          text("ODNN7EXAMPLE** and AKIAIOSF"),
          { delayMs: 2 },
          text("ODNN7EXAMPLE."),
          done,
        ],
      ],
    });
    lab.fake.pushMessage({ id: OWNER }, "show me");
    await lab.fake.waitFor(
      () => lab.fake.sentMessages(OWNER).some((m) => m.visible.includes("Finished")),
      5000,
      "the answer",
    );
    const bodies = bodiesTo(OWNER);
    expect(bodies.length).toBeGreaterThan(0);
    for (const b of bodies) expect(b.replace(/<[^>]*>/g, "")).not.toContain("AKIAIOSFODNN7EXAMPLE");
  });
});
