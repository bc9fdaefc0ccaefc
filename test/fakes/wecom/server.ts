/**
 * A loopback fake of WeCom's AI-bot long connection, at the wire: one node:http server on 127.0.0.1
 * and a random port, carrying the WebSocket (the JSON frames) and the HTTP side (encrypted media and
 * response_url). The real `ws` client in src/wecom is pointed at it through wecom.wsUrl.
 *
 * It answers what WeCom answers: a subscribe accepted or refused (and a second subscriber kicks the
 * first), ping answers, reply frames applied the way WeCom renders them (each frame REPLACES its
 * bubble, `finish` seals it, a bubble is writable for 10 minutes on the fake's clock, an unknown or
 * expired req_id is 846605, a dead bubble 846608, content over 20,480 UTF-8 bytes refused), pushes
 * with the per-conversation budget (30 a minute and 1,000 an hour, counted on the fake's own receipt
 * clock: two pushes 59,999 ms apart are inside one minute) refused with 45009, and the
 * cold-conversation refusal. The network is the test's: answers can be delayed, reordered or
 * withheld, a frame can be lost in transit, or the connection can die with a frame in flight (not
 * applied either way). It records what a user would see: each bubble's last accepted content, each
 * accepted push and response_url post, in the order they first appeared.
 *
 * Every frame and field it emits is listed, with its source, in docs/channels/wecom.md (## Wire).
 *
 * Bounded and self-stopping: recordings are capped, and it stops after `lifetimeMs`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";
import { encodeMediaKey, encryptMedia, newMediaKey } from "./media.js";

export const ERR_UNROUTABLE = 846605;
export const ERR_STREAM_DEAD = 846608;
// The refusal values below come from WeCom's global error-code table (document/path/90313), each
// chosen for its documented meaning; which code the long connection really sends for these cases is
// not documented, and parley reads every non-zero code alike (bar 846605/846608), so none is asserted.
/** 40001 不合法的secret参数: a subscribe whose bot_id/secret do not match. */
export const ERR_BAD_CREDENTIALS = 40_001;
/** 45002 消息内容大小超过限制: content over the SDK's 20,480-byte cap. */
export const ERR_TOO_LONG = 45_002;
/** 44004 文本消息content参数为空: a response_url post with no content. */
export const ERR_EMPTY = 44_004;
export const ERR_RATE = 45009;
/** 40058 不合法的参数 (传递参数不符合系统要求): a push or response_url post the platform would refuse. */
export const ERR_INVALID = 40_058;
const MAX_BYTES = 20_480;

/** A short, fixed errmsg per refusal (WeCom's wording is not a contract; the client never reads it). */
export function errmsgOf(errcode: number): string {
  if (errcode === ERR_UNROUTABLE) return "invalid req_id";
  if (errcode === ERR_STREAM_DEAD) return "stream message update expired";
  if (errcode === ERR_RATE) return "api freq out of limit";
  return "request refused by the fake";
}
const MAX_RECORDS = 5_000;

type Json = Record<string, unknown>;

export interface FakeWeComOptions {
  botId?: string;
  secret?: string;
  /** The fake's clock: bubble lifetime, the push budget, media expiry, req_id lifetime. */
  now?: () => number;
  lifetimeMs?: number;
  streamLifetimeMs?: number;
  pushesPerMinute?: number;
  pushesPerHour?: number;
  /** How long a callback's req_id can still be replied to (on the fake's clock). */
  reqIdTtlMs?: number;
}

export interface Bubble {
  reqId: string;
  streamId: string;
  /** The content the user sees: the last ACCEPTED frame's. */
  content: string;
  finished: boolean;
  createdAt: number;
  frames: number;
  seq: number;
}

export interface Push {
  chatId: string;
  content: string;
  accepted: boolean;
  errcode: number;
  at: number;
  seq: number;
}

export interface RecordedFrame {
  cmd: string;
  reqId: string;
  body: Json | undefined;
  /** What the fake answered (null: withheld). */
  errcode: number | null;
  at: number;
}

