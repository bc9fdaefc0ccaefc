/**
 * Files users send, through the whole channel against the fake Bot API (getFile, then the
 * `/file/bot<token>/...` download): a photo arrives as an image block with exactly the bytes of its
 * largest size, a document's text is injected, a voice note alone is a message; refusals (a
 * declared size over the 20 MiB download limit, a redirect, a non-2xx answer) are one visible
 * line each and cost no request they should not; no failure puts the token in a log line, an
 * audit record, a message or the prompt; a file sent mid-turn is queued, never steered, fetched
 * only by the turn that answers it; a caption is never a command; an album is one turn; a Topic
 * keeps its thread.
 */
import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PromptContent } from "../../src/messaging/turn/provider-events.js";
import type { ScriptedProvider, ScriptStep } from "../../src/providers/scripted.js";
import type { HostedFile } from "../fakes/telegram/server.js";
import { FakeTelegram } from "../fakes/telegram/server.js";
import type { ChannelOptions, ChannelUnderTest } from "./channel-harness.js";
import { done, OWNER, startChannel, text } from "./channel-harness.js";
import { ManualClock, pump, until } from "./helpers.js";

const JPEG = Uint8Array.from([
  0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0,
]);
const THUMB = Uint8Array.from([0xff, 0xd8, 0xff, 0xdb, 9, 9, 9, 9]);
const OGG = Buffer.concat([Buffer.from("OggS"), Buffer.alloc(60, 1)]);
const PDF = Buffer.from("%PDF-1.7\n%fake\n");
const MiB = 1024 * 1024;
const KEY = "telegram:default:direct:42";
const FORUM = { id: -100777, type: "supergroup" as const, is_forum: true };

let fake: FakeTelegram;
let foreign: { url: string; hits: string[]; server: Server };
const started: ChannelUnderTest[] = [];

async function channel(o: ChannelOptions = {}): Promise<ChannelUnderTest> {
  const c = await startChannel(fake, o);
  started.push(c);
  return c;
}

beforeEach(async () => {
  fake = await FakeTelegram.start({ lifetimeMs: 30_000 });
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? "");
    res.writeHead(200).end(JPEG);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  foreign = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, server };
});

afterEach(async () => {
  for (const c of started.splice(0)) await c.stop();
  // No download ever carries a credential header.
  for (const r of fake.fileRequests) expect(r.headers.authorization).toBeUndefined();
  expect(fake.overflowed).toBe(false);
  await fake.stop();
  await new Promise<void>((resolve) => foreign.server.close(() => resolve()));
});

const answer = (t: string): ScriptStep[] => [text(t), done];
const blocks = (p: string | PromptContent[] | undefined): PromptContent[] => (Array.isArray(p) ? p : []);
const visible = (chatId = OWNER) => fake.sentMessages(chatId).map((m) => m.visible);
const answered = (n = 1, chatId = OWNER) =>
  fake.waitFor(
    () => fake.sentMessages(chatId).filter((m) => m.visible.includes("Finished in")).length >= n,
    5000,
    `${n} answer(s)`,
  );
const photoOf = (file: HostedFile, thumb?: HostedFile) => ({
  photo: [...(thumb ? [{ ...thumb, width: 90, height: 68 }] : []), { ...file, width: 1280, height: 960 }],
});
const documentOf = (file: HostedFile, fileName: string, mime?: string) => ({
  document: { ...file, file_name: fileName, ...(mime ? { mime_type: mime } : {}) },
});
const provider = (c: ChannelUnderTest, key = KEY) => c.providers.get(key) as ScriptedProvider;

