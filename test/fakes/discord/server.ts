/**
 * A loopback fake of Discord at the wire: REST under /api/v10 over node:http, and a Gateway
 * WebSocket (the `ws` package) speaking the real opcodes: HELLO with heartbeat_interval, IDENTIFY,
 * READY with the bot user and application, HEARTBEAT/ACK, RESUME, and DISPATCH of events a test
 * injects. The real @discordjs/rest and @discordjs/ws clients are pointed at it, so everything parley
 * does to Discord crosses a real HTTP/WebSocket boundary.
 *
 * It records every REST call with its JSON body (multipart bodies are parsed: payload_json plus the
 * file parts), enforces the 2000-character cap, simulates rate-limit buckets (X-RateLimit-* headers,
 * and a 429 plus a recorded VIOLATION for any request sent into a bucket it said was exhausted, or
 * during a global limit), and injects errors. It also plays Discord's CDN for files users send
 * (GET /attachments/<id>/<name>, unauthenticated like the real one): exact bytes, a redirect, a body
 * streamed until the reader hangs up, or a stall; every CDN request is recorded with its headers.
 * Ephemeral messages (a type 4 callback or a follow-up with flags 64) are kept apart: only their
 * recipient would see them, so they are never in channelMessages, only in ephemeralMessages; a
 * press on one carries flags 64, and PATCH /webhooks/<app>/<token>/messages/@original edits the
 * interaction's original (a command's reply, or the message a pressed component sits on).
 * Bounded: it stops itself after `lifetimeMs` and
 * refuses calls past `maxCalls`, so a test that forgets to close it cannot hang the run.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { WebSocket } from "ws";
import { WebSocketServer } from "ws";
import { serveFileBody } from "../file-body.js";

export type Json = Record<string, unknown>;

export interface RecordedFile {
  field: string;
  name: string;
  size: number;
  contentType: string;
  bytes: Uint8Array;
}

export interface RecordedCall {
  method: string;
  /** Path under /api/v10, e.g. /channels/123/messages. */
  path: string;
  body: unknown;
  files: RecordedFile[];
  status: number;
  at: number;
}

export interface FakeMessage {
  id: string;
  channel_id: string;
  content: string;
  components: unknown[];
  attachments: Array<{ id: string; filename: string; size: number; description?: string }>;
  edits: number;
  reactions: Set<string>;
  /** 1 << 6 when ephemeral (then only in ephemeralMessages). */
  flags?: number;
}

const EPHEMERAL = 1 << 6;

/** What the fake CDN serves for one attachment. */
export interface FakeAttachmentSpec {
  filename: string;
  contentType?: string;
  /** The size the MESSAGE_CREATE descriptor claims (default: the real length, when known). */
  declaredSize?: number;
  /** Served whole, with an honest Content-Length. */
  bytes?: Uint8Array;
  /** Answered with 302 to this location (which must never be followed). */
  redirectTo?: string;
  /** `head`, then zeros up to `total` bytes, written only as fast as the client reads. */
  stream?: { head: Uint8Array; total: number };
  /** Headers sent, then no body byte ever (a stalled download). */
  stall?: boolean;
}

/** The attachment object a MESSAGE_CREATE carries (Discord's field names). */
export interface FakeAttachmentDescriptor {
  id: string;
  filename: string;
  size: number;
  content_type?: string;
  url: string;
  proxy_url: string;
}

export interface CdnRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Body bytes written to the socket so far. */
  served: number;
  /** The client closed the connection before the whole body was written. */
  closedEarly: boolean;
}

export interface FakeChannel {
  id: string;
  type: number;
  guild_id?: string;
  parent_id?: string;
}

interface InjectedError {
  match: (method: string, path: string) => boolean;
  status: number;
  retryAfterMs?: number;
  global?: boolean;
  code?: number;
}

interface Bucket {
  match: (method: string, path: string) => boolean;
  hash: string;
  limit: number;
  resetAfterMs: number;
  remaining: number;
  resetAt: number;
}

export interface FakeDiscordOptions {
  token?: string;
  botId?: string;
  applicationId?: string;
  lifetimeMs?: number;
  maxCalls?: number;
  heartbeatIntervalMs?: number;
}

export const MAX_CONTENT = 2000;