export interface CallbackSpec {
  /** null: a frame with no sender at all. */
  userid?: string | null;
  chattype?: "single" | "group";
  msgtype?: "text" | "image" | "file" | "video" | "voice" | "mixed";
  text?: string;
  /** null: no msgid. */
  msgid?: string | null;
  media?: { url: string; aeskey: string };
  mixed?: Json[];
  voice?: string;
  /** Give the message a response_url (default true). */
  responseUrl?: boolean;
  /** Reuse this req_id (a redelivery). */
  reqId?: string;
}

interface HostedMedia {
  cipher: Buffer;
  expiresAt: number;
  /** Served as zeros after the real bytes, to this many bytes (a body longer than any cap). */
  streamTotal?: number;
  requests: number;
}

interface HeldAck {
  ws: WebSocket;
  frame: Json;
}

type FrameMatch = (cmd: string, body: Json | undefined) => boolean;

/** What the network does to one frame on its way in (test-side). */
type Mishap =
  /** Never arrives: not applied, never answered; the socket stays up. */
  | "lost"
  /** The connection dies with it in flight: not applied, the socket is cut. */
  | "drop"
  /** Applied, but its answer never comes back. */
  | "ack_lost";

export class FakeWeCom {
  readonly botId: string;
  secret: string;
  wsUrl = "";
  origin = "";
  readonly frames: RecordedFrame[] = [];
  readonly pushes: Push[] = [];
  readonly posts: { path: string; content: string; accepted: boolean; seq: number }[] = [];
  readonly mediaRequests: { path: string; served: boolean }[] = [];
  subscribes = 0;
  pings = 0;
  /** "immediate": every frame answered at once; "hold": answers wait for releaseAcks; "none": withheld. */
  replyAcks: "immediate" | "hold" | "none" = "immediate";
  answerPings = true;

  private readonly server = createServer((req, res) => void this.http(req, res));
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly now: () => number;
  private readonly lifetimeMs: number;
  private readonly streamLifetimeMs: number;
  private readonly pushesPerMinute: number;
  private readonly pushesPerHour: number;
  private readonly reqIdTtlMs: number;
  private lifetimeTimer: ReturnType<typeof setTimeout> | undefined;
  private active: WebSocket | null = null;
  private readonly sockets = new Set<WebSocket>();
  private readonly reqIds = new Map<string, { userid: string; at: number }>();
  private readonly unroutable = new Set<string>();
  private readonly bubbleMap = new Map<string, Bubble>();
  private readonly warm = new Set<string>();
  private readonly pushTimes = new Map<string, number[]>();
  private readonly media = new Map<string, HostedMedia>();
  private readonly responseUrls = new Map<string, { used: boolean }>();
  private readonly reqTokens = new Map<string, string>();
  private readonly held: HeldAck[] = [];
  private readonly refusals: { match: FrameMatch; errcode: number }[] = [];
  private readonly mishaps: { match: FrameMatch; mishap: Mishap }[] = [];
  private seq = 0;
  private n = 0;
  private stopped = false;
  private waiters = new Set<() => void>();
  private lastBody: Json = {};

