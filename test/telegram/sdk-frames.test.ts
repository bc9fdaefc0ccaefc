/**
 * grammY (the official SDK's client parley runs) takes the fake's frames as Telegram's: its own
 * `init` reads the fake's getMe, its Api reads getUpdates, getFile and the sent Message, its
 * update routing (filter queries, context shortcuts) recognises every update kind the fake emits,
 * and its error type reads the fake's error envelope, retry_after included. A fake frame grammY
 * would not route like Telegram's is a fake that proves nothing.
 */
import type { Context } from "grammy";
import { Bot, GrammyError } from "grammy";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeTelegram } from "../fakes/telegram/server.js";

let fake: FakeTelegram;
let bot: Bot;

beforeEach(async () => {
  fake = await FakeTelegram.start({ lifetimeMs: 20_000 });
  bot = new Bot(fake.token, { client: { apiRoot: fake.apiRoot } });
});

afterEach(async () => {
  await fake.stop();
});

/** Everything grammY's routing saw of one update. */
interface Seen {
  updateId: number;
  queries: string[];
  from?: number;
  chat?: number;
  thread?: number;
  text?: string;
  data?: string;
  album?: string;
}

/** Feed the fake's queued updates, fetched through grammY's Api, into grammY's own update routing. */
async function routeThroughGrammy(): Promise<Seen[]> {
  const seen = new Map<number, Seen>();
  const note = (query: string) => (ctx: Context, next: () => Promise<void>) => {
    const id = ctx.update.update_id;
    const s = seen.get(id) ?? { updateId: id, queries: [] };
    s.queries.push(query);
    if (ctx.from) s.from = ctx.from.id;
    if (ctx.chat) s.chat = ctx.chat.id;
    if (ctx.msg?.message_thread_id !== undefined) s.thread = ctx.msg.message_thread_id;
    if (ctx.msg?.text ?? ctx.msg?.caption) s.text = ctx.msg?.text ?? ctx.msg?.caption;
    if (ctx.callbackQuery?.data) s.data = ctx.callbackQuery.data;
    if (ctx.msg?.media_group_id) s.album = ctx.msg.media_group_id;
    seen.set(id, s);
    return next();
  };
  for (const query of [
    "message:text",
    "message:photo",
    "message:document",
    "message:caption",
    "message:entities:mention",
    "message:is_topic_message",
    "callback_query:data",
  ] as const)
    bot.on(query, note(query));
  await bot.init();
  const updates = await bot.api.getUpdates({ offset: 0, timeout: 0 });
  for (const update of updates) await bot.handleUpdate(update);
  return [...seen.values()];
}

describe("grammY reads the fake's frames", () => {
  it("getMe through init: the fake's bot identity", async () => {
    await bot.init();
    expect(bot.botInfo).toMatchObject({ id: fake.bot.id, is_bot: true, username: fake.bot.username });
  });

  it("routes a text message, a mention in a Topic, media with a caption and an album item", async () => {
    const file = fake.hostFile({ bytes: new Uint8Array([1, 2, 3]) });
    const text = fake.pushMessage({ id: 42 }, "hello").updateId;
    const topic = fake.pushMessage({ id: 42 }, "@parley_test_bot hi", {
      chat: { id: -100777, type: "supergroup", title: "Team", is_forum: true },
      threadId: 5,
      entities: [{ type: "mention", offset: 0, length: 16 }],
    }).updateId;
    const photo = fake.pushMedia(
      { id: 42 },
      { photo: [{ ...file, width: 90, height: 90 }] },
      { caption: "look", mediaGroupId: "g1" },
    ).updateId;
    const doc = fake.pushMedia(
      { id: 42 },
      { document: { ...file, file_name: "a.txt", mime_type: "text/plain" } },
    ).updateId;
    const seen = await routeThroughGrammy();
    const of = (id: number) => seen.find((s) => s.updateId === id);
    expect(of(text)).toEqual({
      updateId: text,
      queries: ["message:text"],
      from: 42,
      chat: 42,
      text: "hello",
    });
    expect(of(topic)).toMatchObject({
      queries: ["message:text", "message:entities:mention", "message:is_topic_message"],
      chat: -100777,
      thread: 5,
    });
    expect(of(photo)).toMatchObject({
      queries: ["message:photo", "message:caption"],
      text: "look",
      album: "g1",
    });
    expect(of(doc)?.queries).toEqual(["message:document"]);
  });

  it("routes a press on the bot's own message, with the message it sits on", async () => {
    const sent = await bot.api.sendMessage(42, "pick", {
      reply_markup: { inline_keyboard: [[{ text: "One", callback_data: "o:1" }]] },
    });
    expect(sent).toMatchObject({ chat: { id: 42 }, from: { id: fake.bot.id }, text: "pick" });
    const press = fake.pushCallback({ id: 42 }, sent.message_id, "o:1");
    const [seen] = await routeThroughGrammy();
    expect(seen).toEqual({
      updateId: press,
      queries: ["callback_query:data"],
      from: 42,
      chat: 42,
      text: "pick",
      data: "o:1",
    });
  });

  it("getFile: the file_path the download route serves", async () => {
    const file = fake.hostFile({ bytes: new Uint8Array([1, 2, 3]), filePath: "documents/file_9.txt" });
    const got = await bot.api.getFile(file.file_id);
    expect(got).toMatchObject({ file_id: file.file_id, file_size: 3, file_path: "documents/file_9.txt" });
  });

  it("an error envelope becomes grammY's GrammyError, retry_after included", async () => {
    fake.inject("sendMessage", { code: 429, description: "Too Many Requests: retry after 7", retryAfter: 7 });
    const error = await bot.api.sendMessage(42, "hi").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GrammyError);
    expect(error).toMatchObject({ error_code: 429, parameters: { retry_after: 7 } });
  });
});
