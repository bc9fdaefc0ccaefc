/**
 * A loopback fake of Tencent's iLink bot API, at the wire, on 127.0.0.1 and a random port (the
 * origin is what `weixin.apiUrl` names; the CDN is `<origin>/c2c`, what `weixin.cdnUrl` names):
 *
 * - QR login: `GET /ilink/bot/get_bot_qrcode?bot_type=3`, `GET /ilink/bot/get_qrcode_status`
 *   walking a scripted list of statuses (`wait`, `scaned`, `confirmed`, `expired`); the confirmed
 *   answer names this fake as the base URL, or a foreign host (`loginBaseUrl`), to test the rule.
 * - `POST /ilink/bot/getupdates`: held until a message is queued or `holdMs` passes, with cursor
 *   semantics (`get_updates_buf` names the last message the client confirmed; a poll with an older
 *   cursor is answered the same messages again), suggesting `longpolling_timeout_ms`. Each
 *   `message_id` is a 19-digit integer written as a bare JSON number, past 2^53 (an integer field
 *   of `WeixinMessage` in Tencent/openclaw-weixin src/api/types.ts, 64 bits wide): a client that
 *   reads it as a double merges neighbouring ids.
 * - `POST /ilink/bot/sendmessage` checks the context token it issued to that peer and records the
 *   visible text; `POST /ilink/bot/getconfig` / `sendtyping`.
 * - `GET /c2c/download?encrypted_query_param=…` serves AES-128-ECB objects (keys in both encodings).
 *
 * Every API call's headers are checked (AuthorizationType, bearer token, a base64-decimal
 * X-WECHAT-UIN, `base_info` naming parley: what Tencent/openclaw-weixin src/api/api.ts sends) and a
 * failure is counted in `authFailures`. A wrong token is answered as iLink answers a token it no
 * longer honours (`errcode: -14`, "session timeout", in a 200 body). A call with the headers or
 * `base_info` missing, a body that is not JSON or a route iLink has not got: nothing documents
 * iLink's answer, so the fake claims none and hangs up (the test fails on the count instead).
 * Errors live only in 200 bodies; `inject` makes a route answer an errcode (`-14` too).
 * Bounded: calls past `maxCalls` are refused, recorded bodies are capped, and it stops itself after
 * `lifetimeMs`, or after `idleMs` without a request.
 *
 * Every field written here is sourced in docs/channels/weixin.md (## Wire).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { encodeKey, encryptEcb, newKey } from "./crypto.js";
import { renderVisible } from "./render.js";

export type Route = "getupdates" | "sendmessage" | "getconfig" | "sendtyping" | "qrcode" | "qrstatus";

export interface FakeIlinkOptions {
  token?: string;
  lifetimeMs?: number;
  idleMs?: number;
  maxCalls?: number;
  /** How long getupdates holds an empty poll (ms). */
  holdMs?: number;
  /** What getupdates suggests as the next long-poll timeout. */
  suggestedTimeoutMs?: number;
  /** The statuses get_qrcode_status walks through (the last one repeats). */
  loginScript?: string[];
  /** The base URL a confirmed login names: this fake's origin by default. */
  loginBaseUrl?: string;
  botId?: string;
  /** Who scans the QR code. */
  scannerId?: string;
}

export interface RecordedCall {
  method: string;
  route: string;
  at: number;
  /** The JSON body (capped), without the token. */
  body?: Record<string, unknown>;
  /** What the fake answered in the body's ret/errcode (0: accepted). */
  code: number;
  headers: Record<string, string | undefined>;
}

export interface BotMessage {
  to: string;
  clientId: string;
  text: string;
  visible: string;
  contextToken: string;
  at: number;
}

interface Queued {
  seq: number;
  msg: Record<string, unknown>;
}

interface Injection {
  errcode: number;
  times: number;
}

const MAX_BODY_BYTES = 1024 * 1024;
/** The first message id handed out: 19 digits, as a 64-bit id is, far past Number's exact range. */
const FIRST_MESSAGE_ID = 7318201011843592193n;
const MAX_RECORDED_TEXT = 64 * 1024;
const MAX_RECORDS = 5000;

