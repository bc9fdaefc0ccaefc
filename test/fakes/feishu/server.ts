/**
 * A loopback fake of Feishu/Lark for the real SDK, at the wire, on 127.0.0.1 and a random port (the
 * origin is what `feishu.domain` names, so REST and endpoint discovery both land here):
 *
 * - `POST /callback/ws/endpoint` checks AppID/AppSecret and answers the long connection's URL (a
 *   one-time ticket) and client config; the WebSocket itself is socket.ts.
 * - `POST /open-apis/auth/v3/tenant_access_token/internal` issues tenant tokens; every other
 *   `/open-apis` call must carry one.
 * - `GET /open-apis/bot/v3/info`; `POST …/messages/:id/reply` (validates msg_type and content,
 *   enforces the request-size cap, dedupes by `uuid`, answers `data.message_id`); `POST
 *   …/messages?receive_id_type=chat_id`; `PUT …/messages/:id` (edit); `GET …/messages/:id`.
 * - Every answer is Feishu's `{code, msg, data}` envelope; `inject` makes a route fail (a rate
 *   limit: HTTP 429, code 99991400, `x-ogw-ratelimit-reset`).
 *
 * It records what a user sees: each bot message's markdown, its rendered text and its final state
 * after edits. Bounded: it refuses calls past `maxCalls`, stops itself after `lifetimeMs`, and after
 * `idleMs` without a request or a frame.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { renderVisible } from "./render.js";
import { type ClientConfig, LongConnection, type PendingEvent } from "./socket.js";
import { ApiError, validateBody } from "./validate.js";

export interface FakeFeishuOptions {
  appId?: string;
  appSecret?: string;
  botOpenId?: string;
  appName?: string;
  lifetimeMs?: number;
  idleMs?: number;
  maxCalls?: number;
  fragmentBytes?: number;
  ackTimeoutMs?: number;
  clientConfig?: Partial<ClientConfig>;
}

export interface RecordedCall {
  method: string;
  /** The route, ids kept (`/open-apis/im/v1/messages/om_1/reply`). */
  path: string;
  status: number;
  code: number;
  at: number;
  /** The JSON body (capped), without any credential. */
  body?: Record<string, unknown>;
  bytes: number;
}

export interface FakeMessage {
  messageId: string;
  chatId: string;
  chatType: "p2p" | "group";
  from: "user" | "bot";
  /** The sender's open_id (a user) or the app id (the bot). */
  senderId: string;
  msgType: string;
  /** The markdown (post) or text as sent; the latest version after edits. */
  md: string;
  visible: string;
  mentionsAll: boolean;
  parentId?: string;
  edits: number;
  at: number;
}

export interface Injection {
  /** 0: the call is carried out, and its answer never sent (a crash between a request and its answer). */
  status: number;
  code: number;
  msg: string;
  /** Sent as `x-ogw-ratelimit-reset` (seconds). */
  resetSeconds?: number;
}

export interface PushOptions {
  chatType?: "p2p" | "group";
  chatId?: string;
  /** Put the bot's `@_user_1` mention first (a group message must, to be answered). */
  mentionBot?: boolean;
  /** Other people mentioned, after the bot: `@_user_N` placeholders the text already holds. */
  mentions?: { openId: string; name: string }[];
  parentId?: string;
  messageType?: string;
  /** Raw `content` (a JSON string) instead of `{"text": text}`. */
  content?: string;
  /** An event without `message_id` (the id-less case). */
  omitMessageId?: boolean;
  senderType?: string;
}

type Route = "endpoint" | "token" | "botInfo" | "reply" | "create" | "update" | "get";

const MAX_BODY_BYTES = 256 * 1024;
/** What Feishu answers for a message id it does not know (open.feishu.cn troubleshooting: error 230001). */
const INVALID_MESSAGE_ID = "Your request contains an invalid request parameter, ext=invalid message_id.";
const MAX_RECORDED_BODY = 64 * 1024;

