/**
 * Files from the web chat, through the real server, socket and dispatcher (channel.ts start()), with
 * a ScriptedProvider as the agent: the files reach the agent through the SHARED ingest, as prompt
 * blocks (an image block with exactly the bytes sent when the agent declared images, a text file's
 * content injected), classified by the bytes and never by the browser's type; over-limit uploads and
 * malformed frames are refused visibly and audited while the socket lives on; a message with files
 * sent mid-turn is queued (never steered) and ingested only by the turn that answers it; a caption is
 * content, never a command; the temp files are gone after every turn.
 */
import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { PipelineProvider } from "../../src/messaging/turn/pipeline.js";
import type { PromptContent } from "../../src/messaging/turn/provider-events.js";
import type { ScriptedProviderOptions, ScriptedTurn, ScriptStep } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import type { Connection } from "../../src/webchat/client.js";
import { webchatChannel } from "../../src/webchat/index.js";
import type { Bubble, ServerFrame } from "../../src/webchat/protocol.js";
import {
  base64Length,
  MAX_FRAME_BYTES,
  MAX_TEXT_CHARS,
  MAX_UPLOAD_BYTES,
  MAX_UPLOAD_FILES,
  parseClientFrame,
} from "../../src/webchat/protocol.js";
import { assembleWebChat, start } from "../../src/webchat/start.js";
import { WEBCHAT_CAPABILITIES } from "../../src/webchat/transport.js";
import { testChannelContext } from "../helpers/channel-context.js";
import { permissionRequest } from "../helpers/events.js";
import { ManualClock } from "../helpers/manual-clock.js";

const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);
const NOTES = Buffer.from("line one\nline two ✓\n", "utf8");
const MiB = 1024 * 1024;

const ok = (text = "ok"): ScriptStep[] => [
  { type: "text", text },
  { type: "complete", stopReason: "end_turn" },
];

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** One open page's socket: every frame the server pushed, and the bubbles as the page would show them. */
class Page {
  readonly frames: ServerFrame[] = [];
  private readonly shown = new Map<string, Bubble>();
  closeCode: number | undefined;

  private constructor(private readonly ws: WebSocket) {
    ws.on("message", (data) => {
      const frame = JSON.parse(String(data)) as ServerFrame;
      this.frames.push(frame);
      if (frame.type === "snapshot") for (const b of frame.bubbles) this.shown.set(b.id, b);
      if (frame.type === "upsert") this.shown.set(frame.bubble.id, frame.bubble);
    });
    // A socket the server closed mid-send reports an error too; the close code is what is asserted.
    ws.on("error", () => {});
    ws.on("close", (code) => {
      this.closeCode = code;
    });
  }

  static async open(url: string): Promise<Page> {
    const ws = new WebSocket(url);
    const page = new Page(ws);
    cleanups.push(() => ws.close());
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    await vi.waitFor(() => expect(page.frames.some((f) => f.type === "snapshot")).toBe(true));
    return page;
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === "string" ? frame : JSON.stringify(frame));
  }

  bubbles(role: Bubble["role"]): Bubble[] {
    return [...this.shown.values()].filter((b) => b.role === role);
  }

  errors(): string[] {
    return this.frames.flatMap((f) => (f.type === "error" ? [f.message] : []));
  }
}

const file = (name: string, bytes: Uint8Array, mime = "") => ({
  name,
  mime,
  data: Buffer.from(bytes).toString("base64"),
});

