/**
 * The dispatcher's commands and widgets through the whole channel: /new, /stop, /sessions' two
 * gates, privacy modes, /title, /link, /yolo, and an [OPTIONS:] press re-dispatched as text.
 */
import { describe, expect, it } from "vitest";
import type { ScriptStep } from "../../src/providers/scripted.js";
import type { FakeTelegram } from "../fakes/telegram/server.js";
import { permissionRequest } from "../helpers/events.js";
import type { ChannelOptions } from "./channel-harness.js";
import { done, fakeTelegramLab, OWNER, text } from "./channel-harness.js";

const FORUM = { id: -100777, type: "supergroup" as const, is_forum: true };
const KEY = "telegram:default:direct:42";

const lab = fakeTelegramLab();
const channel = (o?: ChannelOptions) => lab.channel(o);

/** Send a message and wait for the n-th message the bot sends to that chat. */
async function say(body: string, n: number, opts: Parameters<FakeTelegram["pushMessage"]>[2] = {}) {
  lab.fake.pushMessage({ id: OWNER }, body, opts);
  const chat = opts.chat?.id ?? OWNER;
  await lab.fake.waitFor(() => lab.fake.sentMessages(chat).length >= n, 5000, `reply ${n} to ${body}`);
  return lab.fake.sentMessages(chat)[n - 1]?.visible ?? "";
}

const hold: ScriptStep = permissionRequest({ title: "wait", kind: "execute", denyOnly: true });

describe("conversation commands", () => {
  it("/new starts a fresh generation: the next message runs under a new session key", async () => {
    const c = await channel({ turns: () => [[text("ok"), done]] });
    await lab.fake.waitFor(() => lab.fake.callsOf("getUpdates").length > 0, 5000, "polling");
    await say("hello", 1);
    await lab.fake.waitFor(
      () => lab.fake.sentMessages(OWNER)[0]?.visible.includes("Finished") ?? false,
      5000,
      "answer",
    );
    expect(await say("/new", 2)).toBe("🆕 Fresh conversation started.");
    await say("again", 3);
    expect([...c.providers.keys()]).toEqual([KEY, `${KEY}:gen1`]);
    expect(c.store.generationOf(KEY)).toBe(1);
  });

  it("/stop cancels the running turn and says so", async () => {
    const c = await channel({ turns: () => [{ steps: [text("working"), hold] }] });
    lab.fake.pushMessage({ id: OWNER }, "go");
    await lab.fake.waitFor(
      () => lab.fake.sentMessages(OWNER).some((m) => m.visible.includes("Permission needed")),
      5000,
      "prompt",
    );
    lab.fake.pushMessage({ id: OWNER }, "/stop");
    await lab.fake.waitFor(
      () => lab.fake.sentMessages(OWNER).some((m) => m.visible.startsWith("🛑 Stopping")),
      5000,
      "stop reply",
    );
    await lab.fake.waitFor(
      () =>
        lab.fake
          .sentMessages(OWNER)
          .some((m) => m.visible.includes("The turn ended before this was answered")),
      5000,
      "the prompt to be closed",
    );
    expect(c.providers.get(KEY)?.hasActiveTurn()).toBe(false);
  });

  it("/sessions is refused in a Topic and, with several allow-listed users and no named owner, to all", async () => {
    const forum = { allowForum: true, allowedForumChatIds: [String(FORUM.id)] };
    const c = await channel({ telegram: forum });
    expect(await say("/sessions", 1, { chat: FORUM, threadId: 5 })).toContain(
      "only shown in a direct conversation",
    );
    expect(c.audit.find("telegram.sessions", "refused")[0]?.fields.reason).toBe("shared_audience");
    expect(await say("/sessions", 1)).toMatch(/No sessions yet|Sessions/);
    await c.stop();

    const two = await channel({ telegram: { allowedUserIds: [String(OWNER), "43"] } });
    expect(await say("/sessions", 2)).toBe("Only the owner of this bot can list its sessions.");
    expect(two.audit.find("telegram.sessions", "refused")[0]?.fields.reason).toBe("not_owner");
    await two.stop();

    // Naming the owner among several makes it unambiguous.
    await channel({ telegram: { allowedUserIds: [String(OWNER), "43"], owner: String(OWNER) } });
    expect(await say("/sessions", 3)).toMatch(/No sessions yet|Sessions/);
  });

  it("/temporary marks the conversation; /title then refuses to persist; /status reports both", async () => {
    const c = await channel();
    expect(await say("/temporary", 1)).toContain("Temporary mode");
    expect(c.running.hub.privacy?.isTemporary(KEY)).toBe(true);
    expect(c.store.flag(KEY, "temporary")).toBe(true);
    expect(await say("/title Deploy plan", 2)).toContain("not saved");
    expect(c.store.titleOf(KEY)).toBeNull();
    const status = await say("/status", 3);
    expect(status).toContain("Privacy: temporary");
    expect(status).toContain("Auto-approve: off");
  });

  it("/title names the conversation; /link and /unlink bind and release this chat", async () => {
    const c = await channel();
    expect(await say("/title Deploy plan", 1)).toBe("✏️ Title set: Deploy plan");
    expect(c.store.titleOf(KEY)).toEqual({ title: "Deploy plan", kind: "manual" });
    expect(await say("/link", 2)).toContain("Linked");
    expect(c.store.getMirrorLink(KEY)).toEqual({
      channelType: "telegram",
      conversationId: "42",
    });
    expect(await say("/unlink", 3)).toBe("✅ Unlinked.");
    expect(c.store.mirrorOptOut(KEY)).toBe(true);
  });

  it("/yolo from the owner in the DM arms the one gateway-wide grant, recording who and where", async () => {
    const c = await channel();
    expect(await say("/yolo on 30m", 1)).toMatch(/^⚠️ Auto-approve is ON for 30m\./);
    expect(c.audit.find("auto_approve", "granted")[0]?.fields).toMatchObject({
      source: "telegram",
      caller: String(OWNER),
    });
  });
});