export class FakeIlink {
  readonly token: string;
  readonly botId: string;
  readonly scannerId: string;
  origin = "";
  readonly calls: RecordedCall[] = [];
  readonly sent: BotMessage[] = [];
  readonly typing: { user: string; status: number }[] = [];
  /** Calls the fake found wrong: headers, token, base_info, body or route (each test asserts none). */
  authFailures = 0;
  /** Requests that reached the CDN, and whether any carried an Authorization header. */
  readonly cdnRequests: { path: string; authorization: boolean }[] = [];
  overflowed = false;
  private readonly server = createServer((req, res) => void this.handle(req, res));
  private readonly queue: Queued[] = [];
  private seq = 0;
  private nextId = FIRST_MESSAGE_ID;
  private readonly issued = new Map<string, Set<string>>();
  private readonly media = new Map<string, Buffer>();
  private readonly injected = new Map<Route, Injection[]>();
  /** `msgs` values the next getupdates answers carry instead of a list (a malformed answer). */
  private readonly malformed: unknown[] = [];
  private readonly waiters = new Set<() => void>();
  private loginStep = 0;
  private qrCount = 0;
  private lifetime: ReturnType<typeof setTimeout> | undefined;
  private idle: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  constructor(private readonly o: FakeIlinkOptions = {}) {
    this.token = o.token ?? "fake-bot-token-0123456789abcdef";
    this.botId = o.botId ?? "b0t1d2e3@im.bot";
    this.scannerId = o.scannerId ?? "owner0001@im.wechat";
  }

  static async start(o: FakeIlinkOptions = {}): Promise<FakeIlink> {
    const fake = new FakeIlink(o);
    await new Promise<void>((resolve) => fake.server.listen(0, "127.0.0.1", resolve));
    fake.origin = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
    fake.lifetime = setTimeout(() => void fake.stop(), o.lifetimeMs ?? 60_000);
    fake.lifetime.unref();
    fake.touch();
    return fake;
  }

  get cdnUrl(): string {
    return `${this.origin}/c2c`;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.lifetime);
    clearTimeout(this.idle);
    for (const wake of this.waiters) wake();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // ── test-side controls ─────────────────────────────────────────────────────────────────────

  /** The next `times` calls to `route` answer `errcode` in a 200 body. */
  inject(route: Route, errcode: number, times = 1): void {
    this.injected.set(route, [...(this.injected.get(route) ?? []), { errcode, times }]);
  }

  /**
   * The next getupdates answer carries `msgs` as this value, not a list, and the cursor unchanged:
   * a fault, not a shape iLink documents (GetUpdatesResp.msgs is a list), to test that it is counted.
   */
  injectMalformedUpdates(msgs: unknown): void {
    this.malformed.push(msgs);
  }

  /**
   * A user's message, queued for getupdates. `items` replaces the text item; `messageId` repeats an
   * id (a redelivery) or names one (null: none); `bot` marks it bot-authored; `messageType` sets a
   * type outright. Answers the message id (exact, in decimal) and its context token.
   */
  push(
    from: string,
    text: string,
    o: {
      items?: unknown[];
      messageId?: bigint | number | null;
      bot?: boolean;
      refMsg?: unknown;
      messageType?: number;
    } = {},
  ): { messageId: string | null; contextToken: string } {
    const id = o.messageId === undefined ? this.nextId++ : o.messageId;
    const messageId = id === null ? null : BigInt(id);
    const contextToken = `ctx-${from.split("@")[0]}-${this.seq + 1}`;
    const tokens = this.issued.get(from) ?? new Set<string>();
    tokens.add(contextToken);
    this.issued.set(from, tokens);
    const items = o.items ?? [{ type: 1, text_item: { text } }];
    const msg: Record<string, unknown> = {
      ...(messageId === null ? {} : { message_id: messageId }),
      from_user_id: from,
      to_user_id: this.botId,
      create_time_ms: Date.now(),
      message_type: o.messageType ?? (o.bot ? 2 : 1),
      message_state: 2,
      // A quote rides on the text item it answers, as Tencent's plugin reads it (inbound.ts).
      item_list: o.refMsg ? [{ ...(items[0] as object), ref_msg: o.refMsg }, ...items.slice(1)] : items,
      context_token: contextToken,
    };
    this.queue.push({ seq: ++this.seq, msg });
    if (this.queue.length > MAX_RECORDS) this.queue.shift();
    for (const wake of [...this.waiters]) wake();
    return { messageId: messageId === null ? null : String(messageId), contextToken };
  }

  /** An object on the CDN: its reference and its key in the asked encoding. */
  putMedia(plain: Buffer, encoding: "raw" | "hex"): { param: string; aesKey: string } {
    const key = newKey();
    const param = `enc/${this.media.size + 1}+x=y&z`;
    this.media.set(param, encryptEcb(plain, key));
    return { param, aesKey: encodeKey(key, encoding) };
  }

  /** What the user sees, message by message. */
  visible(): string[] {
    return this.sent.map((m) => m.visible);
  }

  callsTo(route: string): RecordedCall[] {
    return this.calls.filter((c) => c.route === route);
  }

