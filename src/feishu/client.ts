/**
 * The Lark SDK's REST side, wired for parley: the SDK's `Client` (it fetches and caches the tenant
 * token itself) on an HTTP client that follows no redirect and reads bounded bodies, with every
 * call's `{code, msg, data}` answer checked, and Feishu's rate limits (HTTP 429, codes 99991400 and
 * 230020) waited out: the wait Feishu names in `x-ogw-ratelimit-reset`, else an exponential backoff,
 * during which nothing else is sent from this app (the limit is the app's, not one call's).
 */
import * as lark from "@larksuiteoapi/node-sdk";
import type { Clock } from "../messaging/base/clock.js";
import { sleep } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import { redactAll } from "../messaging/security/redact.js";
import { oneLine } from "../messaging/text/clip.js";
import { apiErrorOf, FeishuApiError, isRateLimited, refusalOf } from "./errors.js";

/** A reply is a few KB; bot info and one message's metadata are smaller still. */
const MAX_RESPONSE_BYTES = 1 << 20;
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * The SDK's own HTTP client, re-created: no redirect is followed (a token must never be carried to
 * a host `feishu.domain` does not name), bodies are bounded, calls time out. It unwraps answers to
 * their body the way the SDK's default instance does, which its callers rely on.
 */
export function createHttp(): lark.HttpInstance {
  const http = lark.defaultHttpInstance.create({
    maxRedirects: 0,
    timeout: REQUEST_TIMEOUT_MS,
    maxContentLength: MAX_RESPONSE_BYTES,
    maxBodyLength: MAX_RESPONSE_BYTES,
  });
  http.interceptors.response.use((resp) =>
    (resp.config as { $return_headers?: boolean }).$return_headers
      ? { data: resp.data, headers: resp.headers }
      : resp.data,
  );
  return http as unknown as lark.HttpInstance;
}

/**
 * The SDK's log lines on parley's logger. The SDK logs whole HTTP errors (request headers, the
 * bearer token among them), so only strings and error messages pass, each redacted.
 */
export function sdkLogger(logger: Logger): lark.Logger {
  const line = (args: unknown[]) =>
    oneLine(
      redactAll(
        args
          .map((a) => (typeof a === "string" ? a : a instanceof Error ? `${a.name}: ${a.message}` : ""))
          .filter(Boolean)
          .join(" "),
      ),
      500,
    );
  return {
    error: (...args: unknown[]) => logger.error(`feishu sdk: ${line(args)}`),
    warn: (...args: unknown[]) => logger.warn(`feishu sdk: ${line(args)}`),
    info: (...args: unknown[]) => logger.debug(`feishu sdk: ${line(args)}`),
    debug: () => {},
    trace: () => {},
  };
}

/** The SDK's REST client for one app at one origin, its token cached per client (not process-wide). */
export function createClient(o: {
  appId: string;
  appSecret: string;
  origin: string;
  http: lark.HttpInstance;
  logger: Logger;
}): lark.Client {
  return new lark.Client({
    appId: o.appId,
    appSecret: o.appSecret,
    domain: o.origin,
    httpInstance: o.http,
    cache: new lark.DefaultCache(),
    logger: sdkLogger(o.logger),
    loggerLevel: lark.LoggerLevel.warn,
  });
}

/** A message as Feishu wants it: `post` with its content as a JSON string. */
export interface OutgoingMessage {
  msgType: "post" | "text";
  content: string;
}

/** What parley reads of a message it looks up. */
export interface MessageInfo {
  messageId: string;
  /** "app" for a bot's message, "user" for a person's. */
  senderType: string;
  /** The sender's id: the app id for a bot. */
  senderId: string;
  content: string;
}

export interface BotIdentity {
  openId: string;
  appName: string;
}

export interface FeishuRestOptions {
  client: lark.Client;
  clock: Clock;
  logger: Logger;
  /** Attempts at one call while Feishu keeps rate-limiting it (default 6). */
  maxAttempts?: number;
  /** The longest single wait (default 60 s) and the first backoff step (default 1 s). */
  maxWaitMs?: number;
  backoffMs?: number;
}

export class FeishuRest {
  private blockedUntil = 0;
  private readonly maxAttempts: number;
  private readonly maxWaitMs: number;
  private readonly backoffMs: number;