export class FakeDiscord {
  readonly token: string;
  readonly botId: string;
  readonly applicationId: string;
  readonly calls: RecordedCall[] = [];
  readonly messages = new Map<string, FakeMessage>();
  /** Nonce -> the message created under it (enforce_nonce). */
  private readonly nonces = new Map<string, string>();
  /** Creations answered with an earlier message because their nonce was already used. */
  nonceHits = 0;
  /** Messages users wrote (reactions land here); kept apart from what parley posted. */
  readonly userMessages = new Map<string, { channel_id: string; content: string; reactions: Set<string> }>();
  /** Every reaction change, in order: [messageId, "+"|"-", emoji]. */
  readonly reactionLog: Array<[string, "+" | "-", string]> = [];
  readonly channels = new Map<string, FakeChannel>();
  readonly identifies: Json[] = [];
  readonly violations: string[] = [];
  readonly commands: unknown[][] = [];
  /** Every request to the fake CDN (never counted in `calls`: it is not the REST API). */
  readonly cdnRequests: CdnRequest[] = [];
  private readonly cdnFiles = new Map<string, FakeAttachmentSpec>();
  private readonly errors: InjectedError[] = [];
  private readonly buckets: Bucket[] = [];
  private readonly sockets = new Set<WebSocket>();
  private readonly interactionChannels = new Map<string, string>();
  /** Messages only their recipient sees: never listed by channelMessages. */
  private readonly ephemerals = new Map<string, FakeMessage>();
  /** interaction token -> the id of its original message (what @original edits). */
  private readonly originals = new Map<string, string>();
  private globalUntil = 0;
  private seq = 0;
  private nextId = 1_100_000_000_000_000_000n;
  private server = createServer((req, res) => void this.onRequest(req, res));
  private readonly wss = new WebSocketServer({ noServer: true });
  private port = 0;
  private lifetime: NodeJS.Timeout | undefined;
  private readonly o: Required<FakeDiscordOptions>;