async function startChat(
  o: { image?: boolean; turns?: (ScriptedTurn | ScriptStep[])[]; provider?: ScriptedProviderOptions } = {},
) {
  const audit = new MemoryAuditSink();
  const logger = new MemoryLogger();
  const provider = new ScriptedProvider(o.turns ?? [ok(), ok(), ok()], o.provider ?? {});
  if (o.image) provider.promptCapabilities = { image: true };
  const startedKeys: string[] = [];
  const sessions = new SessionManager<PipelineProvider>({
    createProvider: (key) => {
      startedKeys.push(key);
      return provider;
    },
  });
  const tmpRoot = mkdtempSync(join(tmpdir(), "parley-webchat-files-"));
  const announced: string[] = [];
  const running = await start(
    testChannelContext(webchatChannel, {
      section: { port: 0 },
      logger,
      audit,
      sessions,
      pipeline: { ingestTmpRoot: tmpRoot },
      announce: (line) => announced.push(line),
    }),
  );
  cleanups.push(() => running.stop());
  const base = new URL((announced[0] ?? "").replace("parley web chat: ", ""));
  const token = base.searchParams.get("token") ?? "";
  const open = (conversation = "c1") =>
    Page.open(`ws://${base.host}/ws?token=${encodeURIComponent(token)}&c=${conversation}`);
  /** Waits until the session's turn (and its post-turn bookkeeping) is over. */
  const idle = async () => {
    const key = startedKeys[0] ?? "";
    await vi.waitFor(() => expect(sessions.isBusy(key)).toBe(false), { timeout: 5000 });
  };
  return { audit, provider, sessions, startedKeys, tmpRoot, open, idle };
}

const blocks = (p: string | PromptContent[] | undefined): PromptContent[] => (Array.isArray(p) ? p : []);

describe("web chat files: what the agent receives", () => {
  it("an image arrives as an image block with exactly the bytes sent, and the bubble names it", async () => {
    const c = await startChat({ image: true });
    const page = await c.open();
    page.send({ type: "message", text: "what is this?", files: [file("pixel.png", PNG, "image/png")] });
    await vi.waitFor(() => expect(c.provider.prompts).toHaveLength(1), { timeout: 5000 });
    expect(c.provider.prompts[0]).toEqual([
      { type: "text", text: "what is this?" },
      { type: "image", mimeType: "image/png", data: PNG.toString("base64") },
    ]);
    expect(page.bubbles("user")).toEqual([
      expect.objectContaining({ text: "what is this?", files: ["pixel.png"] }),
    ]);
    await vi.waitFor(() =>
      expect(page.bubbles("assistant").at(-1)).toMatchObject({ text: "ok", final: true }),
    );
    await c.idle();
    expect(readdirSync(c.tmpRoot)).toEqual([]);
  });

  it("the browser's type is never trusted: PNG bytes claimed as text/plain are still an image", async () => {
    const c = await startChat({ image: true });
    const page = await c.open();
    page.send({ type: "message", text: "", files: [file("notes.txt", PNG, "text/plain")] });
    await vi.waitFor(() => expect(c.provider.prompts).toHaveLength(1), { timeout: 5000 });
    expect(c.provider.prompts[0]).toEqual([
      { type: "image", mimeType: "image/png", data: PNG.toString("base64") },
    ]);
  });

  it("a text file is linked and its content injected; the link is alive during the turn and gone after", async () => {
    const c = await startChat();
    const page = await c.open();
    page.send({ type: "message", text: "summarize", files: [file("notes.md", NOTES, "text/markdown")] });
    await vi.waitFor(() => expect(c.provider.prompts).toHaveLength(1), { timeout: 5000 });
    const prompt = blocks(c.provider.prompts[0]);
    expect(prompt[0]).toEqual({ type: "text", text: "summarize" });
    expect(prompt[1]).toMatchObject({ type: "resource_link", name: "notes.md", mimeType: "text/markdown" });
    expect(prompt[2]).toEqual({
      type: "text",
      text: "Contents of the attached file notes.md:\nline one\nline two ✓\n",
    });
    expect(c.provider.linkedFiles[0]?.get("notes.md")).toEqual(NOTES);
    await c.idle();
    const uri = (prompt[1] as { uri: string }).uri;
    expect(existsSync(fileURLToPath(uri))).toBe(false);
    expect(readdirSync(c.tmpRoot)).toEqual([]);
  });
});