export class FakeFeishu {
  readonly appId: string;
  readonly appSecret: string;
  readonly botOpenId: string;
  readonly appName: string;
  origin = "";
  readonly calls: RecordedCall[] = [];
  readonly messages = new Map<string, FakeMessage>();
  readonly ws: LongConnection;
  /** True once maxCalls was passed: later calls were refused, and a test should fail loudly. */
  overflowed = false;
  /**
   * Calls with a body that is not JSON or to a route the fake does not serve: no answer is claimed
   * for them (the connection is cut) and each is counted; every test asserts there were none.
   */
  refused = 0;
  private readonly server = createServer((req, res) => void this.handle(req, res));
  private readonly tokens = new Set<string>();
  private readonly uuids = new Map<string, string>();
  private readonly injected = new Map<Route, (Injection & { times: number })[]>();
  private readonly maxCalls: number;
  private readonly lifetimeMs: number;
  private readonly idleMs: number;
  private readonly serviceId = 7;
  private readonly clientConfig: ClientConfig;
  private lifetime: ReturnType<typeof setTimeout> | undefined;
  private idle: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private next = 1;
  /** Answers held back by a status-0 injection, until `dropStalled` or stop. */
  private readonly stalled = new Set<ServerResponse>();

  constructor(o: FakeFeishuOptions = {}) {
    this.appId = o.appId ?? "cli_a1b2c3d4e5f60718";
    this.appSecret = o.appSecret ?? "fake-app-secret-0123456789";
    this.botOpenId = o.botOpenId ?? "ou_bot00000000000000000000000000001";
    this.appName = o.appName ?? "parley";
    this.maxCalls = o.maxCalls ?? 5000;
    this.lifetimeMs = o.lifetimeMs ?? 60_000;
    this.idleMs = o.idleMs ?? 30_000;
    // Seconds, as Feishu sends them: a short reconnect interval keeps reconnect tests quick.
    this.clientConfig = {
      PingInterval: 120,
      ReconnectCount: -1,
      ReconnectInterval: 0.1,
      ReconnectNonce: 0,
      ...o.clientConfig,
    };
    this.ws = new LongConnection({
      serviceId: this.serviceId,
      clientConfig: this.clientConfig,
      fragmentBytes: o.fragmentBytes ?? 0,
      ackTimeoutMs: o.ackTimeoutMs ?? 2000,
      maxDeliveries: 5,
      onActivity: () => this.touch(),
    });
    this.server.on("upgrade", (req, socket, head) => {
      this.touch();
      this.ws.handleUpgrade(req, socket, head);
    });
  }

  static async start(o: FakeFeishuOptions = {}): Promise<FakeFeishu> {
    const fake = new FakeFeishu(o);
    await new Promise<void>((resolve) => fake.server.listen(0, "127.0.0.1", resolve));
    fake.origin = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
    fake.lifetime = setTimeout(() => void fake.stop(), fake.lifetimeMs);
    fake.lifetime.unref();
    fake.touch();
    return fake;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.lifetime);
    clearTimeout(this.idle);
    this.ws.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // ── test-side controls ─────────────────────────────────────────────────────────────────────

  /** Cut the connections of calls whose answer was held back (their callers see a network error). */
  dropStalled(): void {
    for (const res of this.stalled) res.socket?.destroy();
    this.stalled.clear();
  }

  /** The next `times` calls to `route` fail with `injection`. */
  inject(route: Route, injection: Injection, times = 1): void {
    this.injected.set(route, [...(this.injected.get(route) ?? []), { ...injection, times }]);
  }