describe("telegram: files from users reach the agent", () => {
  it("a photo arrives as an image block with exactly its largest size's bytes (agent declared images)", async () => {
    const c = await channel({
      turns: () => [answer("A tiny picture.")],
      promptCapabilities: { image: true },
    });
    const thumb = fake.hostFile({ bytes: THUMB, folder: "photos" });
    const large = fake.hostFile({ bytes: JPEG, folder: "photos" });
    fake.pushMedia({ id: OWNER }, photoOf(large, thumb), { caption: "what is this?" });
    await answered();
    expect(provider(c).prompts).toEqual([
      [
        { type: "text", text: "what is this?" },
        { type: "image", mimeType: "image/jpeg", data: Buffer.from(JPEG).toString("base64") },
      ],
    ]);
    expect(fake.callsOf("getFile").map((x) => x.params.file_id)).toEqual([large.file_id]);
    expect(fake.fileRequestsFor(large.file_id)).toHaveLength(1);
    expect(fake.fileRequestsFor(thumb.file_id)).toHaveLength(0);
    expect(visible()).toEqual([expect.stringMatching(/^A tiny picture\./)]);
  });

  it("a document's text is injected next to its link", async () => {
    const c = await channel({ turns: () => [answer("Summarized.")] });
    const notes = "# Plan\n- ship files\n- write docs ✍️\n";
    const doc = fake.hostFile({ bytes: Buffer.from(notes, "utf8") });
    fake.pushMedia({ id: OWNER }, documentOf(doc, "plan.md", "text/markdown"), { caption: "summarize" });
    await answered();
    expect(blocks(provider(c).prompts[0])).toEqual([
      { type: "text", text: "summarize" },
      {
        type: "resource_link",
        uri: expect.stringMatching(/^file:\/\//),
        name: "plan.md",
        mimeType: "text/markdown",
      },
      { type: "text", text: `Contents of the attached file plan.md:\n${notes}` },
    ]);
  });

  it("a voice note alone is a message: a link whose bytes live during the turn and are gone after", async () => {
    const c = await channel({ turns: () => [answer("Heard you.")] });
    const seen: (Buffer | null)[] = [];
    const voice = fake.hostFile({ bytes: OGG, folder: "voice" });
    fake.pushMedia({ id: OWNER }, { voice: { ...voice, duration: 2, mime_type: "audio/ogg" } });
    await until(() => c.providers.has(KEY), "the session");
    const p = provider(c);
    const original = p.prompt.bind(p);
    p.prompt = (content) => {
      for (const b of blocks(content))
        if (b.type === "resource_link") {
          const path = fileURLToPath(b.uri);
          seen.push(existsSync(path) ? readFileSync(path) : null);
        }
      return original(content);
    };
    await answered();
    const [link] = blocks(p.prompts[0]);
    expect(link).toEqual({
      type: "resource_link",
      uri: expect.any(String),
      name: "voice.ogg",
      mimeType: "audio/ogg",
    });
    expect(seen).toEqual([OGG]);
    await until(
      () => !existsSync(fileURLToPath((link as { uri: string }).uri)),
      "the temp file to be deleted",
    );
  });
});

describe("telegram: refused files are visible and cost no request they should not", () => {
  it("a declared size over the 20 MiB download limit is refused without any request", async () => {
    const c = await channel({ turns: () => [answer("Only the words, then.")] });
    const big = fake.hostFile({ bytes: PDF, fileSize: 25 * MiB });
    fake.pushMedia({ id: OWNER }, documentOf(big, "big.pdf", "application/pdf"), { caption: "see this" });
    await answered();
    expect(visible()[0]).toBe("⚠️ Could not read big.pdf: the file is larger than the 20 MiB limit.");
    expect(fake.callsOf("getFile")).toHaveLength(0);
    expect(fake.fileRequests).toHaveLength(0);
    const prompt = blocks(provider(c).prompts[0]);
    expect(prompt.map((b) => b.type)).toEqual(["text", "text"]);
    expect(prompt[1]).toMatchObject({
      text: expect.stringContaining("big.pdf: the file is larger than the 20 MiB limit"),
    });
  });

  it("a redirecting download and a non-2xx download are refused visibly; the redirect is not followed", async () => {
    await channel({ turns: () => [answer("ok"), answer("ok")] });
    const moved = fake.hostFile({ redirectTo: `${foreign.url}/stolen.pdf` });
    fake.pushMedia({ id: OWNER }, documentOf(moved, "moved.pdf"), { caption: "one" });
    await answered(1);
    const gone = fake.hostFile({ status: 404 });
    fake.pushMedia({ id: OWNER }, documentOf(gone, "gone.pdf"), { caption: "two" });
    await answered(2);
    expect(visible().filter((v) => v.startsWith("⚠️"))).toEqual([
      "⚠️ Could not read moved.pdf: the file could not be fetched (Telegram's file server answered with a redirect, which is not followed).",
      "⚠️ Could not read gone.pdf: the file could not be fetched (Telegram's file server answered HTTP 404).",
    ]);
    expect(foreign.hits).toEqual([]);
    expect(fake.fileRequests.map((r) => r.filePath)).toHaveLength(2);
  });

  it("no failure puts the token in a log line, an audit record, a message or the prompt", async () => {
    // An HTTP client whose errors quote the URL they failed on: the worst case for a token in a path.
    const leaky: typeof fetch = async (input) => {
      throw new Error(`request to ${String(input)} failed`, { cause: new Error(`at ${String(input)}`) });
    };
    const c = await channel({
      turns: () => [answer("ok"), answer("ok")],
      overrides: { files: { fetch: leaky } },
    });
    const doc = fake.hostFile({ bytes: PDF });
    fake.pushMedia({ id: OWNER }, documentOf(doc, "report.pdf"), { caption: "read" });
    await answered(1);
    fake.pushMedia({ id: OWNER }, documentOf({ ...doc, file_id: "NOT-A-FILE" }, "other.pdf"), {
      caption: "and",
    });
    await answered(2);
    const refusals = visible().filter((v) => v.startsWith("⚠️"));
    expect(refusals).toEqual([
      expect.stringMatching(
        /^⚠️ Could not read report\.pdf: the file could not be fetched \(request to .*\/file\/bot<token>\/.* failed\)\.$/,
      ),
      "⚠️ Could not read other.pdf: the file could not be fetched (Telegram refused the file (Bad Request: invalid file_id)).",
    ]);
    expect(c.logger.entries.some((e) => e.message === "attachment read failed")).toBe(true);
    const everything = JSON.stringify({
      logs: c.logger.entries,
      audit: c.audit.records,
      sent: fake.calls.map((x) => x.params),
      prompts: [...c.providers.values()].map((p) => p.prompts),
    });
    for (const form of [fake.token, encodeURIComponent(fake.token), fake.token.split(":")[1] as string])
      expect(everything).not.toContain(form);
  });
});

describe("telegram: files and the turn", () => {
  it("sent mid-turn, a file message is queued, never steered, and fetched only by the turn that answers it", async () => {
    const agentClock = new ManualClock();
    const c = await channel({
      supportsSteer: true,
      provider: { timers: agentClock },
      turns: () => [[text("Working."), { delayMs: 1_000 }, done], answer("Got the photo.")],
    });
    fake.pushMessage({ id: OWNER }, "start");
    await until(() => c.providers.get(KEY)?.hasActiveTurn() === true, "the first turn");
    const photo = fake.hostFile({ bytes: JPEG, folder: "photos" });
    fake.pushMedia({ id: OWNER }, photoOf(photo), { caption: "and this" });
    await fake.waitFor(
      () => visible().some((v) => v.startsWith('⏳ Queued (1): "and this" 📎 photo.jpg')),
      5000,
      "the receipt",
    );
    // Held as a descriptor: nothing was looked up or downloaded at arrival.
    expect(fake.callsOf("getFile")).toHaveLength(0);
    await agentClock.advance(1_000);
    await answered(2);
    const p = provider(c);
    expect(p.steers).toEqual([]);
    expect(p.prompts[0]).toBe("start");
    expect(blocks(p.prompts[1])).toEqual([
      { type: "text", text: "and this" },
      { type: "resource_link", uri: expect.any(String), name: "photo.jpg", mimeType: "image/jpeg" },
    ]);
    expect(fake.fileRequestsFor(photo.file_id)).toHaveLength(1);
  });

  it("a caption is content, never a command (not even /new)", async () => {
    const c = await channel({ turns: () => [answer("Read it.")] });
    const doc = fake.hostFile({ bytes: Buffer.from("hello\n") });
    fake.pushMedia({ id: OWNER }, documentOf(doc, "a.txt", "text/plain"), { caption: "/new" });
    await answered();
    expect(blocks(provider(c).prompts[0])[0]).toEqual({ type: "text", text: "/new" });
    expect(visible().some((v) => v.includes("Fresh conversation"))).toBe(false);
    expect(c.store.generationOf(KEY)).toBe(0);
  });
});

describe("telegram: albums", () => {
  it("an album is one turn: the items wait out the settle time on the clock, then one prompt, one answer", async () => {
    const clock = new ManualClock();
    const c = await channel({
      turns: () => [answer("Three views of one thing.")],
      overrides: { clock },
    });
    const files = [0, 1, 2].map(() => fake.hostFile({ bytes: JPEG, folder: "photos" }));
    for (const [i, f] of files.entries())
      fake.pushMedia({ id: OWNER }, photoOf(f), {
        mediaGroupId: "album-1",
        ...(i === 0 ? { caption: "compare these" } : {}),
      });
    await until(() => c.running.updates.albums.held === 3, "the three items");
    await clock.advance(999);
    expect(c.providers.size).toBe(0);
    expect(fake.callsOf("getFile")).toHaveLength(0);
    await clock.advance(1);
    await pump(
      clock,
      () => fake.sentMessages(OWNER).some((m) => m.visible.includes("Finished")),
      "the answer",
    );
    const p = provider(c);
    expect(p.prompts).toHaveLength(1);
    expect(blocks(p.prompts[0])).toEqual([
      { type: "text", text: "compare these" },
      ...["photo.jpg", "photo-2.jpg", "photo-3.jpg"].map((name) => ({
        type: "resource_link",
        uri: expect.any(String),
        name,
        mimeType: "image/jpeg",
      })),
    ]);
    expect(fake.callsOf("getFile").map((x) => x.params.file_id)).toEqual(files.map((f) => f.file_id));
    expect(visible()).toEqual([expect.stringMatching(/^Three views of one thing\./)]);
  });

  it("a message sent right behind an album is answered after it, without waiting out the settle time", async () => {
    const clock = new ManualClock();
    const c = await channel({
      turns: () => [answer("The album."), answer("The question.")],
      overrides: { clock },
    });
    const files = [0, 1].map(() => fake.hostFile({ bytes: JPEG, folder: "photos" }));
    for (const f of files) fake.pushMedia({ id: OWNER }, photoOf(f), { mediaGroupId: "album-2" });
    fake.pushMessage({ id: OWNER }, "which is better?");
    await pump(
      clock,
      () => fake.sentMessages(OWNER).filter((m) => m.visible.includes("Finished")).length === 2,
      "two answers",
    );
    const p = provider(c);
    expect(blocks(p.prompts[0]).map((b) => (b.type === "resource_link" ? b.name : b.type))).toEqual([
      "photo.jpg",
      "photo-2.jpg",
    ]);
    expect(p.prompts[1]).toBe("which is better?");
    // The text flushed the album: its settle timer never had to fire.
    expect(clock.now()).toBe(1_000_000);
  });
});

describe("telegram: albums at shutdown", () => {
  it("a pending album does not hold up stop: it is routed like any accepted message, then stopped", async () => {
    const clock = new ManualClock();
    const c = await channel({ turns: () => [answer("late")], overrides: { clock } });
    for (const f of [0, 1].map(() => fake.hostFile({ bytes: JPEG, folder: "photos" })))
      fake.pushMedia({ id: OWNER }, photoOf(f), { mediaGroupId: "album-3" });
    await until(() => c.running.updates.albums.held === 2, "the two items");
    // The settle timer never fires (the clock stands still): only the shutdown can route the album.
    await c.stop();
    expect(c.running.updates.albums.size).toBe(0);
    expect(c.providers.size).toBe(1);
  });
});

describe("telegram: files in a forum Topic", () => {
  it("the refusal line, the answer and the agent's session all stay in the Topic", async () => {
    const c = await channel({
      telegram: { allowForum: true, allowedForumChatIds: [String(FORUM.id)] },
      turns: () => [answer("Too big, but I read the caption."), answer("Read the notes.")],
    });
    const big = fake.hostFile({ bytes: PDF, fileSize: 30 * MiB });
    fake.pushMedia({ id: OWNER }, documentOf(big, "huge.pdf"), { chat: FORUM, threadId: 5, caption: "look" });
    await answered(1, FORUM.id);
    const key = "telegram:default:forum:-100777:5";
    await until(() => !c.sessions.isBusy(key), "the first turn to release the session");
    const notes = fake.hostFile({ bytes: Buffer.from("topic notes\n") });
    fake.pushMedia({ id: OWNER }, documentOf(notes, "notes.txt", "text/plain"), { chat: FORUM, threadId: 5 });
    await answered(2, FORUM.id);
    expect([...c.providers.keys()]).toEqual([key]);
    expect(fake.sentMessages(FORUM.id).map((m) => [m.threadId, m.visible.split("\n")[0]])).toEqual([
      [5, "⚠️ Could not read huge.pdf: the file is larger than the 20 MiB limit."],
      [5, "Too big, but I read the caption."],
      [5, "Read the notes."],
    ]);
    for (const call of fake.calls.filter((x) => x.method === "sendMessage"))
      expect(call.params.message_thread_id).toBe(5);
    expect(blocks(provider(c, key).prompts[1]).at(-1)).toEqual({
      type: "text",
      text: "Contents of the attached file notes.txt:\ntopic notes\n",
    });
    expect(fake.sentMessages(OWNER)).toHaveLength(0);
  });

  it("mention mode: an album whose caption mentions the bot is one turn; an unmentioned photo is not", async () => {
    const clock = new ManualClock();
    const c = await channel({
      telegram: { allowForum: true, allowedForumChatIds: [String(FORUM.id)], forumActivation: "mention" },
      turns: () => [answer("Both seen.")],
      overrides: { clock },
    });
    const caption = "@parley_test_bot which one?";
    const files = [0, 1].map(() => fake.hostFile({ bytes: JPEG, folder: "photos" }));
    fake.pushMedia({ id: OWNER }, photoOf(files[0] as HostedFile), {
      chat: FORUM,
      threadId: 9,
      mediaGroupId: "album-4",
      caption,
      captionEntities: [{ type: "mention", offset: 0, length: 16 }],
    });
    // Only the first item carries the caption (as Telegram sends albums): the album is addressed as a whole.
    fake.pushMedia({ id: OWNER }, photoOf(files[1] as HostedFile), {
      chat: FORUM,
      threadId: 9,
      mediaGroupId: "album-4",
    });
    await until(() => c.running.updates.albums.held === 2, "the two items");
    await clock.advance(1_000);
    await pump(
      clock,
      () => fake.sentMessages(FORUM.id).some((m) => m.visible.includes("Finished")),
      "the answer",
    );
    const key = "telegram:default:forum:-100777:9";
    expect(blocks(provider(c, key).prompts[0]).map((b) => (b.type === "text" ? b.text : b.type))).toEqual([
      caption,
      "resource_link",
      "resource_link",
    ]);
    const lone = fake.hostFile({ bytes: JPEG, folder: "photos" });
    fake.pushMedia({ id: OWNER }, photoOf(lone), { chat: FORUM, threadId: 9, caption: "no mention" });
    await until(() => c.audit.find("telegram.activation", "denied").length === 1, "the activation refusal");
    expect(fake.fileRequestsFor(lone.file_id)).toHaveLength(0);
    expect(provider(c, key).prompts).toHaveLength(1);
  });
});
