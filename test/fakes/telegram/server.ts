/**
 * A loopback fake of the Telegram Bot API, at the wire: `/bot<token>/<method>` over node:http on
 * 127.0.0.1 and a random port. grammY's real client is pointed at it (`apiRoot`), so everything
 * parley does to Telegram crosses a real HTTP boundary. It records every call with its parsed
 * params, serves queued updates with getUpdates' offset semantics (an offset confirms everything
 * below it), validates what Telegram validates (HTML entities, the 4096 cap, 64-byte callback data,
 * the reaction set) and can inject errors. Files users send: `hostFile` stores bytes under a
 * file_id, getFile answers with a file_path, and `GET /file/bot<token>/<file_path>` serves them
 * (whole, streamed as fast as the client reads, stalled, redirected or refused), each download
 * recorded with its headers. Bounded: it stops itself after `lifetimeMs` and refuses calls (and
 * downloads) past `maxCalls`, so a test that forgets to close it cannot hang the run.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { FileBody } from "../file-body.js";
import { serveFileBody } from "../file-body.js";
import { HtmlParseError, parseTelegramHtml } from "./html.js";

export interface FakeUser {
  id: number;
  is_bot: boolean;
  first_name: string;
  username?: string;
}

export interface FakeChat {
  id: number;
  type: "private" | "group" | "supergroup" | "channel";
  title?: string;
  is_forum?: boolean;
}

export type Json = Record<string, unknown>;

export interface RecordedCall {
  method: string;
  params: Json;
  /** Milliseconds on the fake's clock (`now`), so a test with a virtual clock can reason about pace. */
  at: number;
  ok: boolean;
  error?: string;
  /** What the call answered (a sent Message carries its message_id). */
  result?: unknown;
}

export interface StoredMessage {
  chatId: number;
  messageId: number;
  threadId?: number;
  /** The body as sent (HTML source when parse_mode is HTML). */
  text: string;
  /** What a user sees. */
  visible: string;
  replyMarkup?: unknown;
  edits: number;
}

export interface InjectedError {
  code: number;
  description: string;
  retryAfter?: number;
}

/** A file a user "sent": what getFile reports for it and how its download answers. */
export interface FakeFileSpec extends FileBody {
  /** Answered with 302 to this location (which must never be followed). */
  redirectTo?: string;
  /** Answered with this status and no body. */
  status?: number;
  /** The file_size getFile and the message report (default: the real length). */
  fileSize?: number;
  /** The file_path getFile answers (default `<folder>/file_<n>.<ext>`); null = none at all. */
  filePath?: string | null;
  folder?: string;
}

/** The Bot API fields every file object shares, as a message carries them. */
export interface HostedFile {
  file_id: string;
  file_unique_id: string;
  file_size: number;
}

export interface FileRequest {
  method: string;
  /** The path after `/file/bot<token>/` (the token itself is not recorded). */
  filePath: string;
  headers: Record<string, string | string[] | undefined>;
  /** Body bytes written to the socket so far. */
  served: number;
  /** The client closed the connection before the whole body was written. */
  closedEarly: boolean;
}

/** The Bot API's download ceiling: getFile refuses bigger files. */
const MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024;

export interface FakeTelegramOptions {
  token?: string;
  bot?: { id: number; username: string; first_name?: string };
  lifetimeMs?: number;
  maxCalls?: number;
  now?: () => number;
  /** Longest a getUpdates long poll is held, whatever timeout the client asked for. */
  maxPollMs?: number;
}

/** The 73 emoji setMessageReaction accepts (Bot API ReactionTypeEmoji), VS16-free. */
const REACTIONS = new Set(
  "👍 👎 ❤ 🔥 🥰 👏 😁 🤔 🤯 😱 🤬 😢 🎉 🤩 🤮 💩 🙏 👌 🕊 🤡 🥱 🥴 😍 🐳 ❤‍🔥 🌚 🌭 💯 🤣 ⚡ 🍌 🏆 💔 🤨 😐 🍓 🍾 💋 🖕 😈 😴 😭 🤓 👻 👨‍💻 👀 🎃 🙈 😇 😨 🤝 ✍ 🤗 🫡 🎅 🎄 ☃ 💅 🤪 🗿 🆒 💘 🙉 🦄 😘 💊 🙊 😎 👾 🤷‍♂ 🤷 🤷‍♀ 😡".split(
    " ",
  ),
);

