/**
 * grammY wiring and Telegram's rate quirks. Two API transformers sit under every call:
 *
 * - a per-chat pacer: Telegram's limits are per CHAT (about one message a second in a private
 *   chat, twenty a minute in a group) and shared by sends, edits and reactions, so every
 *   chat-addressed call waits its turn on one queue per chat;
 * - a 429 handler that honours `retry_after`: it blocks that chat's queue until the given time and
 *   retries, so the edits queued behind the refused one wait too instead of spending the penalty.
 *
 * Implemented here rather than with @grammyjs/auto-retry: the plugin is not a dependency, and the
 * waits must run on the injected clock (tests drive them without real time) and feed the pacer.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { ApiCallFn, RawApi, Transformer } from "grammy";
import { Bot, HttpError, InputFile } from "grammy";
import type { Clock } from "../messaging/base/clock.js";
import { realClock, sleep } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import { silentLogger } from "../messaging/base/logger.js";
import type { TelegramOps, TgPayload } from "./wire.js";

/** Calls that count against a chat's send budget (typing and callback answers do not). */
const PACED_METHODS = new Set([
  "sendMessage",
  "editMessageText",
  "editMessageReplyMarkup",
  "sendPhoto",
  "sendMediaGroup",
  "setMessageReaction",
  "deleteMessage",
]);

/**
 * Calls that may reach Telegram twice without a second effect (an edit to the same text, a
 * reaction, a lookup): retried when the network failed under them, e.g. a kept-alive connection
 * the other side closed just as the call went out. A send is not among them: it may have landed.
 */
const IDEMPOTENT_METHODS = new Set([
  "editMessageText",
  "editMessageReplyMarkup",
  "setMessageReaction",
  "sendChatAction",
  "getMe",
  "getMyCommands",
  "setMyCommands",
  "getFile",
]);
const NETWORK_RETRIES = 2;

export interface PaceOptions {
  /** Minimum gap between two paced calls to one private chat. */
  privateIntervalMs: number;
  /** Minimum gap in a group or supergroup (negative chat id). */
  groupIntervalMs: number;
  /** Retries of one call after 429s; past it the error is returned to the caller. */
  maxRetries: number;
  /** A retry_after above this is not waited out (the caller reports the part as not delivered). */
  maxRetryAfterSeconds: number;
}

export const DEFAULT_PACE: PaceOptions = {
  privateIntervalMs: 1000,
  groupIntervalMs: 3000,
  maxRetries: 3,
  maxRetryAfterSeconds: 120,
};

/**
 * One FIFO queue per chat: a call starts when the chat's previous call has finished AND is at least
 * one interval old, so calls to a chat are strictly ordered (an edit never overtakes the send it
 * edits) and a retry keeps its place at the head of the queue.
 */
export class ChatPacer {
  private readonly nextAt = new Map<string, number>();
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(
    private readonly clock: Clock,
    private readonly pace: PaceOptions,
  ) {}

  intervalFor(chat: string): number {
    return chat.startsWith("-") ? this.pace.groupIntervalMs : this.pace.privateIntervalMs;
  }

  /** Run `call` in the chat's queue; `call` may `hold` the chat (a 429) and is retried by its caller. */
  run<T>(chat: string, signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(chat) ?? Promise.resolve();
    const mine = previous.then(async () => {
      await this.waitTurn(chat, signal);
      return call();
    });
    // The queue continues past a failed call; the caller still sees its rejection.
    const tail = mine.catch(() => undefined);
    this.tails.set(chat, tail);
    void tail.then(() => {
      if (this.tails.get(chat) === tail) this.tails.delete(chat);
    });
    return mine;
  }

  /**
   * Sleep until the chat may be called again (re-checked: a 429 may have pushed it back), then
   * claim the slot: the next call waits one interval from now.
   */
  async waitTurn(chat: string, signal: AbortSignal | undefined): Promise<void> {
    for (;;) {
      const wait = (this.nextAt.get(chat) ?? 0) - this.clock.now();
      if (wait <= 0) break;
      await sleep(this.clock, wait, signal);
    }
    this.nextAt.set(chat, this.clock.now() + this.intervalFor(chat));
  }

  /** Telegram said "retry after": nothing more goes to this chat before `untilMs`. */
  block(chat: string, untilMs: number): void {
    this.nextAt.set(chat, Math.max(this.nextAt.get(chat) ?? 0, untilMs));
  }
}