  constructor(options: FakeDiscordOptions = {}) {
    this.o = {
      token: "fake.discord.token",
      botId: "1000000000000000001",
      applicationId: "1000000000000000002",
      lifetimeMs: 60_000,
      maxCalls: 2_000,
      heartbeatIntervalMs: 41_250,
      ...options,
    };
    this.token = this.o.token;
    this.botId = this.o.botId;
    this.applicationId = this.o.applicationId;
    this.server.on("upgrade", (req, socket, head) => {
      if (!req.url?.startsWith("/gateway")) return void socket.destroy();
      this.wss.handleUpgrade(req, socket, head, (ws) => this.onSocket(ws));
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
    this.lifetime = setTimeout(() => void this.close(), this.o.lifetimeMs);
    this.lifetime.unref();
    return this;
  }

  get apiBase(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  snowflake(): string {
    this.nextId += 1n;
    return this.nextId.toString();
  }

  addChannel(channel: FakeChannel): FakeChannel {
    this.channels.set(channel.id, channel);
    return channel;
  }

  /** Every REST call whose path matches, in order. */
  callsTo(method: string, pattern: RegExp): RecordedCall[] {
    return this.calls.filter((c) => c.method === method && pattern.test(c.path));
  }

  /** Messages in a channel in creation order, as a user sees them now. */
  channelMessages(channelId: string): FakeMessage[] {
    return [...this.messages.values()].filter((m) => m.channel_id === channelId);
  }

  /** Ephemeral messages in a channel, in creation order: what only their recipient sees. */
  ephemeralMessages(channelId: string): FakeMessage[] {
    return [...this.ephemerals.values()].filter((m) => m.channel_id === channelId);
  }

  failNext(match: InjectedError["match"], error: Omit<InjectedError, "match">): void {
    this.errors.push({ match, ...error });
  }

  setBucket(match: Bucket["match"], o: { limit: number; resetAfterMs: number }): void {
    this.buckets.push({ match, hash: `bucket${this.buckets.length}`, ...o, remaining: o.limit, resetAt: 0 });
  }

  // ── Gateway ──────────────────────────────────────────────────────────────────────────────

  private send(ws: WebSocket, payload: Json): void {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(payload));
  }

  private onSocket(ws: WebSocket): void {
    this.sockets.add(ws);
    ws.on("close", () => this.sockets.delete(ws));
    this.send(ws, { op: 10, d: { heartbeat_interval: this.o.heartbeatIntervalMs }, s: null, t: null });
    ws.on("message", (raw) => {
      let p: { op?: number; d?: unknown };
      try {
        p = JSON.parse(String(raw));
      } catch {
        return ws.close(4002, "decode error");
      }
      if (p.op === 1) return this.send(ws, { op: 11 });
      if (p.op === 2) {
        const d = (p.d ?? {}) as Json;
        this.identifies.push(d);
        if (d.token !== this.token) return ws.close(4004, "Authentication failed.");
        return this.send(ws, {
          op: 0,
          t: "READY",
          s: ++this.seq,
          d: {
            v: 10,
            user: { id: this.botId, username: "parley-bot", bot: true },
            guilds: [],
            session_id: `session-${this.seq}`,
            resume_gateway_url: `ws://127.0.0.1:${this.port}/gateway`,
            shard: [0, 1],
            application: { id: this.applicationId, flags: 0 },
          },
        });
      }
      if (p.op === 6) return this.send(ws, { op: 0, t: "RESUMED", s: ++this.seq, d: {} });
    });
  }

  /** DISPATCH an event to every connected Gateway session. */
  dispatch(t: string, d: Json): void {
    const s = ++this.seq;
    for (const ws of this.sockets) this.send(ws, { op: 0, t, s, d });
  }

  get gatewayConnections(): number {
    return this.sockets.size;
  }

  /** Close every Gateway socket with `code` (the client decides whether to resume). */
  dropGateway(code: number): void {
    for (const ws of this.sockets) ws.close(code, "fake closed");
  }

  /** A user message; returns its id. `guildId` makes it a guild message. */
  userMessage(o: {
    channelId: string;
    userId: string;
    content: string;
    guildId?: string;
    bot?: boolean;
    /** Descriptors, usually from attachment(); any object is passed through as Discord would. */
    attachments?: Json[] | FakeAttachmentDescriptor[];
  }): string {
    const id = this.snowflake();
    this.userMessages.set(id, { channel_id: o.channelId, content: o.content, reactions: new Set() });
    this.dispatch("MESSAGE_CREATE", {
      id,
      channel_id: o.channelId,
      ...(o.guildId ? { guild_id: o.guildId } : {}),
      author: { id: o.userId, username: `user${o.userId.slice(-3)}`, ...(o.bot ? { bot: true } : {}) },
      content: o.content,
      attachments: o.attachments ?? [],
      mentions: [],
      type: 0,
      timestamp: new Date(0).toISOString(),
    });
    return id;
  }

  /** Host a file on the fake CDN; returns the descriptor a MESSAGE_CREATE would carry for it. */
  attachment(spec: FakeAttachmentSpec): FakeAttachmentDescriptor {
    const id = this.snowflake();
    this.cdnFiles.set(id, spec);
    const name = encodeURIComponent(spec.filename);
    const size = spec.declaredSize ?? spec.bytes?.length ?? spec.stream?.total ?? 0;
    return {
      id,
      filename: spec.filename,
      size,
      ...(spec.contentType ? { content_type: spec.contentType } : {}),
      url: `http://127.0.0.1:${this.port}/attachments/${id}/${name}?ex=0&is=0&hm=fake`,
      proxy_url: `http://127.0.0.1:${this.port}/proxy/attachments/${id}/${name}`,
    };
  }

  /** CDN requests for one attachment id. */
  cdnRequestsFor(id: string): CdnRequest[] {
    return this.cdnRequests.filter((r) => r.path.startsWith(`/attachments/${id}/`));
  }

  private async serveCdn(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const rec: CdnRequest = {
      method: req.method ?? "GET",
      path,
      headers: { ...req.headers },
      served: 0,
      closedEarly: false,
    };
    this.cdnRequests.push(rec);
    const spec = this.cdnFiles.get(/^\/attachments\/(\d+)\//.exec(path)?.[1] ?? "");
    if (!spec || rec.method !== "GET") {
      res.writeHead(404).end();
      return;
    }
    if (spec.redirectTo) {
      res.writeHead(302, { location: spec.redirectTo }).end();
      return;
    }
    await serveFileBody(res, spec, rec);
  }

  /** A button press on a message parley posted; returns the interaction id. */
  press(o: { messageId: string; customId: string; userId: string; guildId?: string }): string {
    const m = this.messages.get(o.messageId) ?? this.ephemerals.get(o.messageId);
    if (!m) throw new Error(`no message ${o.messageId}`);
    const id = this.interaction({
      type: 3,
      channelId: m.channel_id,
      userId: o.userId,
      data: { custom_id: o.customId, component_type: 2 },
      message: {
        id: m.id,
        channel_id: m.channel_id,
        content: m.content,
        components: m.components,
        ...(m.flags ? { flags: m.flags } : {}),
      },
      ...(o.guildId ? { guildId: o.guildId } : {}),
    });
    // After a deferred update, a press's @original is the message its component sits on.
    this.originals.set(`itoken-${id}`, m.id);
    return id;
  }

  interaction(o: {
    type: number;
    channelId: string;
    userId: string;
    data: Json;
    message?: Json;
    guildId?: string;
  }): string {
    const id = this.snowflake();
    const token = `itoken-${id}`;
    this.interactionChannels.set(token, o.channelId);
    const user = { id: o.userId, username: `user${o.userId.slice(-3)}` };
    this.dispatch("INTERACTION_CREATE", {
      id,
      application_id: this.applicationId,
      type: o.type,
      token,
      version: 1,
      channel_id: o.channelId,
      ...(o.guildId ? { guild_id: o.guildId, member: { user } } : { user }),
      data: o.data,
      ...(o.message ? { message: o.message } : {}),
    });
    return id;
  }

  // ── REST ─────────────────────────────────────────────────────────────────────────────────

  private async readBody(req: IncomingMessage): Promise<{ body: unknown; files: RecordedFile[] }> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const type = req.headers["content-type"] ?? "";
    if (raw.length === 0) return { body: undefined, files: [] };
    if (type.startsWith("multipart/form-data")) {
      const form = await new Response(raw, { headers: { "content-type": type } }).formData();
      const files: RecordedFile[] = [];
      let body: unknown;
      for (const [field, value] of form.entries()) {
        if (typeof value === "string") {
          if (field === "payload_json") body = JSON.parse(value);
        } else {
          const bytes = new Uint8Array(await value.arrayBuffer());
          files.push({ field, name: value.name, size: bytes.length, contentType: value.type, bytes });
        }
      }
      return { body, files };
    }
    return { body: JSON.parse(raw.toString("utf8")), files: [] };
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? "GET";
    const url = new URL(req.url ?? "/", "http://fake");
    const path = url.pathname.replace(/^\/api\/v10/, "");
    // The CDN is a different server in reality: no REST auth, rate limits or call recording.
    if (path.startsWith("/attachments/") || path.startsWith("/proxy/")) return this.serveCdn(req, res, path);
    const { body, files } = await this.readBody(req);
    const call: RecordedCall = { method, path, body, files, status: 0, at: Date.now() };
    this.calls.push(call);
    const reply = (status: number, data?: unknown, headers: Record<string, string> = {}) => {
      call.status = status;
      res.writeHead(status, {
        ...(data === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      });
      res.end(data === undefined ? undefined : JSON.stringify(data));
    };
    if (this.calls.length > this.o.maxCalls) return reply(503, { message: "fake call budget spent" });
    const interactionRoute = path.startsWith("/interactions/") || path.startsWith("/webhooks/");
    if (!interactionRoute && req.headers.authorization !== `Bot ${this.token}`)
      return reply(401, { message: "401: Unauthorized", code: 0 });
    const now = Date.now();
    if (!interactionRoute && now < this.globalUntil) {
      this.violations.push(`${method} ${path} sent during a global rate limit`);
      return reply(
        429,
        { message: "global", retry_after: (this.globalUntil - now) / 1000, global: true },
        {
          "retry-after": String((this.globalUntil - now) / 1000),
          "x-ratelimit-global": "true",
          "x-ratelimit-scope": "global",
        },
      );
    }
    const injected = this.errors.findIndex((e) => e.match(method, path));
    if (injected >= 0) {
      const e = this.errors.splice(injected, 1)[0] as InjectedError;
      if (e.status === 429) {
        const after = (e.retryAfterMs ?? 100) / 1000;
        if (e.global) this.globalUntil = now + (e.retryAfterMs ?? 100);
        return reply(
          429,
          { message: "You are being rate limited.", retry_after: after, global: e.global === true },
          {
            "retry-after": String(after),
            "x-ratelimit-scope": e.global ? "global" : "user",
            ...(e.global ? { "x-ratelimit-global": "true" } : {}),
          },
        );
      }
      return reply(e.status, { message: "injected", code: e.code ?? 0 });
    }
    const headers: Record<string, string> = {};
    const bucket = this.buckets.find((b) => b.match(method, path));
    if (bucket) {
      if (now >= bucket.resetAt) {
        bucket.remaining = bucket.limit;
        bucket.resetAt = now + bucket.resetAfterMs;
      }
      const resetAfter = String(Math.max(0, bucket.resetAt - now) / 1000);
      if (bucket.remaining <= 0) {
        this.violations.push(`${method} ${path} sent into exhausted ${bucket.hash}`);
        return reply(
          429,
          { message: "rate limited", retry_after: Number(resetAfter), global: false },
          {
            "retry-after": resetAfter,
            "x-ratelimit-scope": "user",
          },
        );
      }
      bucket.remaining -= 1;
      Object.assign(headers, {
        "x-ratelimit-limit": String(bucket.limit),
        "x-ratelimit-remaining": String(bucket.remaining),
        "x-ratelimit-reset-after": resetAfter,
        "x-ratelimit-bucket": bucket.hash,
      });
    }
    const [status, data] = this.route(method, path, body, files);
    reply(status, data, headers);
  }

  private route(method: string, path: string, body: unknown, files: RecordedFile[]): [number, unknown] {
    const b = (body ?? {}) as Json;
    const on = (verb: string | null, re: RegExp): string[] | null => {
      if (verb !== null && verb !== method) return null;
      const found = re.exec(path);
      return found ? found.slice(1) : null;
    };
    if (method === "GET" && path === "/gateway/bot")
      return [
        200,
        {
          url: `ws://127.0.0.1:${this.port}/gateway`,
          shards: 1,
          session_start_limit: { total: 1000, remaining: 999, reset_after: 14_400_000, max_concurrency: 1 },
        },
      ];
    if (method === "GET" && path === "/users/@me")
      return [200, { id: this.botId, username: "parley-bot", bot: true }];
    const m1 = on("PUT", /^\/applications\/(\d+)\/commands$/);
    if (m1) {
      this.commands.push(body as unknown[]);
      return [200, body];
    }
    const m2 = on("GET", /^\/channels\/(\d+)$/);
    if (m2) {
      const c = this.channels.get(m2[0] as string);
      return c ? [200, c] : [404, { message: "Unknown Channel", code: 10003 }];
    }
    const m3 = on("POST", /^\/channels\/(\d+)\/messages\/(\d+)\/threads$/);
    if (m3) {
      const parent = this.channels.get(m3[0] as string);
      const thread = this.addChannel({
        id: this.snowflake(),
        type: 11,
        ...(parent?.guild_id ? { guild_id: parent.guild_id } : {}),
        parent_id: m3[0] as string,
      });
      return [201, { ...thread, name: b.name }];
    }
    if (method === "POST" && path === "/users/@me/channels") {
      const dm = this.addChannel({ id: this.snowflake(), type: 1 });
      return [200, dm];
    }
    const m4 = on("POST", /^\/channels\/(\d+)\/typing$/);
    if (m4) return [204, undefined];
    const m5 = on(null, /^\/channels\/(\d+)\/messages\/(\d+)\/reactions\/([^/]+)\/@me$/);
    if (m5) {
      const msg = this.messages.get(m5[1] as string) ?? this.userMessages.get(m5[1] as string);
      if (!msg) return [404, { message: "Unknown Message", code: 10008 }];
      const emoji = decodeURIComponent(m5[2] as string);
      this.reactionLog.push([m5[1] as string, method === "PUT" ? "+" : "-", emoji]);
      if (method === "PUT") msg.reactions.add(emoji);
      else msg.reactions.delete(emoji);
      return [204, undefined];
    }
    const m6 = on("POST", /^\/channels\/(\d+)\/messages$/);
    if (m6) {
      // enforce_nonce: a creation under a nonce already used (by this bot, recently) returns that
      // message instead of creating a second one. The fake never forgets (a test is shorter than
      // Discord's "few minutes").
      const nonce = b.enforce_nonce === true && typeof b.nonce === "string" ? b.nonce : undefined;
      const earlier = nonce === undefined ? undefined : this.messages.get(this.nonces.get(nonce) ?? "");
      if (earlier) {
        this.nonceHits += 1;
        return [
          200,
          {
            id: earlier.id,
            channel_id: earlier.channel_id,
            content: earlier.content,
            components: earlier.components,
            attachments: earlier.attachments,
            author: { id: this.botId, bot: true },
          },
        ];
      }
      const made = this.upsert(m6[0] as string, null, b, files);
      if (nonce !== undefined && made[0] === 200) this.nonces.set(nonce, (made[1] as { id: string }).id);
      return made;
    }
    const m7 = on("PATCH", /^\/channels\/(\d+)\/messages\/(\d+)$/);
    if (m7) return this.upsert(m7[0] as string, m7[1] as string, b, files);
    const m9 = on("POST", /^\/interactions\/\d+\/([^/]+)\/callback$/);
    if (m9) {
      const data = (b.data ?? {}) as Json;
      // A private reply becomes a message only its recipient sees, the interaction's @original.
      const channel = this.interactionChannels.get(m9[0] as string);
      if (b.type === 4 && channel && isEphemeral(data)) {
        const [status, made] = this.upsert(channel, null, data, files, this.ephemerals);
        if (status !== 200) return [status, made];
        this.originals.set(m9[0] as string, (made as { id: string }).id);
      }
      return [204, undefined];
    }
    const m10 = on("PATCH", /^\/webhooks\/(\d+)\/([^/]+)\/messages\/@original$/);
    if (m10) {
      const original = this.originals.get(m10[1] as string);
      const channel = this.interactionChannels.get(m10[1] as string);
      if (!original || !channel) return [404, { message: "Unknown Webhook", code: 10015 }];
      const store = this.ephemerals.has(original) ? this.ephemerals : this.messages;
      return this.upsert(store.get(original)?.channel_id ?? channel, original, b, files, store);
    }
    const m8 = on("POST", /^\/webhooks\/(\d+)\/([^/]+)$/);
    if (m8) {
      const channel = this.interactionChannels.get(m8[1] as string);
      if (!channel) return [404, { message: "Unknown Webhook", code: 10015 }];
      return this.upsert(channel, null, b, files, isEphemeral(b) ? this.ephemerals : this.messages);
    }
    return [404, { message: `fake has no route ${method} ${path}`, code: 0 }];
  }

  private upsert(
    channelId: string,
    messageId: string | null,
    b: Json,
    files: RecordedFile[],
    store: Map<string, FakeMessage> = this.messages,
  ): [number, unknown] {
    const existing = messageId ? store.get(messageId) : undefined;
    if (messageId && !existing) return [404, { message: "Unknown Message", code: 10008 }];
    const content = typeof b.content === "string" ? b.content : (existing?.content ?? "");
    if (Array.from(content).length > MAX_CONTENT)
      return [400, { message: "Invalid Form Body", code: 50035, errors: { content: "too long" } }];
    const descriptors = Array.isArray(b.attachments) ? (b.attachments as Json[]) : [];
    const attachments = files.map((f, i) => ({
      id: this.snowflake(),
      filename: f.name,
      size: f.size,
      ...(typeof descriptors[i]?.description === "string"
        ? { description: descriptors[i]?.description as string }
        : {}),
    }));
    const components = Array.isArray(b.components) ? b.components : (existing?.components ?? []);
    if (!content && attachments.length === 0 && components.length === 0 && !existing?.attachments.length)
      return [400, { message: "Cannot send an empty message", code: 50006 }];
    const msg: FakeMessage = existing ?? {
      id: this.snowflake(),
      channel_id: channelId,
      content: "",
      components: [],
      attachments: [],
      edits: -1,
      reactions: new Set(),
      ...(store === this.ephemerals ? { flags: EPHEMERAL } : {}),
    };
    msg.content = content;
    msg.components = components;
    if (attachments.length) msg.attachments = attachments;
    msg.edits += 1;
    store.set(msg.id, msg);
    return [
      200,
      {
        id: msg.id,
        channel_id: channelId,
        content,
        components,
        attachments: msg.attachments,
        author: { id: this.botId, bot: true },
        ...(msg.flags ? { flags: msg.flags } : {}),
      },
    ];
  }

  async close(): Promise<void> {
    clearTimeout(this.lifetime);
    for (const ws of this.sockets) ws.terminate();
    this.wss.close();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

function isEphemeral(body: Json): boolean {
  return typeof body.flags === "number" && (body.flags & EPHEMERAL) !== 0;
}