  constructor(private readonly o: FeishuRestOptions) {
    this.maxAttempts = o.maxAttempts ?? 6;
    this.maxWaitMs = o.maxWaitMs ?? 60_000;
    this.backoffMs = o.backoffMs ?? 1000;
  }

  /** The bot this app answers as (`bot/v3/info`): its open_id (mentions) and app name (doctor). */
  async botInfo(): Promise<BotIdentity> {
    const body = await this.call("bot info", () =>
      this.o.client.request({ method: "GET", url: "/open-apis/bot/v3/info" }),
    );
    const bot = (body as { bot?: { open_id?: unknown; app_name?: unknown } }).bot;
    if (typeof bot?.open_id !== "string" || bot.open_id === "")
      throw new FeishuApiError(-1, "bot/v3/info named no open_id (is the bot ability on?)");
    return { openId: bot.open_id, appName: String(bot.app_name ?? "") };
  }

  /** Reply to a message; the new message's id. `uuid` makes a repeat of the same request a no-op. */
  async reply(messageId: string, message: OutgoingMessage, uuid?: string): Promise<string> {
    const body = await this.call("reply", () =>
      this.o.client.im.v1.message.reply({
        path: { message_id: messageId },
        data: { content: message.content, msg_type: message.msgType, ...(uuid ? { uuid } : {}) },
      }),
    );
    return idOf(body);
  }

  /** A message into a chat, answering nothing in particular (an inbound message without an id). */
  async create(chatId: string, message: OutgoingMessage, uuid?: string): Promise<string> {
    const body = await this.call("create", () =>
      this.o.client.im.v1.message.create({
        params: { receive_id_type: "chat_id" },
        data: {
          receive_id: chatId,
          content: message.content,
          msg_type: message.msgType,
          ...(uuid ? { uuid } : {}),
        },
      }),
    );
    return idOf(body);
  }

  /** Replace one of the bot's own messages (a resumed turn rewriting what its first run posted). */
  async update(messageId: string, message: OutgoingMessage): Promise<void> {
    await this.call("update", () =>
      this.o.client.im.v1.message.update({
        path: { message_id: messageId },
        data: { content: message.content, msg_type: message.msgType },
      }),
    );
  }

  async getMessage(messageId: string): Promise<MessageInfo | null> {
    const body = await this.call("get message", () =>
      this.o.client.im.v1.message.get({ path: { message_id: messageId } }),
    );
    const item = (body as { data?: { items?: unknown[] } }).data?.items?.[0] as
      | { message_id?: string; sender?: { sender_type?: string; id?: string }; body?: { content?: string } }
      | undefined;
    if (!item) return null;
    return {
      messageId: String(item.message_id ?? messageId),
      senderType: String(item.sender?.sender_type ?? ""),
      senderId: String(item.sender?.id ?? ""),
      content: String(item.body?.content ?? ""),
    };
  }

  /**
   * One call, its answer checked, rate limits waited out (bounded attempts). Every call waits while
   * a limit Feishu set is in force, so nothing is sent inside the window.
   */
  private async call(what: string, send: () => Promise<unknown>): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      const wait = this.blockedUntil - this.o.clock.now();
      if (wait > 0) await sleep(this.o.clock, wait);
      let failure: FeishuApiError;
      try {
        const body = await send();
        const refusal = refusalOf(body);
        if (!refusal) return body;
        failure = refusal;
      } catch (error) {
        const api = apiErrorOf(error);
        if (!api) throw error;
        failure = api;
      }
      if (!isRateLimited(failure) || attempt >= this.maxAttempts) throw failure;
      const ms = Math.min(this.maxWaitMs, failure.retryAfterMs ?? this.backoffMs * 2 ** (attempt - 1));
      this.blockedUntil = Math.max(this.blockedUntil, this.o.clock.now() + ms);
      this.o.logger.warn(`feishu: rate-limited on ${what}; waiting ${Math.ceil(ms / 1000)}s`, {
        code: failure.code,
        attempt,
      });
    }
  }
}

function idOf(body: unknown): string {
  const id = (body as { data?: { message_id?: unknown } }).data?.message_id;
  if (typeof id !== "string" || id === "") throw new FeishuApiError(-1, "the answer named no message_id");
  return id;
}