describe("web chat files: refusals", () => {
  it("an upload over 25 MiB in total is refused visibly and audited, runs no turn, and the socket lives on", async () => {
    const c = await startChat();
    const page = await c.open();
    const half = Buffer.alloc(MAX_UPLOAD_BYTES / 2, 0x61);
    page.send({
      type: "message",
      text: "two halves and a byte",
      files: [file("a.txt", half), file("b.txt", half), file("c.txt", Buffer.from("x"))],
    });
    await vi.waitFor(() => expect(page.errors()).toHaveLength(1), { timeout: 10_000 });
    expect(page.errors()[0]).toBe("Not sent: the files of one message may total at most 25 MiB.");
    expect(c.audit.find("inbound", "dropped").map((r) => r.fields.reason)).toEqual(["upload_refused"]);
    page.send({ type: "message", text: "hello" });
    await vi.waitFor(() =>
      expect(page.bubbles("assistant").at(-1)).toMatchObject({ text: "ok", final: true }),
    );
    expect(c.provider.prompts).toEqual(["hello"]);
    expect(page.bubbles("user").map((b) => b.text)).toEqual(["hello"]);
    expect(page.closeCode).toBeUndefined();
  });

  it("a file over its kind's shared cap is refused in one visible line; files only, so no turn runs", async () => {
    const c = await startChat();
    const page = await c.open();
    const big = Buffer.alloc(MiB + 1, 0x61); // text: the shared ingest reads at most 1 MiB of it
    page.send({ type: "message", text: "", files: [file("big.txt", big, "text/plain")] });
    await vi.waitFor(() =>
      expect(page.bubbles("system").map((b) => b.text)).toEqual([
        "⚠️ Could not read big.txt: the text is larger than the 1 MiB limit.",
      ]),
    );
    page.send({ type: "message", text: "hello" });
    await vi.waitFor(() =>
      expect(page.bubbles("assistant").at(-1)).toMatchObject({ text: "ok", final: true }),
    );
    // The refused message never prompted the agent: the only prompt is the next message's.
    expect(c.provider.prompts).toEqual(["hello"]);
    await c.idle();
    expect(readdirSync(c.tmpRoot)).toEqual([]);
  });

  it("malformed frames get an error each, audited, and the connection still works", async () => {
    const c = await startChat();
    const page = await c.open();
    const eleven = Array.from({ length: MAX_UPLOAD_FILES + 1 }, (_, i) => file(`f${i}.txt`, NOTES));
    page.send("{not json");
    page.send({ type: "message", text: "x", files: [{ name: "a.txt", mime: "", data: "@@@@" }] });
    page.send({ type: "message", text: "x", files: [{ name: "a.txt", data: "YQ==" }] });
    page.send({ type: "message", text: "" });
    page.send({ type: "message", text: "x", files: eleven });
    await vi.waitFor(() => expect(page.errors()).toHaveLength(5));
    expect(page.errors()).toEqual([
      "Bad frame: not JSON",
      "Bad frame: file data is not base64",
      expect.stringMatching(/^Bad frame: /),
      "Bad frame: a message needs text or a file",
      "Not sent: at most 10 files can be sent with one message.",
    ]);
    expect(c.audit.find("inbound", "dropped").map((r) => r.fields.reason)).toEqual([
      "bad_frame",
      "bad_frame",
      "bad_frame",
      "bad_frame",
      "upload_refused",
    ]);
    page.send({ type: "message", text: "hello" });
    await vi.waitFor(() =>
      expect(page.bubbles("assistant").at(-1)).toMatchObject({ text: "ok", final: true }),
    );
    expect(c.provider.prompts).toEqual(["hello"]);
  });

  it("a frame over the socket bound closes with 1009 and is audited; the page reconnects and goes on", async () => {
    const c = await startChat();
    const page = await c.open();
    page.send("x".repeat(MAX_FRAME_BYTES + 1));
    await vi.waitFor(() => expect(page.closeCode).toBe(1009), { timeout: 10_000 });
    expect(c.audit.find("inbound", "dropped").map((r) => r.fields.reason)).toEqual(["frame_too_large"]);
    const again = await c.open();
    again.send({ type: "message", text: "hello" });
    await vi.waitFor(() =>
      expect(again.bubbles("assistant").at(-1)).toMatchObject({ text: "ok", final: true }),
    );
  });

  it("the socket bound is the largest legal message frame, and no more", () => {
    // Worst case: the longest text, names and types, every character JSON-escaped (6 bytes), and the
    // 25 MiB split over ten files of sizes that each pad their base64.
    const escaped = "\u0001";
    const sizes: number[] = [
      MAX_UPLOAD_BYTES - (MAX_UPLOAD_FILES - 1),
      ...Array<number>(MAX_UPLOAD_FILES - 1).fill(1),
    ];
    const shell = {
      type: "message",
      text: escaped.repeat(MAX_TEXT_CHARS),
      files: sizes.map(() => ({ name: escaped.repeat(255), mime: escaped.repeat(255), data: "" })),
    };
    const largest = Buffer.byteLength(JSON.stringify(shell)) + sizes.reduce((n, s) => n + base64Length(s), 0);
    expect(largest).toBeLessThanOrEqual(MAX_FRAME_BYTES);
    expect(MAX_FRAME_BYTES - largest).toBeLessThan(256 * 1024);
    // And the limits the bound is derived from are the ones the parser enforces.
    const exact = { type: "message", text: "x", files: [file("a.pdf", Buffer.alloc(MAX_UPLOAD_BYTES))] };
    expect("frame" in parseClientFrame(JSON.stringify(exact))).toBe(true);
    const over = { type: "message", text: "x", files: [file("a.pdf", Buffer.alloc(MAX_UPLOAD_BYTES + 1))] };
    expect(parseClientFrame(JSON.stringify(over))).toEqual({
      refusal: { kind: "upload_refused", reason: "the files of one message may total at most 25 MiB" },
    });
  });
});