  async waitFor(check: () => boolean, timeoutMs = 5000, what = "condition"): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > until) throw new Error(`fake iLink: timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  // ── the wire ──────────────────────────────────────────────────────────────────────────────

  private touch(): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => void this.stop(), this.o.idleMs ?? 30_000);
    this.idle.unref();
  }

  private record(call: RecordedCall): void {
    if (this.calls.length >= MAX_RECORDS) this.calls.shift();
    this.calls.push(call);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.touch();
    if (this.calls.length + this.cdnRequests.length >= (this.o.maxCalls ?? 20_000)) {
      this.overflowed = true;
      res.writeHead(503).end();
      return;
    }
    const url = new URL(req.url ?? "/", this.origin);
    if (req.method === "GET" && url.pathname === "/c2c/download") return this.download(req, url, res);
    const route = url.pathname.replace(/^\/ilink\/bot\//, "");
    let body: Record<string, unknown> = {};
    if (req.method === "POST") {
      const raw = await readBody(req);
      if (raw === null) return void res.writeHead(413).end();
      try {
        body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      } catch {
        // iLink's answer to a body that is not JSON is not documented: no claim, the call is cut.
        this.authFailures += 1;
        return this.hangUp(res);
      }
    }
    const headers = {
      authorizationType: header(req, "authorizationtype"),
      uin: header(req, "x-wechat-uin"),
      authorization: header(req, "authorization") ? "Bearer …" : undefined,
    };
    const login = route === "get_bot_qrcode" || route === "get_qrcode_status";
    const baseInfo = body.base_info as { bot_agent?: unknown } | undefined;
    const framed =
      headers.authorizationType === "ilink_bot_token" &&
      isBase64Decimal(headers.uin) &&
      (login || (typeof baseInfo?.bot_agent === "string" && baseInfo.bot_agent.includes("parley")));
    const tokenOk = login || header(req, "authorization") === `Bearer ${this.token}`;
    const recorded: RecordedCall = {
      method: req.method ?? "",
      route,
      at: Date.now(),
      body: capped(body),
      code: 0,
      headers,
    };
    this.record(recorded);
    const reply = (answer: Record<string, unknown>) => {
      recorded.code = Number(answer.errcode ?? answer.ret ?? 0);
      this.answer(res, answer);
    };
    if (!framed) {
      // What iLink answers a call without these is not documented: no claim, the call is cut.
      this.authFailures += 1;
      return this.hangUp(res);
    }
    if (!tokenOk) {
      // A token iLink does not honour (another client took the bot over) reads -14 "session timeout".
      this.authFailures += 1;
      return reply({ errcode: -14, errmsg: "session timeout" });
    }
    const injected = this.take(routeOf(route));
    // Both fields carry the code (Tencent's monitor reads either); -14 says "session timeout".
    if (injected !== null)
      return reply({
        ret: injected,
        errcode: injected,
        ...(injected === -14 ? { errmsg: "session timeout" } : {}),
      });
    switch (route) {
      case "get_bot_qrcode":
        this.qrCount += 1;
        return reply({
          qrcode: `qr-${this.qrCount}`,
          qrcode_img_content: `https://liteapp.weixin.qq.com/q/fake${this.qrCount}`,
        });
      case "get_qrcode_status":
        return reply(this.loginStatus());
      case "getupdates":
        return this.getUpdates(String(body.get_updates_buf ?? ""), res, recorded);
      case "sendmessage":
        return reply(this.sendMessage(body.msg as Record<string, unknown> | undefined));
      case "getconfig":
        return reply({ ret: 0, typing_ticket: `ticket-${String(body.ilink_user_id ?? "")}` });
      case "sendtyping":
        this.typing.push({ user: String(body.ilink_user_id ?? ""), status: Number(body.status) });
        if (this.typing.length > MAX_RECORDS) this.typing.shift();
        return reply({ ret: 0 });
      default:
        // parley calls none of iLink's other routes: no claim about them, the call is cut.
        this.authFailures += 1;
        return this.hangUp(res);
    }
  }

  private loginStatus(): Record<string, unknown> {
    const script = this.o.loginScript ?? ["wait", "scaned", "confirmed"];
    const status = script[Math.min(this.loginStep++, script.length - 1)] ?? "wait";
    if (status !== "confirmed") return { status };
    return {
      status,
      bot_token: this.token,
      ilink_bot_id: this.botId,
      ilink_user_id: this.scannerId,
      baseurl: this.o.loginBaseUrl ?? this.origin,
    };
  }

  private async getUpdates(buf: string, res: ServerResponse, recorded: RecordedCall): Promise<void> {
    const acked = /^buf-(\d+)$/.exec(buf) ? Number(buf.slice(4)) : 0;
    if (this.malformed.length > 0) {
      recorded.code = 0;
      return this.answer(res, {
        ret: 0,
        msgs: this.malformed.shift(),
        get_updates_buf: buf,
        longpolling_timeout_ms: this.o.suggestedTimeoutMs ?? 2000,
      });
    }
    const pending = () => this.queue.filter((q) => q.seq > acked);
    if (pending().length === 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, this.o.holdMs ?? 1500);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        const wake = () => {
          this.waiters.delete(wake);
          done();
        };
        this.waiters.add(wake);
        res.on("close", wake);
      });
    }
    if (res.writableEnded || res.destroyed) return;
    const batch = pending().slice(0, 10);
    const last = batch.at(-1)?.seq ?? acked;
    const answer = {
      ret: 0,
      msgs: batch.map((q) => q.msg),
      get_updates_buf: `buf-${last}`,
      longpolling_timeout_ms: this.o.suggestedTimeoutMs ?? 2000,
    };
    recorded.code = 0;
    this.answer(res, answer);
  }

  private sendMessage(msg: Record<string, unknown> | undefined): Record<string, unknown> {
    const to = typeof msg?.to_user_id === "string" ? msg.to_user_id : "";
    const token = typeof msg?.context_token === "string" ? msg.context_token : "";
    // A token iLink did not issue to this peer: a bare ret -2, as iLink answers it (no errmsg).
    if (!to || !this.issued.get(to)?.has(token)) return { ret: -2 };
    const items = Array.isArray(msg?.item_list)
      ? (msg.item_list as { text_item?: { text?: unknown } }[])
      : [];
    const text = items.map((i) => (typeof i.text_item?.text === "string" ? i.text_item.text : "")).join("");
    if (this.sent.length >= MAX_RECORDS) this.sent.shift();
    this.sent.push({
      to,
      clientId: String(msg?.client_id ?? ""),
      text: text.slice(0, MAX_RECORDED_TEXT),
      visible: renderVisible(text.slice(0, MAX_RECORDED_TEXT)),
      contextToken: token,
      at: Date.now(),
    });
    // SendMessageResp has no fields.
    return {};
  }

  private download(req: IncomingMessage, url: URL, res: ServerResponse): void {
    this.cdnRequests.push({
      path: `${url.pathname}${url.search}`,
      authorization: header(req, "authorization") !== undefined,
    });
    const object = this.media.get(url.searchParams.get("encrypted_query_param") ?? "");
    if (!object) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": object.length });
    // In pieces, as a CDN streams: a reader that stops at its cap must not need the whole object.
    const piece = 64 * 1024;
    let at = 0;
    const pump = () => {
      while (at < object.length) {
        const ok = res.write(object.subarray(at, at + piece));
        at += piece;
        if (!ok) return void res.once("drain", pump);
      }
      res.end();
    };
    res.on("error", () => {});
    pump();
  }

  private take(route: Route | null): number | null {
    if (!route) return null;
    const list = this.injected.get(route);
    const first = list?.[0];
    if (!list || !first) return null;
    first.times -= 1;
    if (first.times <= 0) list.shift();
    return first.errcode;
  }

  /** No answer at all: the connection is cut (a claim about no platform, only about this call). */
  private hangUp(res: ServerResponse): void {
    res.socket?.destroy();
  }

  private answer(res: ServerResponse, body: Record<string, unknown>): void {
    if (res.writableEnded || res.destroyed) return;
    // iLink's errors live in 200 bodies: every answer is HTTP 200.
    res.writeHead(200, { "content-type": "application/json" }).end(wireJson(body));
  }
}