  constructor(o: FakeWeComOptions = {}) {
    this.botId = o.botId ?? "aibk-fake-bot-0001";
    this.secret = o.secret ?? "fake-secret-value";
    this.now = o.now ?? (() => Date.now());
    this.lifetimeMs = o.lifetimeMs ?? 60_000;
    this.streamLifetimeMs = o.streamLifetimeMs ?? 10 * 60_000;
    this.pushesPerMinute = o.pushesPerMinute ?? 30;
    this.pushesPerHour = o.pushesPerHour ?? 1_000;
    this.reqIdTtlMs = o.reqIdTtlMs ?? 24 * 3600_000;
    this.server.on("upgrade", (req, socket, head) => {
      this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws));
    });
  }

  static async start(o: FakeWeComOptions = {}): Promise<FakeWeCom> {
    const fake = new FakeWeCom(o);
    await new Promise<void>((resolve) => fake.server.listen(0, "127.0.0.1", resolve));
    const { port } = fake.server.address() as AddressInfo;
    fake.wsUrl = `ws://127.0.0.1:${port}`;
    fake.origin = `http://127.0.0.1:${port}`;
    fake.lifetimeTimer = setTimeout(() => void fake.stop(), fake.lifetimeMs);
    fake.lifetimeTimer.unref();
    return fake;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.lifetimeTimer);
    for (const ws of this.sockets) ws.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // ── test-side controls ────────────────────────────────────────────────────────────────────

  get connected(): boolean {
    return this.active !== null;
  }

  /** Resolve once `cond` holds (checked on every recorded change), or reject after `ms`. */
  async waitFor(cond: () => boolean, ms = 5000, what = "condition"): Promise<void> {
    if (cond()) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`fake wecom: timed out waiting for ${what}`));
      }, ms);
      const check = () => {
        if (!cond()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
    });
  }

  /** A user's message to the subscribed connection; its req_id and msgid. */
  callback(spec: CallbackSpec): { reqId: string; msgid: string | null } {
    const ws = this.active;
    if (!ws) throw new Error("fake wecom: nobody is subscribed");
    const reqId = spec.reqId ?? `cb-${++this.n}-${Math.random().toString(36).slice(2, 8)}`;
    const msgid =
      spec.msgid === undefined ? `msg-${this.n}-${Math.random().toString(36).slice(2, 8)}` : spec.msgid;
    const userid = spec.userid === undefined ? "zhangsan" : spec.userid;
    const chattype = spec.chattype ?? "single";
    this.reqIds.set(reqId, { userid: userid ?? "", at: this.now() });
    // WeCom only delivers a push into a conversation the user has written to.
    if (userid && chattype === "single") this.warm.add(userid);
    const msgtype = spec.msgtype ?? "text";
    const body: Json = {
      ...(msgid !== null ? { msgid } : {}),
      aibotid: this.botId,
      chattype,
      ...(chattype === "group" ? { chatid: "wrgroupchat001" } : {}),
      ...(userid !== null ? { from: { userid } } : { from: {} }),
      msgtype,
    };
    if (msgtype === "text") body.text = { content: spec.text ?? "" };
    if (msgtype === "voice") body.voice = { content: spec.voice ?? spec.text ?? "" };
    if (msgtype === "image" || msgtype === "file" || msgtype === "video") body[msgtype] = spec.media;
    if (msgtype === "mixed") body.mixed = { msg_item: spec.mixed ?? [] };
    if (spec.responseUrl !== false) {
      // A redelivered frame (same req_id) carries the same response_url.
      const token = this.reqTokens.get(reqId) ?? `r${++this.n}`;
      this.reqTokens.set(reqId, token);
      if (!this.responseUrls.has(token)) this.responseUrls.set(token, { used: false });
      body.response_url = `${this.origin}/response/${token}`;
    }
    this.lastBody = body;
    ws.send(JSON.stringify({ cmd: "aibot_msg_callback", headers: { req_id: reqId }, body }));
    return { reqId, msgid };
  }

  /** The body of the last callback sent (its response_url, its media). */
  lastCallbackBody(): Json {
    return this.lastBody;
  }

  /** An event frame (enter_chat, feedback_event) to the subscribed connection. */
  event(eventType: string, userid = "zhangsan"): void {
    this.active?.send(
      JSON.stringify({
        cmd: "aibot_event_callback",
        headers: { req_id: `ev-${++this.n}` },
        body: { msgid: `ev-${this.n}`, msgtype: "event", from: { userid }, event: { eventtype: eventType } },
      }),
    );
  }

  /** A frame of the test's own making to the subscribed connection (a shape WeCom may send one day). */
  raw(data: string): void {
    this.active?.send(data);
  }

  /** A binary frame (WeCom sends JSON text only: aibot-node-sdk src/ws.ts parses every frame as JSON). */
  rawBinary(data: Buffer): void {
    this.active?.send(data, { binary: true });
  }

  /** Another process subscribed with the same bot: the current connection is disconnected. */
  kick(): void {
    const ws = this.active;
    if (!ws) return;
    this.active = null;
    ws.send(
      JSON.stringify({
        cmd: "aibot_event_callback",
        headers: { req_id: `ev-${++this.n}` },
        body: { msgtype: "event", event: { eventtype: "disconnected_event" } },
      }),
    );
    setTimeout(() => ws.close(), 20).unref();
  }

  /** The network drops the subscribed connection (no event, no close handshake). */
  drop(): void {
    const ws = this.active;
    this.active = null;
    ws?.terminate();
  }

  /** Every later reply on this req_id is unroutable (846605). */
  makeUnroutable(reqId: string): void {
    this.unroutable.add(reqId);
  }

  /** The next frame (or push) `match` accepts is refused with `errcode`. */
  refuseNext(match: (cmd: string, body: Json | undefined) => boolean, errcode: number): void {
    this.refusals.push({ match, errcode });
  }

  /** The next frame `match` accepts meets `mishap` on the way in (lost, the socket cut, or its answer lost). */
  mishapNext(match: FrameMatch, mishap: Mishap): void {
    this.mishaps.push({ match, mishap });
  }

  /** Send the held answers (in reverse order, to reorder them). */
  releaseAcks(opts: { reverse?: boolean } = {}): void {
    const batch = this.held.splice(0);
    if (opts.reverse) batch.reverse();
    for (const h of batch) if (h.ws.readyState === h.ws.OPEN) h.ws.send(JSON.stringify(h.frame));
  }

  get heldAcks(): number {
    return this.held.length;
  }

  /** Host an encrypted object; the fields a callback's media item carries. */
  hostMedia(
    plain: Uint8Array,
    o: {
      ttlMs?: number;
      badPad?: boolean;
      streamTotal?: number;
    } = {},
  ): { url: string; aeskey: string } {
    const key = newMediaKey();
    const id = `m${++this.n}`;
    this.media.set(id, {
      cipher: encryptMedia(plain, key, o.badPad ? { badPad: true } : {}),
      expiresAt: this.now() + (o.ttlMs ?? 5 * 60_000),
      ...(o.streamTotal !== undefined ? { streamTotal: o.streamTotal } : {}),
      requests: 0,
    });
    return {
      url: `${this.origin}/media/${id}?sign=q-sign-fake`,
      aeskey: encodeMediaKey(key),
    };
  }

  /** The bubbles, in the order they first appeared. */
  bubbles(): Bubble[] {
    return [...this.bubbleMap.values()].sort((a, b) => a.seq - b.seq);
  }

  /** What a user reads, in order: bubbles (their accepted content), accepted pushes and posts. */
  visible(): string[] {
    const entries: { seq: number; text: string }[] = [
      ...this.bubbles()
        .filter((b) => b.seq > 0)
        .map((b) => ({ seq: b.seq, text: b.content })),
      ...this.pushes.filter((p) => p.accepted).map((p) => ({ seq: p.seq, text: p.content })),
      ...this.posts.filter((p) => p.accepted).map((p) => ({ seq: p.seq, text: p.content })),
    ];
    return entries.sort((a, b) => a.seq - b.seq).map((e) => e.text);
  }

  framesOf(cmd: string): RecordedFrame[] {
    return this.frames.filter((f) => f.cmd === cmd);
  }

  // ── the WebSocket ─────────────────────────────────────────────────────────────────────────

  private accept(ws: WebSocket): void {
    if (this.stopped) {
      ws.terminate();
      return;
    }
    this.sockets.add(ws);
    ws.on("message", (data) => this.onFrame(ws, String(data)));
    ws.on("close", () => {
      this.sockets.delete(ws);
      if (this.active === ws) this.active = null;
      this.changed();
    });
  }

  private onFrame(ws: WebSocket, data: string): void {
    let frame: Json;
    try {
      frame = JSON.parse(data) as Json;
    } catch {
      return;
    }
    const cmd = String(frame.cmd ?? "");
    const reqId = String((frame.headers as Json | undefined)?.req_id ?? "");
    const body = frame.body as Json | undefined;
    const m = this.mishaps.findIndex((x) => x.match(cmd, body));
    const mishap = m < 0 ? undefined : this.mishaps.splice(m, 1)[0]?.mishap;
    if (mishap === "lost" || mishap === "drop") {
      // Never reached WeCom: nothing applied, nothing answered (recorded for the test to see).
      this.record({ cmd, reqId, body, errcode: null, at: this.now() });
      if (mishap === "drop") {
        if (this.active === ws) this.active = null;
        ws.terminate();
      }
      return;
    }
    let errcode: number | null;
    switch (cmd) {
      case "aibot_subscribe":
        errcode = this.subscribe(ws, body);
        break;
      case "ping":
        this.pings += 1;
        errcode = this.answerPings ? 0 : null;
        break;
      case "aibot_respond_msg":
        errcode = this.respond(reqId, body);
        break;
      case "aibot_send_msg":
        errcode = this.push(body);
        break;
      default:
        // A cmd WeCom's SDK never sends: what WeCom answers is not documented, so nothing is.
        errcode = null;
    }
    this.record({ cmd, reqId, body, errcode, at: this.now() });
    if (errcode === null || mishap === "ack_lost") return;
    // The answer's shape: aibot-node-sdk src/types/api.ts (WsFrame) and src/ws.ts (handleFrame).
    const answer = { headers: { req_id: reqId }, errcode, errmsg: errcode === 0 ? "ok" : errmsgOf(errcode) };
    const isReply = cmd === "aibot_respond_msg" || cmd === "aibot_send_msg";
    if (isReply && this.replyAcks === "none") return;
    if (isReply && this.replyAcks === "hold") this.held.push({ ws, frame: answer });
    else ws.send(JSON.stringify(answer));
    if (cmd === "aibot_subscribe" && errcode !== 0) setTimeout(() => ws.close(), 20).unref();
  }

  private subscribe(ws: WebSocket, body: Json | undefined): number {
    this.subscribes += 1;
    if (body?.bot_id !== this.botId || body?.secret !== this.secret) return ERR_BAD_CREDENTIALS;
    // One subscriber per bot: the earlier one is told and disconnected.
    const previous = this.active;
    this.active = ws;
    if (previous && previous !== ws) {
      previous.send(
        JSON.stringify({
          cmd: "aibot_event_callback",
          headers: { req_id: `ev-${++this.n}` },
          body: { msgtype: "event", event: { eventtype: "disconnected_event" } },
        }),
      );
      setTimeout(() => previous.close(), 20).unref();
    }
    return 0;
  }

  private injected(cmd: string, body: Json | undefined): number | undefined {
    const i = this.refusals.findIndex((r) => r.match(cmd, body));
    if (i < 0) return undefined;
    const [r] = this.refusals.splice(i, 1);
    return r?.errcode;
  }

  private respond(reqId: string, body: Json | undefined): number {
    const stream = body?.stream as Json | undefined;
    const streamId = String(stream?.id ?? "");
    const content = String(stream?.content ?? "");
    const finish = stream?.finish === true;
    const req = this.reqIds.get(reqId);
    if (!req || this.unroutable.has(reqId) || this.now() - req.at > this.reqIdTtlMs) return ERR_UNROUTABLE;
    const key = `${reqId}\u0000${streamId}`;
    let bubble = this.bubbleMap.get(key);
    if (bubble?.finished) return ERR_STREAM_DEAD;
    if (bubble && this.now() - bubble.createdAt >= this.streamLifetimeMs) return ERR_STREAM_DEAD;
    if (Buffer.byteLength(content) > MAX_BYTES) return ERR_TOO_LONG;
    const refused = this.injected("aibot_respond_msg", body);
    if (!bubble) {
      bubble = { reqId, streamId, content: "", finished: false, createdAt: this.now(), frames: 0, seq: 0 };
      this.bubbleMap.set(key, bubble);
    }
    bubble.frames += 1;
    if (refused !== undefined) return refused;
    // WeCom shows a bubble from its first accepted frame; each frame replaces it.
    if (bubble.seq === 0) bubble.seq = ++this.seq;
    bubble.content = content;
    if (finish) bubble.finished = true;
    return 0;
  }

  private push(body: Json | undefined): number {
    const chatId = String(body?.chatid ?? "");
    const content = String((body?.markdown as Json | undefined)?.content ?? "");
    const at = this.now();
    const record = (errcode: number) => {
      if (this.pushes.length < MAX_RECORDS)
        this.pushes.push({ chatId, content, accepted: errcode === 0, errcode, at, seq: ++this.seq });
      return errcode;
    };
    if (!this.warm.has(chatId)) return record(ERR_INVALID);
    if (Buffer.byteLength(content) > MAX_BYTES) return record(ERR_TOO_LONG);
    // Counted on the receipt clock: a push is inside a window while less than its length has passed.
    const times = (this.pushTimes.get(chatId) ?? []).filter((t) => at - t < 3_600_000);
    const lastMinute = times.filter((t) => at - t < 60_000).length;
    if (lastMinute >= this.pushesPerMinute || times.length >= this.pushesPerHour) return record(ERR_RATE);
    const refused = this.injected("aibot_send_msg", body);
    if (refused !== undefined) return record(refused);
    times.push(at);
    this.pushTimes.set(chatId, times);
    return record(0);
  }

  private record(frame: RecordedFrame): void {
    if (this.frames.length < MAX_RECORDS) this.frames.push(frame);
    this.changed();
  }

  private changed(): void {
    for (const check of [...this.waiters]) check();
  }

  // ── HTTP: media and response_url ──────────────────────────────────────────────────────────

  private async http(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", this.origin);
    const [, kind, id] = url.pathname.split("/");
    if (req.method === "GET" && kind === "media" && id) return this.serveMedia(id, url.pathname, res);
    if (req.method === "POST" && kind === "response" && id)
      return this.responsePost(id, url.pathname, req, res);
    res.writeHead(404).end();
  }

  private serveMedia(id: string, path: string, res: ServerResponse): void {
    const media = this.media.get(id);
    const ok = media !== undefined && this.now() <= media.expiresAt;
    if (this.mediaRequests.length < MAX_RECORDS) this.mediaRequests.push({ path, served: ok });
    this.changed();
    if (!media || !ok) {
      res.writeHead(403, { "content-type": "application/xml" }).end("<Error>Request has expired</Error>");
      return;
    }
    media.requests += 1;
    if (media.streamTotal === undefined) {
      res.writeHead(200, {
        "content-type": "application/octet-stream",
        "content-length": media.cipher.length,
      });
      res.end(media.cipher);
      return;
    }
    // A body past any cap, under backpressure, and no length claimed at all.
    let sent = 0;
    const total = media.streamTotal;
    res.writeHead(200, { "content-type": "application/octet-stream" });
    const zeros = Buffer.alloc(64 * 1024);
    const pump = () => {
      while (sent < total) {
        const piece = sent === 0 ? media.cipher : zeros.subarray(0, Math.min(zeros.length, total - sent));
        sent += piece.length;
        if (!res.write(piece)) return void res.once("drain", pump);
      }
      res.end();
    };
    res.on("close", () => {
      sent = total;
    });
    pump();
  }

  private async responsePost(
    token: string,
    path: string,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > 256 * 1024) break;
      chunks.push(chunk as Buffer);
    }
    let content = "";
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Json;
      content = String((body.markdown as Json | undefined)?.content ?? "");
    } catch {
      content = "";
    }
    const slot = this.responseUrls.get(token);
    let errcode = 0;
    if (!slot || slot.used) errcode = ERR_INVALID;
    else if (content === "") errcode = ERR_EMPTY;
    else if (Buffer.byteLength(content) > MAX_BYTES) errcode = ERR_TOO_LONG;
    if (slot && errcode === 0) slot.used = true;
    if (this.posts.length < MAX_RECORDS)
      this.posts.push({ path, content, accepted: errcode === 0, seq: ++this.seq });
    this.changed();
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ errcode, errmsg: "" }));
  }
}