describe("web chat files: mid-turn and commands", () => {
  it("a message with files sent mid-turn is queued, never steered, and the next turn sees the files", async () => {
    const c = await startChat({
      provider: { supportsSteer: true },
      turns: [{ steps: [permissionRequest()], onPermission: { approve: ok("first") } }, ok("second")],
    });
    const page = await c.open();
    page.send({ type: "message", text: "run the tool" });
    await vi.waitFor(() => expect(page.bubbles("approval")).toHaveLength(1), { timeout: 5000 });
    // Steering is live here: plain text is folded into the running turn...
    page.send({ type: "message", text: "also this" });
    await vi.waitFor(() => expect(c.provider.steers).toEqual(["also this"]));
    // ...but a message with files is held behind a receipt, and nothing is read yet.
    page.send({ type: "message", text: "and read this", files: [file("notes.md", NOTES)] });
    await vi.waitFor(() =>
      expect(page.bubbles("receipt").at(-1)?.text).toBe('⏳ Queued (1): "and read this" 📎 notes.md'),
    );
    expect(c.provider.steers).toEqual(["also this"]);
    expect(readdirSync(c.tmpRoot)).toEqual([]);
    const [button] = page.bubbles("approval")[0]?.buttons ?? [];
    page.send({ type: "press", requestId: button?.requestId, nonce: button?.nonce, verdict: "approve" });
    await vi.waitFor(() => expect(c.provider.prompts).toHaveLength(2), { timeout: 5000 });
    expect(c.provider.prompts[0]).toBe("run the tool");
    const second = blocks(c.provider.prompts[1]);
    expect(second[0]).toEqual({ type: "text", text: "and read this" });
    expect(second[1]).toMatchObject({ type: "resource_link", name: "notes.md" });
    expect(second[2]).toMatchObject({ type: "text", text: expect.stringContaining("line two ✓") });
    expect(c.provider.linkedFiles[1]?.get("notes.md")).toEqual(NOTES);
    await vi.waitFor(() =>
      expect(page.bubbles("assistant").at(-1)).toMatchObject({ text: "second", final: true }),
    );
    expect(page.bubbles("receipt").at(-1)?.text).toBe('▶️ Now answering (1): "and read this" 📎 notes.md');
    await c.idle();
    expect(readdirSync(c.tmpRoot)).toEqual([]);
  });

  it('"/new" as the caption of a file is content for the agent, not a command', async () => {
    const c = await startChat();
    const page = await c.open();
    page.send({ type: "message", text: "/new", files: [file("notes.md", NOTES)] });
    await vi.waitFor(() => expect(c.provider.prompts).toHaveLength(1), { timeout: 5000 });
    expect(blocks(c.provider.prompts[0])[0]).toEqual({ type: "text", text: "/new" });
    await vi.waitFor(() =>
      expect(page.bubbles("assistant").at(-1)).toMatchObject({ text: "ok", final: true }),
    );
    expect(page.bubbles("system")).toEqual([]);
    // Without a file the same text IS the command: it starts a fresh conversation.
    await c.idle();
    page.send({ type: "message", text: "/new" });
    await vi.waitFor(() =>
      expect(page.bubbles("system").map((b) => b.text)).toEqual(["🆕 Fresh conversation started."]),
    );
    expect(c.provider.prompts).toHaveLength(1);
  });
});