describe("session keys", () => {
  it("dmScope unified puts the single owner's DM in the unified bucket; a Topic keeps its own key", async () => {
    const c = await channel({
      telegram: { dmScope: "unified", allowForum: true, allowedForumChatIds: [String(FORUM.id)] },
      turns: () => [[text("ok"), done]],
    });
    lab.fake.pushMessage({ id: OWNER }, "in the DM");
    lab.fake.pushMessage({ id: OWNER }, "in a topic", { chat: FORUM, threadId: 5 });
    await lab.fake.waitFor(
      () => lab.fake.sentMessages().filter((m) => m.visible.includes("Finished")).length === 2,
      5000,
      "two answers",
    );
    expect([...c.providers.keys()].sort()).toEqual(["telegram:default:forum:-100777:5", "unified:default"]);
  });
});

describe("options buttons", () => {
  it("a press sends the label as text, never as a command", async () => {
    const c = await channel({
      turns: () => [
        [text("Which one?\n[OPTIONS: /new | Tea]"), done],
        [text("noted"), done],
      ],
    });
    lab.fake.pushMessage({ id: OWNER }, "ask me");
    await lab.fake.waitFor(
      () => lab.fake.sentMessages(OWNER).some((m) => m.replyMarkup !== undefined),
      5000,
      "the keyboard",
    );
    const asked = lab.fake.sentMessages(OWNER).find((m) => m.replyMarkup !== undefined);
    lab.fake.pushCallback({ id: OWNER }, asked?.messageId ?? 0, "o:0");
    await lab.fake.waitFor(
      () => lab.fake.sentMessages(OWNER).some((m) => m.visible.startsWith("noted")),
      5000,
      "the second turn",
    );
    expect(c.providers.get(KEY)?.prompts).toEqual(["ask me", "/new"]);
    expect([...c.providers.keys()]).toEqual([KEY]);
    expect(lab.fake.sentMessages(OWNER).find((m) => m.messageId === asked?.messageId)?.replyMarkup).toEqual({
      inline_keyboard: [],
    });
  });
});