const MAX_TEXT_UTF16 = 4096;
const MAX_CALLBACK_BYTES = 64;

class ApiFailure extends Error {
  constructor(
    readonly code: number,
    readonly description: string,
    readonly retryAfter?: number,
  ) {
    super(description);
  }
}

const bad = (description: string) => new ApiFailure(400, `Bad Request: ${description}`);

export class FakeTelegram {
  readonly token: string;
  readonly bot: FakeUser;
  readonly calls: RecordedCall[] = [];
  readonly messages = new Map<string, StoredMessage>();
  apiRoot = "";
  /** True once maxCalls was exceeded: later calls were refused, and a test should fail loudly. */
  overflowed = false;

  private readonly server = createServer((req, res) => void this.handle(req, res));
  private readonly now: () => number;
  private readonly maxCalls: number;
  private readonly maxPollMs: number;
  private readonly lifetimeMs: number;
  private lifetimeTimer: ReturnType<typeof setTimeout> | undefined;
  private pending: Json[] = [];
  private nextUpdateId = 100;
  private nextMessageId = 1;
  private pollWaiters = new Set<() => void>();
  /** getUpdates calls open right now, and the most ever open at once (Telegram allows one poller). */
  private openPolls = 0;
  maxConcurrentPolls = 0;
  /** When each getUpdates began (epoch ms), newest last; capped so a long run stays bounded. */
  readonly pollStarts: number[] = [];
  private callWaiters = new Set<() => void>();
  private readonly injected = new Map<string, (InjectedError & { times: number })[]>();
  private commands: unknown[] = [];
  private stopped = false;
  /** Downloads from the file route, in arrival order. */
  readonly fileRequests: FileRequest[] = [];
  private readonly files = new Map<string, FakeFileSpec & { path: string | null; size: number }>();
  private nextFileId = 1;

  constructor(options: FakeTelegramOptions = {}) {
    this.token = options.token ?? "123456:TEST-token";
    this.bot = {
      id: options.bot?.id ?? 123456,
      is_bot: true,
      first_name: options.bot?.first_name ?? "Parley",
      username: options.bot?.username ?? "parley_test_bot",
    };
    this.now = options.now ?? (() => Date.now());
    this.maxCalls = options.maxCalls ?? 5000;
    this.maxPollMs = options.maxPollMs ?? 1000;
    this.lifetimeMs = options.lifetimeMs ?? 60_000;
  }