  /** A user's message: recorded, then delivered over the long connection as im.message.receive_v1. */
  pushMessage(
    from: { openId: string; name?: string },
    text: string,
    o: PushOptions = {},
  ): { messageId: string; event: PendingEvent } {
    const chatType = o.chatType ?? "p2p";
    const chatId = o.chatId ?? `oc_p2p_${from.openId.slice(3)}`;
    const messageId = `om_${String(this.next++).padStart(6, "0")}`;
    const mentioned = [
      ...(o.mentionBot ? [{ openId: this.botOpenId, name: this.appName }] : []),
      ...(o.mentions ?? []),
    ];
    const body = o.mentionBot ? `@_user_1 ${text}` : text;
    const content = o.content ?? JSON.stringify({ text: body });
    this.messages.set(messageId, {
      messageId,
      chatId,
      chatType,
      from: "user",
      senderId: from.openId,
      msgType: o.messageType ?? "text",
      md: body,
      visible: body,
      mentionsAll: false,
      ...(o.parentId ? { parentId: o.parentId } : {}),
      edits: 0,
      at: Date.now(),
    });
    const now = String(Date.now());
    const event = {
      schema: "2.0",
      header: {
        event_id: `ev_${messageId}`,
        event_type: "im.message.receive_v1",
        create_time: now,
        token: "",
        app_id: this.appId,
        tenant_key: "tenant-fake",
      },
      event: {
        sender: {
          sender_id: { open_id: from.openId, union_id: `on_${from.openId.slice(3)}`, user_id: "u1" },
          sender_type: o.senderType ?? "user",
          tenant_key: "tenant-fake",
        },
        message: {
          ...(o.omitMessageId ? {} : { message_id: messageId }),
          root_id: "",
          parent_id: o.parentId ?? "",
          create_time: now,
          update_time: now,
          chat_id: chatId,
          chat_type: chatType,
          message_type: o.messageType ?? "text",
          content,
          mentions: mentioned.map((m, i) => ({
            key: `@_user_${i + 1}`,
            id: { open_id: m.openId, union_id: `on_${m.openId.slice(3)}`, user_id: "" },
            name: m.name,
            tenant_key: "tenant-fake",
          })),
        },
      },
    };
    return { messageId, event: this.ws.deliver(messageId, event) };
  }

  /**
   * Another event of the app's subscriptions, in the same v2 envelope (`schema`, `header` with its
   * `event_type`, `event`), delivered over the long connection like a message. The event body is the
   * caller's, written from that event's type in the SDK (types/index.d.ts, `EventHandles`).
   */
  pushEvent(eventType: string, body: Record<string, unknown>): { eventId: string; event: PendingEvent } {
    const eventId = `ev_${eventType.replace(/\W/g, "_")}_${this.next++}`;
    const envelope = {
      schema: "2.0",
      header: {
        event_id: eventId,
        event_type: eventType,
        create_time: String(Date.now()),
        token: "",
        app_id: this.appId,
        tenant_key: "tenant-fake",
      },
      event: body,
    };
    return { eventId, event: this.ws.deliver(eventId, envelope) };
  }

  /** A user message the bot can answer that was never delivered as an event (a harness's anchor). */
  seedMessage(from: { openId: string }, text: string, chatId = `oc_p2p_${from.openId.slice(3)}`): string {
    const messageId = `om_${String(this.next++).padStart(6, "0")}`;
    this.messages.set(messageId, {
      messageId,
      chatId,
      chatType: "p2p",
      from: "user",
      senderId: from.openId,
      msgType: "text",
      md: text,
      visible: text,
      mentionsAll: false,
      edits: 0,
      at: Date.now(),
    });
    return messageId;
  }

  /** The bot's messages, in the order they were created (edits update them in place). */
  botMessages(chatId?: string): FakeMessage[] {
    return [...this.messages.values()].filter((m) => m.from === "bot" && (!chatId || m.chatId === chatId));
  }

  callsTo(pattern: RegExp): RecordedCall[] {
    return this.calls.filter((c) => pattern.test(`${c.method} ${c.path}`));
  }

