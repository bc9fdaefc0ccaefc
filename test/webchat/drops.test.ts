/**
 * No frame is dropped silently: every WebSocket frame (and request, and upgrade) the web chat server
 * does not act on is counted per reason in the channel's drop ledger and audited: a frame of an
 * unknown type, one that is not JSON, a redelivered message, a flood, a wrong token.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { PipelineProvider } from "../../src/messaging/turn/pipeline.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import type { WebChatSettings } from "../../src/webchat/index.js";
import { webchatChannel } from "../../src/webchat/index.js";
import type { ServerFrame } from "../../src/webchat/protocol.js";
import { start } from "../../src/webchat/start.js";
import { openTestStore, testChannelContext } from "../helpers/channel-context.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function chat(section: Record<string, unknown> = {}) {
  const home = mkdtempSync(join(tmpdir(), "parley-webchat-drops-"));
  const parley = await openTestStore(home);
  const provider = new ScriptedProvider([
    [
      { type: "text", text: "ok" },
      { type: "complete", stopReason: "end_turn" },
    ],
  ]);
  const sessions = new SessionManager<PipelineProvider>({ createProvider: () => provider });
  const announced: string[] = [];
  const ctx = testChannelContext<WebChatSettings>(webchatChannel, {
    parley,
    sessions,
    logger: new MemoryLogger(),
    section: { port: 0, ...section },
    announce: (line) => announced.push(line),
  });
  const running = await start(ctx);
  cleanups.push(async () => {
    await running.stop();
    await sessions.closeAll();
    await parley.close();
  });
  const base = new URL((announced[0] ?? "").replace("parley web chat: ", ""));
  const token = base.searchParams.get("token") ?? "";
  return { ctx, provider, base, token, drops: ctx.dropLedger, audit: ctx.audit };
}

/** An open socket and every frame the server pushed to it. */
async function socket(url: string): Promise<{ ws: WebSocket; frames: ServerFrame[] }> {
  const ws = new WebSocket(url);
  const frames: ServerFrame[] = [];
  ws.on("message", (d) => frames.push(JSON.parse(String(d)) as ServerFrame));
  cleanups.push(() => ws.close());
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  await vi.waitFor(() => expect(frames.some((f) => f.type === "snapshot")).toBe(true));
  return { ws, frames };
}

const errors = (frames: ServerFrame[]) => frames.flatMap((f) => (f.type === "error" ? [f.message] : []));
const accepted = (frames: ServerFrame[]) => frames.flatMap((f) => (f.type === "accepted" ? [f.id] : []));

describe("web chat: inbound drops are counted", () => {
  it("a frame of an unknown type is counted as an unknown shape, named, and answered with an error", async () => {
    const c = await chat();
    const page = await socket(`ws://${c.base.host}/ws?token=${c.token}&c=c1`);
    page.ws.send(JSON.stringify({ type: "typing" }));
    page.ws.send("{not json");
    await vi.waitFor(() => expect(errors(page.frames)).toHaveLength(2));
    expect(errors(page.frames)).toEqual(["Bad frame: unknown frame type", "Bad frame: not JSON"]);
    expect(c.drops.count("webchat", "unknown_shape")).toBe(1);
    expect(c.drops.count("webchat", "bad_frame")).toBe(1);
    expect(c.audit.find("inbound", "dropped").map((r) => [r.fields.reason, r.fields.shape])).toEqual([
      ["unknown_shape", "typing"],
      ["bad_frame", undefined],
    ]);
  });

  it("a message sent again with the same id is counted as a duplicate, acknowledged again, and runs once", async () => {
    const c = await chat();
    const page = await socket(`ws://${c.base.host}/ws?token=${c.token}&c=c1`);
    const frame = JSON.stringify({ type: "message", id: "m1", text: "hello" });
    page.ws.send(frame);
    await vi.waitFor(() => expect(accepted(page.frames)).toEqual(["m1"]));
    page.ws.send(frame);
    await vi.waitFor(() => expect(accepted(page.frames)).toEqual(["m1", "m1"]));
    // Counted once, by the journal (the channel does not count it again).
    expect(c.drops.count("webchat", "redelivered")).toBe(1);
    expect(c.drops.count("webchat", "duplicate")).toBe(0);
    expect(c.audit.find("intake", "dropped").map((r) => [r.fields.reason, r.fields.conversation])).toEqual([
      ["redelivered", "c1"],
    ]);
    await vi.waitFor(() => expect(c.provider.prompts).toEqual(["hello"]));
  });

  it("a wrong token, on the page or the socket, and a flood are counted", async () => {
    const c = await chat({ frameBurst: 1, framesPerSecond: 0.1 });
    expect((await fetch(`http://${c.base.host}/?token=wrong`)).status).toBe(401);
    const refused = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`ws://${c.base.host}/ws?token=wrong&c=c1`);
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.on("error", () => {});
    });
    expect(refused).toBe(401);
    const page = await socket(`ws://${c.base.host}/ws?token=${c.token}&c=c1`);
    page.ws.send(JSON.stringify({ type: "message", text: "/help" }));
    page.ws.send(JSON.stringify({ type: "message", text: "/help" }));
    await vi.waitFor(() => expect(c.drops.count("webchat", "rate_limited")).toBe(1));
    expect(c.drops.count("webchat", "bad_token")).toBe(2);
    expect(c.audit.find("webchat.socket", "refused").map((r) => r.fields)).toEqual([
      { channel: "webchat", reason: "bad_token", request: "page" },
      { channel: "webchat", reason: "bad_token" },
      { channel: "webchat", reason: "rate_limited", conversation: "c1" },
    ]);
  });
});