function chatOf(payload: unknown): string | undefined {
  const id = (payload as { chat_id?: unknown } | undefined)?.chat_id;
  return typeof id === "number" || typeof id === "string" ? String(id) : undefined;
}

type Call = (method: string, payload: unknown, signal?: AbortSignal) => ReturnType<ApiCallFn<RawApi>>;

/**
 * The hook of the call being made (TelegramOps.call's `onWire`), carried through grammY's
 * transformer chain by async context: the pacer runs it once the call's turn has come.
 */
const onWireOfCall = new AsyncLocalStorage<() => Promise<void>>();

/** The pacing + 429 transformer described in the module comment. */
export function pacingTransformer(
  pacer: ChatPacer,
  pace: PaceOptions,
  clock: Clock,
  logger: Logger = silentLogger,
): Transformer {
  const transformer = async (prev: Call, method: string, payload: unknown, signal?: AbortSignal) => {
    const chat = PACED_METHODS.has(method) ? chatOf(payload) : undefined;
    const attempt = async () => {
      let networkRetries = 0;
      for (let retry = 0; ; retry += 1) {
        await onWireOfCall.getStore()?.();
        let result: Awaited<ReturnType<Call>>;
        try {
          result = await prev(method, payload, signal);
        } catch (error) {
          if (
            !(error instanceof HttpError) ||
            !IDEMPOTENT_METHODS.has(method) ||
            networkRetries >= NETWORK_RETRIES
          )
            throw error;
          networkRetries += 1;
          logger.info("telegram: the network failed under an idempotent call; retrying", { method });
          await sleep(clock, 250 * 4 ** (networkRetries - 1), signal);
          retry -= 1; // not a 429: the retry_after budget stays as it was
          continue;
        }
        if (result.ok || result.error_code !== 429) return result;
        const retryAfter = result.parameters?.retry_after;
        if (retryAfter === undefined || retry >= pace.maxRetries || retryAfter > pace.maxRetryAfterSeconds) {
          logger.warn("telegram: rate limited; giving up on this call", { method, retryAfter, retry });
          return result;
        }
        logger.info("telegram: rate limited; honouring retry_after", { method, retryAfter });
        if (chat === undefined) await sleep(clock, retryAfter * 1000, signal);
        else {
          pacer.block(chat, clock.now() + retryAfter * 1000);
          await pacer.waitTurn(chat, signal);
        }
      }
    };
    return chat === undefined ? attempt() : pacer.run(chat, signal, attempt);
  };
  return transformer as unknown as Transformer;
}

export interface CreateBotOptions {
  token: string;
  apiRoot?: string | undefined;
  clock?: Clock;
  logger?: Logger;
  pace?: Partial<PaceOptions>;
  /** The HTTP client grammY uses (an embedding's proxy-aware fetch, a test's counting one). */
  fetch?: typeof fetch;
}

/** A grammY Bot whose API calls run through the pacer; `apiRoot` reaches a self-hosted server or a fake. */
export function createTelegramBot(options: CreateBotOptions): Bot {
  const clock = options.clock ?? realClock;
  const pace = { ...DEFAULT_PACE, ...options.pace };
  const bot = new Bot(options.token, {
    client: {
      ...(options.apiRoot ? { apiRoot: options.apiRoot } : {}),
      // Longer than any long poll we ask for (at most 50 s), shorter than grammY's 500 s default.
      timeoutSeconds: 75,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    },
  });
  bot.api.config.use(pacingTransformer(new ChatPacer(clock, pace), pace, clock, options.logger));
  return bot;
}

type RawCall = (payload: TgPayload, signal?: AbortSignal) => Promise<unknown>;

/** The one call port over grammY's raw API (every call passes the bot's transformers). */
export function telegramOps(bot: Bot): TelegramOps {
  const raw = bot.api.raw as unknown as Record<string, RawCall>;
  return {
    call: async <T>(
      method: string,
      payload: TgPayload,
      signal?: AbortSignal,
      onWire?: () => Promise<void>,
    ) => {
      const fn = raw[method];
      if (!fn) throw new Error(`unknown Bot API method ${method}`);
      // grammY pre-binds an empty payload for zero-argument methods such as getMe.
      const send = () =>
        method === "getMe"
          ? (fn as unknown as (s?: AbortSignal) => Promise<unknown>)(signal)
          : fn(payload, signal);
      const result = await (onWire ? onWireOfCall.run(onWire, send) : send());
      return result as T;
    },
    file: (bytes, filename) => new InputFile(bytes, filename),
  };
}