/** A marker no other value of the fake's bodies takes: where a 64-bit integer goes. */
const U64_MARK = "__fake_ilink_u64__";

/** JSON as iLink writes it: a bigint (a 64-bit id) becomes a bare number, every digit kept. */
export function wireJson(body: unknown): string {
  const marked = JSON.stringify(body, (_key, value: unknown) =>
    typeof value === "bigint" ? `${U64_MARK}${value}` : value,
  );
  return marked.replace(new RegExp(`"${U64_MARK}(-?\\d+)"`, "g"), "$1");
}

function routeOf(route: string): Route | null {
  if (route === "get_bot_qrcode") return "qrcode";
  if (route === "get_qrcode_status") return "qrstatus";
  return route === "getupdates" || route === "sendmessage" || route === "getconfig" || route === "sendtyping"
    ? route
    : null;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === "string" ? v : undefined;
}

function isBase64Decimal(v: string | undefined): boolean {
  if (!v) return false;
  return /^[0-9]{1,10}$/.test(Buffer.from(v, "base64").toString("utf8"));
}

function capped(body: Record<string, unknown>): Record<string, unknown> {
  const text = JSON.stringify(body);
  return text.length <= MAX_RECORDED_TEXT ? body : { truncated: text.slice(0, 200) };
}

async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req) {
    total += (chunk as Buffer).length;
    if (total > MAX_BODY_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