  static async start(options: FakeTelegramOptions = {}): Promise<FakeTelegram> {
    const fake = new FakeTelegram(options);
    await new Promise<void>((resolve) => fake.server.listen(0, "127.0.0.1", resolve));
    const { port } = fake.server.address() as AddressInfo;
    fake.apiRoot = `http://127.0.0.1:${port}`;
    fake.lifetimeTimer = setTimeout(() => void fake.stop(), fake.lifetimeMs);
    fake.lifetimeTimer.unref();
    return fake;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.lifetimeTimer);
    for (const wake of this.pollWaiters) wake();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /**
   * Telegram goes away: the listener closes and every connection drops, while the records and the
   * queued updates stay. `resume` listens on the same port again.
   */
  async pause(): Promise<void> {
    for (const wake of this.pollWaiters) wake();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Telegram is back, on the address the client already knows. */
  async resume(): Promise<void> {
    const port = Number(new URL(this.apiRoot).port);
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, "127.0.0.1", () => {
        this.server.off("error", reject);
        resolve();
      });
    });
  }

  // ── test-side controls ─────────────────────────────────────────────────────────────────────

  /** Queue a raw update; returns its update_id. */
  pushUpdate(update: Json): number {
    const id = this.nextUpdateId++;
    this.pending.push({ update_id: id, ...update });
    for (const wake of this.pollWaiters) wake();
    return id;
  }

  /** A user's message in a chat (private by default); returns { updateId, messageId }. */
  pushMessage(
    from: Partial<FakeUser> & { id: number },
    text: string,
    opts: { chat?: FakeChat; threadId?: number; entities?: Json[]; replyTo?: Json } = {},
  ): { updateId: number; messageId: number } {
    const messageId = this.nextMessageId++;
    const message: Json = {
      message_id: messageId,
      date: Math.floor(this.now() / 1000),
      chat: opts.chat ?? { id: from.id, type: "private", first_name: from.first_name ?? "User" },
      from: { is_bot: false, first_name: "User", ...from },
      text,
    };
    if (opts.threadId !== undefined) {
      message.message_thread_id = opts.threadId;
      message.is_topic_message = true;
    }
    if (opts.entities) message.entities = opts.entities;
    if (opts.replyTo) message.reply_to_message = opts.replyTo;
    return { updateId: this.pushUpdate({ message }), messageId };
  }

  /** A user's message carrying media fields (`{ photo: [...] }`, `{ document: {...} }`, ...). */
  pushMedia(
    from: Partial<FakeUser> & { id: number },
    media: Json,
    opts: {
      caption?: string;
      chat?: FakeChat;
      threadId?: number;
      mediaGroupId?: string;
      captionEntities?: Json[];
    } = {},
  ): { updateId: number; messageId: number } {
    const messageId = this.nextMessageId++;
    const message: Json = {
      message_id: messageId,
      date: Math.floor(this.now() / 1000),
      chat: opts.chat ?? { id: from.id, type: "private", first_name: from.first_name ?? "User" },
      from: { is_bot: false, first_name: "User", ...from },
      ...media,
    };
    if (opts.caption !== undefined) message.caption = opts.caption;
    if (opts.captionEntities) message.caption_entities = opts.captionEntities;
    if (opts.mediaGroupId !== undefined) message.media_group_id = opts.mediaGroupId;
    if (opts.threadId !== undefined) {
      message.message_thread_id = opts.threadId;
      message.is_topic_message = true;
    }
    return { updateId: this.pushUpdate({ message }), messageId };
  }

  /** Store a file as if a user had sent it; returns the fields a message's file object carries. */
  hostFile(spec: FakeFileSpec): HostedFile {
    const n = this.nextFileId++;
    const fileId = `FILE${n}-${"x".repeat(8)}`;
    const size = spec.fileSize ?? spec.bytes?.length ?? spec.stream?.total ?? 0;
    const path =
      spec.filePath === null ? null : (spec.filePath ?? `${spec.folder ?? "documents"}/file_${n}.bin`);
    this.files.set(fileId, { ...spec, path, size });
    return { file_id: fileId, file_unique_id: `U${n}`, file_size: size };
  }

  /** Downloads of one hosted file (matched by the file_path getFile gave for it). */
  fileRequestsFor(fileId: string): FileRequest[] {
    const path = this.files.get(fileId)?.path;
    return this.fileRequests.filter((r) => path !== null && r.filePath === path);
  }

  /** A button press on a message the bot sent. */
  pushCallback(from: Partial<FakeUser> & { id: number }, messageId: number, data: string): number {
    const stored = [...this.messages.values()].find((m) => m.messageId === messageId);
    const message: Json | undefined = stored
      ? {
          message_id: stored.messageId,
          date: Math.floor(this.now() / 1000),
          chat: { id: stored.chatId, type: stored.chatId > 0 ? "private" : "supergroup" },
          text: stored.visible,
          ...(stored.threadId === undefined ? {} : { message_thread_id: stored.threadId }),
          ...(stored.replyMarkup ? { reply_markup: stored.replyMarkup } : {}),
        }
      : undefined;
    return this.pushUpdate({
      callback_query: {
        id: `cb${this.nextUpdateId}`,
        from: { is_bot: false, first_name: "User", ...from },
        chat_instance: "ci",
        data,
        ...(message ? { message } : {}),
      },
    });
  }

  /** The next `times` calls of `method` fail with this error, before any of their effects apply. */
  inject(method: string, error: InjectedError, times = 1): void {
    const list = this.injected.get(method) ?? [];
    list.push({ ...error, times });
    this.injected.set(method, list);
  }

  clearInjections(): void {
    this.injected.clear();
  }

  callsOf(method: string): RecordedCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  /** Messages the bot sent, in send order (their latest content). */
  sentMessages(chatId?: number): StoredMessage[] {
    return [...this.messages.values()].filter((m) => chatId === undefined || m.chatId === chatId);
  }

  /** Resolves once `predicate` holds (checked after every call); rejects after `timeoutMs`. */
  waitFor(predicate: () => boolean, timeoutMs = 5000, what = "condition"): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!predicate()) return;
        cleanup();
        resolve();
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`fake telegram: timed out waiting for ${what}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.callWaiters.delete(check);
      };
      this.callWaiters.add(check);
    });
  }

  /** Pending (unconfirmed) update ids. */
  pendingUpdateIds(): number[] {
    return this.pending.map((u) => u.update_id as number);
  }

  // ── HTTP ────────────────────────────────────────────────────────────────────────────────────

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url?.split("?")[0] ?? "";
    if (url.startsWith("/file/")) return this.serveFile(req, res, url);
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(req.url?.split("?")[0] ?? "");
    let params: Json = {};
    try {
      params = await readParams(req);
    } catch (error) {
      return send(res, 400, { ok: false, error_code: 400, description: `Bad Request: ${String(error)}` });
    }
    if (!match) return send(res, 404, { ok: false, error_code: 404, description: "Not Found" });
    const [, token, method = ""] = match;
    if (token !== this.token)
      return send(res, 401, { ok: false, error_code: 401, description: "Unauthorized" });
    if (this.calls.length >= this.maxCalls) {
      this.overflowed = true;
      return send(res, 500, { ok: false, error_code: 500, description: "fake: call cap exceeded" });
    }
    const call: RecordedCall = { method, params, at: this.now(), ok: true };
    this.calls.push(call);
    // Waiters see a call on arrival too: a long poll is "in flight" long before it answers.
    this.notify();
    try {
      const injected = this.takeInjection(method);
      if (injected) throw new ApiFailure(injected.code, injected.description, injected.retryAfter);
      const result = await this.execute(method, params);
      call.result = result;
      send(res, 200, { ok: true, result });
    } catch (error) {
      const failure =
        error instanceof ApiFailure
          ? error
          : error instanceof HtmlParseError
            ? bad(error.message)
            : new ApiFailure(500, `Internal: ${String(error)}`);
      call.ok = false;
      call.error = failure.description;
      send(res, failure.code, {
        ok: false,
        error_code: failure.code,
        description: failure.description,
        ...(failure.retryAfter === undefined ? {} : { parameters: { retry_after: failure.retryAfter } }),
      });
    } finally {
      this.notify();
    }
  }

  private notify(): void {
    for (const check of [...this.callWaiters]) check();
  }

  private takeInjection(method: string): InjectedError | undefined {
    const list = this.injected.get(method);
    const head = list?.[0];
    if (!list || !head) return undefined;
    head.times -= 1;
    if (head.times <= 0) list.shift();
    return head;
  }

  private async execute(method: string, p: Json): Promise<unknown> {
    switch (method) {
      case "getMe":
        return this.bot;
      case "getUpdates":
        return this.getUpdates(p);
      case "sendMessage":
        return this.sendMessage(p);
      case "editMessageText":
        return this.editMessageText(p);
      case "editMessageReplyMarkup":
        return this.editReplyMarkup(p);
      case "deleteMessage":
        this.messages.delete(key(Number(p.chat_id), Number(p.message_id)));
        return true;
      case "answerCallbackQuery":
      case "sendChatAction":
        return true;
      case "setMyCommands":
        this.commands = (p.commands as unknown[]) ?? [];
        return true;
      case "getMyCommands":
        return this.commands;
      case "setMessageReaction":
        for (const r of (p.reaction as Json[] | undefined) ?? []) {
          if (!REACTIONS.has(String(r.emoji))) throw bad("REACTION_INVALID");
        }
        return true;
      case "getFile":
        return this.getFile(p);
      case "sendPhoto":
        return this.store(p, "", undefined);
      case "sendMediaGroup":
        return ((p.media as unknown[]) ?? []).map(() => this.store(p, "", undefined));
      default:
        throw new ApiFailure(404, "Not Found: method not found");
    }
  }

  private async getUpdates(p: Json): Promise<Json[]> {
    if (this.pollStarts.length < 200_000) this.pollStarts.push(Date.now());
    this.openPolls += 1;
    this.maxConcurrentPolls = Math.max(this.maxConcurrentPolls, this.openPolls);
    try {
      return await this.pollOnce(p);
    } finally {
      this.openPolls -= 1;
    }
  }

  private async pollOnce(p: Json): Promise<Json[]> {
    const offset = Number(p.offset ?? 0);
    // getUpdates(offset=N) confirms everything below N: Telegram forgets it for good.
    if (offset > 0) this.pending = this.pending.filter((u) => (u.update_id as number) >= offset);
    const ready = () => this.pending.filter((u) => (u.update_id as number) >= offset).slice(0, 100);
    if (ready().length > 0 || this.stopped) return ready();
    const waitMs = Math.min(Number(p.timeout ?? 0) * 1000, this.maxPollMs);
    if (waitMs > 0) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.pollWaiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, waitMs);
        this.pollWaiters.add(wake);
      });
    }
    return ready();
  }

  private getFile(p: Json): Json {
    const fileId = String(p.file_id ?? "");
    const file = this.files.get(fileId);
    if (!file) throw bad("invalid file_id");
    if (file.size > MAX_DOWNLOAD_BYTES) throw bad("file is too big");
    const n = fileId.slice(4).split("-")[0];
    return {
      file_id: fileId,
      file_unique_id: `U${n}`,
      file_size: file.size,
      ...(file.path === null ? {} : { file_path: file.path }),
    };
  }

  /** `GET /file/bot<token>/<file_path>`: the download route, bounded like the API. */
  private async serveFile(req: IncomingMessage, res: ServerResponse, url: string): Promise<void> {
    const match = /^\/file\/bot([^/]+)\/(.+)$/.exec(url);
    const token = match?.[1] ? decodeURIComponent(match[1]) : undefined;
    const filePath = match?.[2] ? decodeURIComponent(match[2]) : "";
    if (token !== this.token) {
      res.writeHead(404).end();
      return;
    }
    if (this.calls.length + this.fileRequests.length >= this.maxCalls) {
      this.overflowed = true;
      res.writeHead(500).end();
      return;
    }
    const rec: FileRequest = {
      method: req.method ?? "GET",
      filePath,
      headers: { ...req.headers },
      served: 0,
      closedEarly: false,
    };
    this.fileRequests.push(rec);
    this.notify();
    const spec = [...this.files.values()].find((f) => f.path === filePath);
    if (!spec || rec.method !== "GET") {
      res.writeHead(404).end();
      return;
    }
    if (spec.redirectTo) {
      res.writeHead(302, { location: spec.redirectTo }).end();
      return;
    }
    if (spec.status !== undefined) {
      res.writeHead(spec.status).end();
      return;
    }
    await serveFileBody(res, spec, rec, () => this.notify());
  }

  private sendMessage(p: Json): Json {
    const text = String(p.text ?? "");
    if (text === "") throw bad("message text is empty");
    return this.store(p, text, p.reply_markup);
  }

  private store(p: Json, text: string, replyMarkup: unknown): Json {
    const chatId = Number(p.chat_id);
    if (!Number.isFinite(chatId)) throw bad("chat not found");
    const visible = this.checkText(text, p.parse_mode);
    checkMarkup(replyMarkup);
    const messageId = this.nextMessageId++;
    const threadId = p.message_thread_id === undefined ? undefined : Number(p.message_thread_id);
    const stored: StoredMessage = { chatId, messageId, text, visible, replyMarkup, edits: 0 };
    if (threadId !== undefined) stored.threadId = threadId;
    this.messages.set(key(chatId, messageId), stored);
    return {
      message_id: messageId,
      date: Math.floor(this.now() / 1000),
      chat: { id: chatId, type: chatId > 0 ? "private" : "supergroup" },
      from: this.bot,
      text: visible,
      ...(threadId === undefined ? {} : { message_thread_id: threadId }),
    };
  }

  private editMessageText(p: Json): Json {
    const stored = this.messages.get(key(Number(p.chat_id), Number(p.message_id)));
    if (!stored) throw bad("message to edit not found");
    const text = String(p.text ?? "");
    if (text === "") throw bad("message text is empty");
    const visible = this.checkText(text, p.parse_mode);
    checkMarkup(p.reply_markup);
    if (visible === stored.visible && JSON.stringify(p.reply_markup) === JSON.stringify(stored.replyMarkup)) {
      throw bad(
        "message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
      );
    }
    stored.text = text;
    stored.visible = visible;
    stored.replyMarkup = p.reply_markup;
    stored.edits += 1;
    return { message_id: stored.messageId, chat: { id: stored.chatId }, text: visible };
  }

  private editReplyMarkup(p: Json): Json {
    const stored = this.messages.get(key(Number(p.chat_id), Number(p.message_id)));
    if (!stored) throw bad("message to edit not found");
    checkMarkup(p.reply_markup);
    stored.replyMarkup = p.reply_markup;
    return { message_id: stored.messageId, chat: { id: stored.chatId }, text: stored.visible };
  }

  private checkText(text: string, parseMode: unknown): string {
    const visible = parseMode === "HTML" ? parseTelegramHtml(text) : text;
    // Telegram counts the text AFTER entity parsing, in UTF-16 code units.
    if (visible.length > MAX_TEXT_UTF16) throw bad("message is too long");
    return visible;
  }
}

function key(chatId: number, messageId: number): string {
  return `${chatId}:${messageId}`;
}

function checkMarkup(markup: unknown): void {
  const rows = (markup as { inline_keyboard?: Json[][] } | undefined)?.inline_keyboard;
  for (const row of rows ?? []) {
    for (const button of row) {
      const data = button.callback_data;
      if (typeof data === "string" && Buffer.byteLength(data, "utf8") > MAX_CALLBACK_BYTES)
        throw bad("BUTTON_DATA_INVALID");
    }
  }
}

const JSON_FIELDS = new Set([
  "reply_markup",
  "media",
  "reply_parameters",
  "reaction",
  "commands",
  "entities",
]);

/** JSON bodies, and multipart for uploads (file parts are recorded as their name, type and size). */
async function readParams(req: IncomingMessage): Promise<Json> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const type = req.headers["content-type"] ?? "";
  if (body.length === 0) return {};
  if (type.includes("application/json")) return JSON.parse(body.toString("utf8")) as Json;
  if (type.includes("multipart/form-data")) return parseMultipart(body, type);
  throw new Error(`unsupported content-type ${type}`);
}

/**
 * A tolerant multipart reader: grammY writes `content-disposition:form-data;name="x"` without
 * spaces and with an unquoted filename, which stricter parsers refuse but real servers accept.
 */
function parseMultipart(body: Buffer, type: string): Json {
  const boundary = /boundary=("?)([^";]+)\1/.exec(type)?.[2];
  if (!boundary) throw new Error("multipart without a boundary");
  const out: Json = {};
  const raw = body.toString("latin1");
  for (const part of raw.split(`--${boundary}`).slice(1)) {
    if (part.startsWith("--")) break;
    const split = part.indexOf("\r\n\r\n");
    if (split < 0) continue;
    const headers = part.slice(0, split);
    const value = part.slice(split + 4).replace(/\r\n$/, "");
    const name = /name="([^"]*)"/i.exec(headers)?.[1];
    if (!name) continue;
    const filename = /filename="?([^";\r\n]*)"?/i.exec(headers)?.[1];
    if (filename !== undefined) {
      out[name] = { file: filename, size: Buffer.from(value, "latin1").length };
      continue;
    }
    const text = Buffer.from(value, "latin1").toString("utf8");
    out[name] = JSON_FIELDS.has(name) ? JSON.parse(text) : text;
  }
  return out;
}

function send(res: ServerResponse, status: number, payload: unknown): void {
  const body = JSON.stringify(payload);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}