describe("web chat files: the held-bytes bound", () => {
  it("files waiting for a running turn are bounded; /stop drops them and frees the room", async () => {
    const audit = new MemoryAuditSink();
    const logger = new MemoryLogger();
    // The first turn waits on a clock that never moves: only /stop ends it.
    const provider = new ScriptedProvider([[{ delayMs: 60_000 }], ok("after")], {
      timers: new ManualClock(),
    });
    const sessions = new SessionManager<PipelineProvider>({ createProvider: () => provider });
    const {
      transport,
      hub,
      frames: dispatcher,
    } = assembleWebChat(testChannelContext(webchatChannel, { sessions, audit, logger }), {
      maxHeldUploadBytes: 10,
    });
    transport.admit("owner", () => {});
    transport.open("c1");
    cleanups.push(() => hub.shutdown());
    const conn: Connection = { conversationId: "c1", principal: "owner", send: () => {} };
    const bubbles = (role: string) => transport.bubbles("c1").filter((b) => b.role === role);
    const eight = { name: "n.txt", mime: "", data: Buffer.from("12345678") };
    dispatcher.handleFrame(conn, { type: "message", text: "take your time" });
    await vi.waitFor(() => expect(provider.hasActiveTurn()).toBe(true), { timeout: 5000 });
    dispatcher.handleFrame(conn, { type: "message", text: "one", files: [eight] });
    await vi.waitFor(() => expect(bubbles("receipt").at(-1)?.text).toBe('⏳ Queued (1): "one" 📎 n.txt'));
    dispatcher.handleFrame(conn, { type: "message", text: "two", files: [eight] });
    await vi.waitFor(() =>
      expect(bubbles("system").at(-1)?.text).toBe(
        "⚠️ Not sent: too many files are already waiting for the running turn. Send this again when it has finished.",
      ),
    );
    expect(audit.find("inbound", "dropped").map((r) => r.fields.reason)).toEqual(["uploads_held"]);
    dispatcher.handleFrame(conn, { type: "message", text: "/stop" });
    await vi.waitFor(() => expect(bubbles("receipt").at(-1)?.text).toBe('🛑 Cancelled (1): "one" 📎 n.txt'));
    dispatcher.handleFrame(conn, { type: "message", text: "three", files: [eight] });
    await vi.waitFor(() => expect(bubbles("assistant").at(-1)).toMatchObject({ text: "after", final: true }));
    expect(provider.prompts.at(-1)).toEqual([
      { type: "text", text: "three" },
      expect.objectContaining({ type: "resource_link", name: "n.txt" }),
      { type: "text", text: "Contents of the attached file n.txt:\n12345678" },
    ]);
  });
});

describe("web chat files: capability", () => {
  it("declares filesInbound", () => {
    expect(WEBCHAT_CAPABILITIES.filesInbound).toBe(true);
  });
});
