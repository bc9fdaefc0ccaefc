/**
 * The web chat's edge under misuse: a socket from another site's page (or a sandboxed "null" one) is
 * refused; sockets are capped per conversation and in total; a flood of frames is answered with an
 * error and dropped; every refusal is audited. The token leaves the address: a cookie carries it.
 * The favicon needs no token. Conversations nobody has open are dropped from memory once idle.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { PipelineProvider } from "../../src/messaging/turn/pipeline.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { RATE_LIMITED, SESSION_COOKIE } from "../../src/webchat/client.js";
import type { WebChatSettings } from "../../src/webchat/index.js";
import { webchatChannel } from "../../src/webchat/index.js";
import { start } from "../../src/webchat/start.js";
import { testChannelContext } from "../helpers/channel-context.js";
import { ManualClock } from "../helpers/manual-clock.js";

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

async function chat(section: Partial<WebChatSettings> = {}, clock?: ManualClock) {
  const audit = new MemoryAuditSink();
  const sessions = new SessionManager<PipelineProvider>({ createProvider: () => new ScriptedProvider([]) });
  const announced: string[] = [];
  const running = await start(
    testChannelContext<WebChatSettings>(webchatChannel, {
      section: { port: 0, ...section },
      sessions,
      audit,
      ...(clock ? { clock } : {}),
      announce: (l) => announced.push(l),
    }),
  );
  stops.push(() => running.stop());
  const page = new URL((announced[0] ?? "").replace("parley web chat: ", ""));
  const token = page.searchParams.get("token") ?? "";
  const base = `ws://${page.host}/ws`;
  return { audit, page, token, base, host: page.host };
}

/** Opens a socket; resolves with it, or with the HTTP status the upgrade was refused with. */
function connect(url: string, headers: Record<string, string> = {}): Promise<WebSocket | number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.once("open", () => resolve(ws));
    ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    ws.once("error", () => resolve(-1));
  });
}

const sockets: WebSocket[] = [];
afterEach(() => {
  for (const ws of sockets.splice(0)) ws.close();
});
async function opened(url: string, headers: Record<string, string> = {}): Promise<WebSocket> {
  const ws = await connect(url, headers);
  if (typeof ws === "number") throw new Error(`refused with ${ws}`);
  sockets.push(ws);
  return ws;
}

describe("web chat limits", () => {
  it("a socket from another origin, or a null one, is refused and audited; its own origin is not", async () => {
    const c = await chat({ allowedOrigins: ["https://chat.example.org"] });
    const url = `${c.base}?token=${c.token}&c=c1`;
    expect(await connect(url, { Origin: "https://evil.example" })).toBe(403);
    expect(await connect(url, { Origin: "null" })).toBe(403);
    await opened(url, { Origin: `http://${c.host}` });
    await opened(url, { Origin: "https://chat.example.org" });
    expect(c.audit.find("webchat.socket", "refused").map((r) => r.fields)).toEqual([
      { channel: "webchat", reason: "foreign_origin", origin: "https://evil.example" },
      { channel: "webchat", reason: "foreign_origin", origin: "null" },
    ]);
  });

  it("sockets are capped per conversation and in total", async () => {
    const c = await chat({ maxSockets: 3, maxSocketsPerConversation: 2 });
    const url = (conv: string) => `${c.base}?token=${c.token}&c=${conv}`;
    await opened(url("a"));
    await opened(url("a"));
    expect(await connect(url("a"))).toBe(429);
    await opened(url("b"));
    expect(await connect(url("c"))).toBe(503);
    expect(c.audit.find("webchat.socket", "refused").map((r) => r.fields.reason)).toEqual([
      "too_many_conversation_sockets",
      "too_many_sockets",
    ]);
  });

  it("a flood of frames is answered with an error and dropped, and audited", async () => {
    const clock = new ManualClock();
    const c = await chat({ frameBurst: 3, framesPerSecond: 1 }, clock);
    const ws = await opened(`${c.base}?token=${c.token}&c=c1`);
    const errors: string[] = [];
    ws.on("message", (d) => {
      const frame = JSON.parse(String(d)) as { type: string; message?: string };
      if (frame.type === "error") errors.push(frame.message ?? "");
    });
    for (let i = 0; i < 5; i++) ws.send(JSON.stringify({ type: "message", text: "/help" }));
    await vi.waitFor(() => expect(errors).toEqual([RATE_LIMITED, RATE_LIMITED]));
    expect(c.audit.find("webchat.socket", "refused").map((r) => r.fields.reason)).toEqual([
      "rate_limited",
      "rate_limited",
    ]);
    // Time refills the bucket.
    await clock.advance(2000);
    ws.send(JSON.stringify({ type: "message", text: "/help" }));
    await new Promise((r) => setTimeout(r, 100));
    expect(errors).toHaveLength(2);
  });

  it("the page sets an HttpOnly cookie that authenticates reloads and sockets; the favicon needs no token", async () => {
    const c = await chat();
    const first = await fetch(`http://${c.host}/?token=${c.token}`);
    expect(first.status).toBe(200);
    const cookie = first.headers.get("set-cookie") ?? "";
    expect(cookie).toBe(`${SESSION_COOKIE}=${c.token}; HttpOnly; SameSite=Strict; Path=/`);
    const reload = await fetch(`http://${c.host}/`, { headers: { cookie: `${SESSION_COOKIE}=${c.token}` } });
    expect(reload.status).toBe(200);
    expect((await fetch(`http://${c.host}/`)).status).toBe(401);
    expect(
      (await fetch(`http://${c.host}/`, { headers: { cookie: `${SESSION_COOKIE}=wrong` } })).status,
    ).toBe(401);
    await opened(`${c.base}?c=c1`, { cookie: `${SESSION_COOKIE}=${c.token}` });
    expect(await connect(`${c.base}?c=c1`)).toBe(401);
    expect((await fetch(`http://${c.host}/favicon.ico`)).status).toBe(204);
  });

  it("a conversation nobody has open is dropped from memory once idle", async () => {
    const clock = new ManualClock();
    const c = await chat({ idleConversationMinutes: 5 }, clock);
    const ws = await opened(`${c.base}?token=${c.token}&c=kept`);
    const gone = await opened(`${c.base}?token=${c.token}&c=gone`);
    ws.send(JSON.stringify({ type: "message", text: "/help" }));
    gone.send(JSON.stringify({ type: "message", text: "/help" }));
    await new Promise((r) => setTimeout(r, 100));
    gone.close();
    await new Promise((r) => setTimeout(r, 50));
    await clock.advance(6 * 60_000);
    // A new page on the pruned conversation gets an empty snapshot; the open one keeps its bubbles.
    const snapshot = (conv: string) =>
      new Promise<number>((resolve) => {
        const s = new WebSocket(`${c.base}?token=${c.token}&c=${conv}`);
        sockets.push(s);
        s.once("message", (d) => resolve((JSON.parse(String(d)) as { bubbles: unknown[] }).bubbles.length));
      });
    expect(await snapshot("gone")).toBe(0);
    expect(await snapshot("kept")).toBeGreaterThan(0);
  });
});