  async waitFor(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`fake feishu: timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  // ── the wire ───────────────────────────────────────────────────────────────────────────────

  private touch(): void {
    clearTimeout(this.idle);
    if (this.stopped) return;
    this.idle = setTimeout(() => void this.stop(), this.idleMs);
    this.idle.unref();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.touch();
    const url = new URL(req.url ?? "/", "http://fake");
    const raw = await readBody(req);
    const call: RecordedCall = {
      method: req.method ?? "",
      path: url.pathname,
      status: 200,
      code: 0,
      at: Date.now(),
      bytes: raw.length,
    };
    if (this.calls.length >= this.maxCalls) {
      this.overflowed = true;
      return this.answer(res, call, 503, { code: 1, msg: "fake: too many calls" });
    }
    this.calls.push(call);
    let body: Record<string, unknown> = {};
    try {
      body = raw.length ? (JSON.parse(raw.toString("utf8")) as Record<string, unknown>) : {};
    } catch {
      // The SDK always sends JSON: no claim about Feishu's answer to anything else, the call is cut.
      this.refused += 1;
      res.socket?.destroy();
      return;
    }
    call.body = recordable(body);
    try {
      const route = this.routeOf(req.method ?? "", url.pathname);
      if (!route) {
        // A route parley does not call: no claim about Feishu's answer, the call is cut and counted.
        this.refused += 1;
        res.socket?.destroy();
        return;
      }
      const failure = this.takeInjection(route);
      if (failure?.status === 0) {
        if (route !== "endpoint" && route !== "token") this.authorize(req);
        this.serve(route, url, body, raw.length);
        call.status = 0;
        this.stalled.add(res);
        return;
      }
      if (failure) {
        const headers: Record<string, string> =
          failure.resetSeconds === undefined
            ? {}
            : { "x-ogw-ratelimit-limit": "5", "x-ogw-ratelimit-reset": String(failure.resetSeconds) };
        return this.answer(res, call, failure.status, { code: failure.code, msg: failure.msg }, headers);
      }
      if (route !== "endpoint" && route !== "token") this.authorize(req);
      const answer = this.serve(route, url, body, raw.length);
      this.answer(res, call, 200, answer);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      this.answer(res, call, error.status, { code: error.code, msg: error.msg, data: {} });
    }
  }

  private routeOf(method: string, path: string): Route | null {
    if (method === "POST" && path === "/callback/ws/endpoint") return "endpoint";
    if (method === "POST" && path === "/open-apis/auth/v3/tenant_access_token/internal") return "token";
    if (method === "GET" && path === "/open-apis/bot/v3/info") return "botInfo";
    if (method === "POST" && /^\/open-apis\/im\/v1\/messages\/[^/]+\/reply$/.test(path)) return "reply";
    if (method === "POST" && path === "/open-apis/im/v1/messages") return "create";
    if (method === "PUT" && /^\/open-apis\/im\/v1\/messages\/[^/]+$/.test(path)) return "update";
    if (method === "GET" && /^\/open-apis\/im\/v1\/messages\/[^/]+$/.test(path)) return "get";
    return null;
  }

  private takeInjection(route: Route): Injection | undefined {
    const queue = this.injected.get(route);
    const head = queue?.[0];
    if (!queue || !head) return undefined;
    head.times -= 1;
    if (head.times <= 0) queue.shift();
    return head;
  }

  private authorize(req: IncomingMessage): void {
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
    if (!this.tokens.has(token))
      throw new ApiError(
        400,
        99991663,
        "Invalid access token for authorization. Please make a request with token attached.",
      );
  }

  private serve(
    route: Route,
    url: URL,
    body: Record<string, unknown>,
    bytes: number,
  ): Record<string, unknown> {
    switch (route) {
      case "endpoint": {
        if (body.AppID !== this.appId || body.AppSecret !== this.appSecret)
          return { code: 514, msg: "auth failed", data: {} };
        const ticket = this.ws.issueTicket();
        const host = this.origin.replace(/^http/, "ws");
        // The SDK reads device_id and service_id with a query parser over the WHOLE URL, so the first
        // key is lost to the path: the fake's own one-time ticket goes first (the SDK reads none of it).
        const URL = `${host}/ws/v2?ticket=${ticket}&device_id=dev-${ticket.slice(0, 6)}&service_id=${this.serviceId}`;
        return { code: 0, msg: "ok", data: { URL, ClientConfig: this.clientConfig } };
      }
      case "token": {
        if (body.app_id !== this.appId || body.app_secret !== this.appSecret)
          return { code: 10014, msg: "app secret invalid" };
        const token = `t-${this.next++}-${Math.random().toString(36).slice(2)}`;
        this.tokens.add(token);
        return { code: 0, msg: "ok", tenant_access_token: token, expire: 7200 };
      }
      case "botInfo":
        return {
          code: 0,
          msg: "ok",
          bot: {
            activate_status: 2,
            app_name: this.appName,
            avatar_url: "",
            ip_white_list: [],
            open_id: this.botOpenId,
          },
        };
      case "reply":
      case "create":
        return this.post(route, url, body, bytes);
      case "update": {
        const message = this.messages.get(idOf(url.pathname));
        if (!message) throw new ApiError(400, 230001, INVALID_MESSAGE_ID);
        if (message.from !== "bot")
          throw new ApiError(400, 230027, "only the bot's own messages can be edited");
        const { md } = validateBody(body, bytes);
        Object.assign(message, this.rendered(md), { md, edits: message.edits + 1 });
        return { code: 0, msg: "success", data: this.describe(message) };
      }
      case "get": {
        const message = this.messages.get(idOf(url.pathname));
        if (!message) throw new ApiError(400, 230001, INVALID_MESSAGE_ID);
        return { code: 0, msg: "success", data: { items: [this.describe(message)] } };
      }
    }
  }

  private post(route: "reply" | "create", url: URL, body: Record<string, unknown>, bytes: number) {
    let chatId: string;
    let chatType: "p2p" | "group" = "p2p";
    let parentId: string | undefined;
    if (route === "reply") {
      const parent = this.messages.get(url.pathname.split("/")[5] ?? "");
      if (!parent) throw new ApiError(400, 230001, INVALID_MESSAGE_ID);
      chatId = parent.chatId;
      chatType = parent.chatType;
      parentId = parent.messageId;
    } else {
      if (url.searchParams.get("receive_id_type") !== "chat_id" || typeof body.receive_id !== "string")
        throw new ApiError(400, 99992402, "receive_id_type must be chat_id here");
      chatId = body.receive_id;
      const known = [...this.messages.values()].find((m) => m.chatId === chatId);
      if (!known) throw new ApiError(400, 230002, "the bot is not in this chat");
      chatType = known.chatType;
    }
    const uuid = typeof body.uuid === "string" ? body.uuid : "";
    if (uuid.length > 50) throw new ApiError(400, 99992402, "uuid longer than 50");
    const existing = uuid ? this.messages.get(this.uuids.get(uuid) ?? "") : undefined;
    if (existing) return { code: 0, msg: "success", data: this.describe(existing) };
    const { md } = validateBody(body, bytes);
    const message: FakeMessage = {
      messageId: `om_${String(this.next++).padStart(6, "0")}`,
      chatId,
      chatType,
      from: "bot",
      senderId: this.appId,
      msgType: String(body.msg_type),
      md,
      ...this.rendered(md),
      ...(parentId ? { parentId } : {}),
      edits: 0,
      at: Date.now(),
    };
    this.messages.set(message.messageId, message);
    if (uuid) this.uuids.set(uuid, message.messageId);
    return { code: 0, msg: "success", data: this.describe(message) };
  }

  private rendered(md: string): { visible: string; mentionsAll: boolean } {
    const r = renderVisible(md);
    return { visible: r.visible, mentionsAll: r.mentionsAll };
  }

  private describe(m: FakeMessage): Record<string, unknown> {
    const content =
      m.msgType === "post"
        ? JSON.stringify({ title: "", content: [[{ tag: "md", text: m.md }]] })
        : JSON.stringify({ text: m.md });
    return {
      message_id: m.messageId,
      parent_id: m.parentId ?? "",
      chat_id: m.chatId,
      msg_type: m.msgType,
      create_time: String(m.at),
      updated: m.edits > 0,
      deleted: false,
      sender:
        m.from === "bot"
          ? { id: this.appId, id_type: "app_id", sender_type: "app", tenant_key: "tenant-fake" }
          : { id: m.senderId, id_type: "open_id", sender_type: "user", tenant_key: "tenant-fake" },
      body: { content },
    };
  }

  private answer(
    res: ServerResponse,
    call: RecordedCall,
    status: number,
    body: Record<string, unknown>,
    headers: Record<string, string> = {},
  ): void {
    call.status = status;
    call.code = typeof body.code === "number" ? body.code : 0;
    res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
    res.end(JSON.stringify(body));
  }
}

function idOf(path: string): string {
  return path.split("/").at(-1) ?? "";
}

/** A body as recorded: secrets dropped, capped in size. */
function recordable(body: Record<string, unknown>): Record<string, unknown> {
  const { AppSecret: _s, app_secret: _a, ...rest } = body;
  const json = JSON.stringify(rest);
  return json.length > MAX_RECORDED_BODY ? { truncated: json.slice(0, MAX_RECORDED_BODY) } : rest;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) break;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
