/**
 * Files users send, end to end against the loopback fake (Gateway MESSAGE_CREATE with attachment
 * descriptors, the fake CDN serving the bytes): the agent receives an image block (or a file://
 * resource_link when it declared no image support) with exactly the bytes sent, a text file's
 * content injected; refusals (oversize, redirect, foreign host, unreadable type) are one visible line
 * each and never touch a foreign host; an attachment sent mid-turn is queued, not steered, and
 * fetched only by the drained turn; the temp files are gone after the turn, also when it throws; no
 * CDN request carries an Authorization header. Two cases run a real ACP agent subprocess.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { DiscordSettings } from "../../src/discord/index.js";
import { discordChannel } from "../../src/discord/index.js";
import { start as startDiscord } from "../../src/discord/start.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { ParleyStore } from "../../src/messaging/store/port.js";
import type { PipelineProvider } from "../../src/messaging/turn/pipeline.js";
import type { PromptContent } from "../../src/messaging/turn/provider-events.js";
import { AcpProvider } from "../../src/providers/index.js";
import { FakeDiscord } from "../fakes/discord/server.js";
import { openTestStore, testChannelContext } from "../helpers/channel-context.js";
import type { Stack } from "./helpers.js";
import { ALICE, DM, startStack, untilFooter } from "./helpers.js";

const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);
const BINARY = Uint8Array.from([0x00, 0x01, 0x02, 0xfe, 0xff, 0x00, 0x13, 0x37, 0x00]);
const MiB = 1024 * 1024;

let stack: Stack | undefined;
let foreign: { url: string; hits: string[]; server: Server } | undefined;

beforeEach(async () => {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? "");
    res.writeHead(200, { "content-type": "image/png" }).end(PNG);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  foreign = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, server };
});

afterEach(async () => {
  // The bot token never travels to a file server, in any test.
  for (const r of stack?.fake.cdnRequests ?? []) expect(r.headers.authorization).toBeUndefined();
  await stack?.close();
  stack = undefined;
  await new Promise<void>((resolve) => foreign?.server.close(() => resolve()));
  foreign = undefined;
});

const blocks = (p: string | PromptContent[] | undefined): PromptContent[] => (Array.isArray(p) ? p : []);
const linkPaths = (p: string | PromptContent[] | undefined) =>
  blocks(p).flatMap((b) => (b.type === "resource_link" ? [fileURLToPath(b.uri)] : []));
const contents = (s: Stack) => s.fake.channelMessages(DM).map((m) => m.content);
const answer = (text: string) => [
  { type: "text" as const, text },
  { type: "complete" as const, stopReason: "end_turn" },
];

describe("discord: files from users reach the agent", () => {
  it("an image in a DM arrives as an image block with exactly the bytes sent (agent declared images)", async () => {
    stack = await startStack({ turns: [answer("A red pixel.")] });
    Object.assign(stack.provider, { promptCapabilities: { image: true } });
    const att = stack.fake.attachment({ filename: "pixel.png", bytes: PNG, contentType: "image/png" });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "what is this?", attachments: [att] });
    await untilFooter(stack.fake, DM);
    expect(stack.provider.prompts).toEqual([
      [
        { type: "text", text: "what is this?" },
        { type: "image", mimeType: "image/png", data: PNG.toString("base64") },
      ],
    ]);
    expect(stack.fake.cdnRequestsFor(att.id)).toHaveLength(1);
    expect(contents(stack)[0]).toMatch(/^A red pixel\./);
  });

  it("without image support it is a file:// link: the bytes are there during the turn, gone after", async () => {
    stack = await startStack({ turns: [answer("Seen.")] });
    const seen = stack.provider.linkedFiles;
    const att = stack.fake.attachment({ filename: "pixel.png", bytes: PNG, contentType: "image/png" });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "", attachments: [att] });
    await untilFooter(stack.fake, DM);
    const prompt = blocks(stack.provider.prompts[0]);
    expect(prompt).toEqual([
      {
        type: "resource_link",
        uri: expect.stringMatching(/^file:\/\//),
        name: "pixel.png",
        mimeType: "image/png",
      },
    ]);
    expect(seen[0]?.get("pixel.png")).toEqual(PNG);
    // Deleted when the turn's frame unwinds, just after the footer was placed.
    const [path] = linkPaths(stack.provider.prompts[0]);
    await vi.waitFor(() => expect(existsSync(path as string)).toBe(false), { timeout: 5000 });
  });

  it("a text file's content is injected next to its link", async () => {
    stack = await startStack({ turns: [answer("Summarized.")] });
    const notes = "# Plan\n- ship attachments\n- write docs ✍️\n";
    const att = stack.fake.attachment({
      filename: "plan.md",
      bytes: Buffer.from(notes, "utf8"),
      contentType: "text/markdown; charset=utf-8",
    });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "summarize", attachments: [att] });
    await untilFooter(stack.fake, DM);
    expect(blocks(stack.provider.prompts[0])).toEqual([
      { type: "text", text: "summarize" },
      { type: "resource_link", uri: expect.any(String), name: "plan.md", mimeType: "text/markdown" },
      { type: "text", text: `Contents of the attached file plan.md:\n${notes}` },
    ]);
  });
});

describe("discord: refused files are visible and fetch nothing they should not", () => {
  it("an oversize file is refused on bytes read, without reading it all, and the user is told", async () => {
    stack = await startStack({ turns: [answer("Only text then.")] });
    const total = 48 * MiB;
    // The descriptor lies (2 KiB): only the bytes read count.
    const att = stack.fake.attachment({
      filename: "huge.png",
      declaredSize: 2048,
      stream: { head: PNG, total },
      contentType: "image/png",
    });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "see this", attachments: [att] });
    await untilFooter(stack.fake, DM);
    expect(contents(stack)[0]).toBe("⚠️ Could not read huge.png: the image is larger than the 20 MiB limit.");
    const [req] = stack.fake.cdnRequestsFor(att.id);
    await vi.waitFor(() => expect(req?.closedEarly).toBe(true), { timeout: 5000 });
    expect(req?.served).toBeLessThan(total);
    const prompt = blocks(stack.provider.prompts[0]);
    expect(prompt.map((b) => b.type)).toEqual(["text", "text"]);
    expect(prompt[1]).toMatchObject({ text: expect.stringContaining("huge.png: the image is larger") });
  });

  it("a declared size beyond every cap is refused without any request", async () => {
    stack = await startStack({ turns: [answer("ok")] });
    const att = stack.fake.attachment({ filename: "movie.mp4", bytes: PNG, declaredSize: 200 * MiB });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "watch", attachments: [att] });
    await untilFooter(stack.fake, DM);
    expect(contents(stack)[0]).toMatch(
      /^⚠️ Could not read movie\.mp4: the file is larger than the 50 MiB limit\.$/,
    );
    expect(stack.fake.cdnRequests).toHaveLength(0);
  });

  it("a redirecting URL and a foreign host are refused; the foreign host is never contacted", async () => {
    stack = await startStack({ turns: [answer("ok")] });
    const target = `${foreign?.url}/stolen.png`;
    const redirecting = stack.fake.attachment({ filename: "moved.png", redirectTo: target });
    const elsewhere = { ...stack.fake.attachment({ filename: "far.png", bytes: PNG }), url: target };
    const cdnLookalike = {
      ...stack.fake.attachment({ filename: "near.png", bytes: PNG }),
      url: "https://cdn.discordapp.com.evil.example/near.png",
    };
    stack.fake.userMessage({
      channelId: DM,
      userId: ALICE,
      content: "three files",
      attachments: [redirecting, elsewhere, cdnLookalike],
    });
    await untilFooter(stack.fake, DM);
    expect(contents(stack)[0]?.split("\n")).toEqual([
      "⚠️ Could not read moved.png: the file could not be fetched (the file server answered with a redirect, which is not followed).",
      "⚠️ Could not read far.png: the file could not be fetched (only HTTPS downloads are allowed).",
      "⚠️ Could not read near.png: the file could not be fetched (cdn.discordapp.com.evil.example is not Discord's file server).",
    ]);
    expect(foreign?.hits).toEqual([]);
    expect(stack.fake.cdnRequests.map((r) => r.path)).toEqual([expect.stringContaining("/moved.png")]);
    const note = blocks(stack.provider.prompts[0]).at(-1);
    expect(note).toMatchObject({
      type: "text",
      text: expect.stringMatching(/moved\.png[\s\S]*far\.png[\s\S]*near\.png/),
    });
  });

  it("a message of refused files only tells the user and runs no empty turn", async () => {
    stack = await startStack({ turns: [answer("Hello!")] });
    const att = stack.fake.attachment({ filename: "dump.bin", bytes: BINARY });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "", attachments: [att] });
    await vi.waitFor(() => expect(contents(stack as Stack)).toHaveLength(1), { timeout: 5000 });
    expect(contents(stack)).toEqual([
      "⚠️ Could not read dump.bin: the file type is not one this agent can read.",
    ]);
    expect(stack.provider.prompts).toEqual([]);
    // The session is intact: the next message is an ordinary turn.
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "hi" });
    await untilFooter(stack.fake, DM);
    expect(stack.provider.prompts).toEqual(["hi"]);
    expect(contents(stack).some((c) => c.includes("did not answer"))).toBe(false);
  });
});

describe("discord: attachments and the turn frame", () => {
  const slowTurn = [
    { type: "text" as const, text: "Working on it." },
    { delayMs: 400 },
    { type: "complete" as const, stopReason: "end_turn" },
  ];

  it("sent mid-turn it is queued, never steered, and fetched only by the drained turn", async () => {
    stack = await startStack({
      turns: [slowTurn, answer("Got the file.")],
      provider: { supportsSteer: true },
    });
    const seen = stack.provider.linkedFiles;
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "start" });
    await vi.waitFor(() => expect(stack?.provider.hasActiveTurn()).toBe(true), { timeout: 5000 });
    const att = stack.fake.attachment({ filename: "pixel.png", bytes: PNG, contentType: "image/png" });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "and this", attachments: [att] });
    await vi.waitFor(
      () =>
        expect(
          contents(stack as Stack).some((c) => c.startsWith('⏳ Queued (1): "and this" 📎 pixel.png')),
        ).toBe(true),
      { timeout: 5000 },
    );
    // Held as a descriptor: nothing was downloaded at arrival.
    expect(stack.fake.cdnRequests).toHaveLength(0);
    await untilFooter(stack.fake, DM, 2);
    expect(stack.provider.steers).toEqual([]);
    expect(stack.fake.cdnRequestsFor(att.id)).toHaveLength(1);
    expect(stack.provider.prompts[0]).toBe("start");
    expect(blocks(stack.provider.prompts[1])).toEqual([
      { type: "text", text: "and this" },
      { type: "resource_link", uri: expect.any(String), name: "pixel.png", mimeType: "image/png" },
    ]);
    expect(seen[1]?.get("pixel.png")).toEqual(PNG);
    const path = linkPaths(stack.provider.prompts[1])[0] as string;
    await vi.waitFor(() => expect(existsSync(path)).toBe(false), { timeout: 5000 });
  });

  it("a caption is content, never a command", async () => {
    stack = await startStack({ turns: [answer("Read it.")] });
    const att = stack.fake.attachment({ filename: "a.txt", bytes: Buffer.from("hello\n") });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "!new", attachments: [att] });
    await untilFooter(stack.fake, DM);
    expect(blocks(stack.provider.prompts[0])[0]).toEqual({ type: "text", text: "!new" });
    expect(contents(stack).some((c) => c.includes("Fresh conversation"))).toBe(false);
  });

  it("the temp files are gone when the turn throws, and the user hears about it", async () => {
    stack = await startStack({ turns: [[{ throws: "agent crashed" }]] });
    const seen = stack.provider.linkedFiles;
    const att = stack.fake.attachment({ filename: "pixel.png", bytes: PNG });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "look", attachments: [att] });
    // The failed turn says why (never a footer alone), and its footer carries the warning mark.
    await vi.waitFor(
      () =>
        expect(contents(stack as Stack)).toEqual([
          expect.stringMatching(/^⚠️ Agent crashed\nTry again, or `!new` to start fresh\.\n-# ⚠️ Finished in/),
        ]),
      { timeout: 5000 },
    );
    expect(seen[0]?.get("pixel.png")).toEqual(PNG);
    const [path] = linkPaths(stack.provider.prompts[0]);
    expect(path).toBeDefined();
    await vi.waitFor(() => expect(existsSync(path as string)).toBe(false), { timeout: 5000 });
  });
});

describe("discord: files to a real ACP agent", () => {
  const agentPath = fileURLToPath(new URL("../fakes/acp/echo-prompt.mjs", import.meta.url));
  const providers: AcpProvider[] = [];
  let fake: FakeDiscord | undefined;
  let running: Awaited<ReturnType<typeof startDiscord>> | undefined;
  let parley: ParleyStore | undefined;

  afterEach(async () => {
    await running?.stop();
    await parley?.close();
    await fake?.close();
    await Promise.all(providers.splice(0).map((p) => p.close()));
    running = undefined;
    fake = undefined;
  });

  async function startWithAgent(argv: string[]): Promise<FakeDiscord> {
    fake = await new FakeDiscord().start();
    fake.addChannel({ id: DM, type: 1 });
    const audit = new MemoryAuditSink();
    const logger = new MemoryLogger();
    const sessions = new SessionManager<PipelineProvider>({
      createProvider: () => {
        const p = new AcpProvider({
          command: process.execPath,
          args: [agentPath, ...argv],
          startTimeoutMs: 5000,
        });
        providers.push(p);
        return p;
      },
    });
    parley = await openTestStore(mkdtempSync(join(tmpdir(), "parley-discord-files-")));
    running = await startDiscord(
      testChannelContext<DiscordSettings>(discordChannel, {
        parley,
        section: { allowedUserIds: [ALICE], apiBase: fake.apiBase },
        env: { DISCORD_BOT_TOKEN: fake.token },
        logger,
        audit,
        sessions,
      }),
      { throttleMs: 0 },
    );
    await running.registration;
    return fake;
  }

  const digest = (b: Uint8Array) => createHash("sha256").update(b).digest("hex").slice(0, 12);

  it("an agent that declared images receives the image block, bytes intact", async () => {
    const f = await startWithAgent([]);
    const att = f.attachment({ filename: "pixel.png", bytes: PNG, contentType: "image/png" });
    f.userMessage({ channelId: DM, userId: ALICE, content: "what is it", attachments: [att] });
    await untilFooter(f, DM);
    const text = f.channelMessages(DM)[0]?.content ?? "";
    expect(text).toContain("text: what is it");
    expect(text).toContain(`image image/png ${digest(PNG)}`);
    expect(f.cdnRequests.every((r) => r.headers.authorization === undefined)).toBe(true);
  });

  it("an agent without image support gets a link it can read during the turn; gone after", async () => {
    const f = await startWithAgent(["no-image"]);
    const att = f.attachment({ filename: "pixel.png", bytes: PNG, contentType: "image/png" });
    f.userMessage({ channelId: DM, userId: ALICE, content: "what is it", attachments: [att] });
    await untilFooter(f, DM);
    const text = f.channelMessages(DM)[0]?.content ?? "";
    const line = /link pixel\.png image\/png (\w+) at (\S+)/.exec(text);
    expect(line?.[1]).toBe(digest(PNG));
    await vi.waitFor(() => expect(existsSync(line?.[2] as string)).toBe(false), { timeout: 5000 });
  });
});
