/**
 * Discord's network edge: @discordjs/rest for every REST call (its per-bucket and global rate-limit
 * handling: a bucket that reported Remaining 0 is waited out before the next call on it, a global
 * 429 holds every route except the interaction callbacks Discord exempts) and @discordjs/ws for the
 * Gateway (HELLO/IDENTIFY/READY, heartbeats with jitter, resume). The REST base is configurable and
 * gateway discovery (GET /gateway/bot) follows it, so tests reach a loopback fake.
 *
 * Added here, and only here, beyond discord.js (see guards.ts for why each exists): the
 * invalid-request breaker and the minimum-healthy-connection reconnect guard. Results are
 * classified rather than thrown, so a renderer can report a part that did not land. Log lines name
 * the route template, never a URL: interaction routes carry a token in the path.
 */
import { DiscordAPIError, HTTPError, type RawFile, REST } from "@discordjs/rest";
import type { SessionInfo } from "@discordjs/ws";
import { WebSocketManager, WebSocketShardEvents } from "@discordjs/ws";
import type { Clock } from "../messaging/base/clock.js";
import { realClock, sleep } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { BreakerOptions, ReconnectGuardOptions } from "./guards.js";
import { InvalidRequestBreaker, ReconnectGuard } from "./guards.js";
import type { InteractionCallback, MessageBody } from "./payload.js";
import { messagePayload } from "./payload.js";
import type { DiscordChannel } from "./wire.js";
import { channelSchema, readySchema } from "./wire.js";

export const DISCORD_MAX_FILE_BYTES = 10 * 1024 * 1024;
export const DISCORD_MAX_FILES_PER_MESSAGE = 10;
/** Below files x per-file: the aggregate is what bounds the bytes one message holds. */
export const DISCORD_MAX_TOTAL_UPLOAD_BYTES = 25 * 1024 * 1024;

export const INTENT_GUILD_MESSAGES = 1 << 9;
export const INTENT_DIRECT_MESSAGES = 1 << 12;
/** Privileged: without it guild message content arrives empty. */
export const INTENT_MESSAGE_CONTENT = 1 << 15;

/** DMs only, unless any guild thread/channel is allowed (then guild messages + their content). */
export function intentsFor(guild: boolean): number {
  return guild
    ? INTENT_DIRECT_MESSAGES | INTENT_GUILD_MESSAGES | INTENT_MESSAGE_CONTENT
    : INTENT_DIRECT_MESSAGES;
}

export type DiscordApiResult<T> =
  | { ok: true; data: T }
  | { ok: false; kind: "permanent" | "transient" | "refused"; status: number; message: string };

/** A call Discord did not take, for a caller whose contract is to throw (the client itself classifies). */
export class DiscordCallError extends Error {
  constructor(
    what: string,
    readonly status: number,
  ) {
    super(`discord ${what} failed (${status})`);
    this.name = "DiscordCallError";
  }
}

export function ensureOk(what: string, res: DiscordApiResult<unknown>): void {
  if (!res.ok) throw new DiscordCallError(what, res.status);
}

export interface UploadFile {
  name: string;
  data: Uint8Array;
  contentType: string;
}

export interface DiscordClientOptions {
  token: string;
  /** REST base, e.g. https://discord.com/api (the version segment is added). */
  apiBase: string;
  intents: number;
  logger: Logger;
  clock?: Clock;
  onDispatch: (event: string, data: unknown) => void;
  /** connected=true only after READY/RESUMED; a fatal close reports its reason. */
  onState?: (state: { connected: boolean; error?: string }) => void;
  breaker?: Omit<BreakerOptions, "clock">;
  reconnect?: Omit<ReconnectGuardOptions, "clock">;
  /** Bound on the first READY. */
  readyTimeoutMs?: number;
  /** Per-request timeout handed to @discordjs/rest. */
  requestTimeoutMs?: number;
}

interface CallOptions {
  body?: unknown;
  files?: UploadFile[];
  /** Interaction routes are authorized by their token, not the bot token. */
  auth?: boolean;
}

export class DiscordClient {
  readonly rest: REST;
  private manager: WebSocketManager | null = null;
  private readonly breaker: InvalidRequestBreaker;
  private readonly reconnect: ReconnectGuard;
  private readonly clock: Clock;
  private readonly sessions = new Map<number, SessionInfo>();
  private reconnectPending = false;
  private readonly stopping = new AbortController();
  botUserId = "";
  applicationId = "";
  connected = false;

  constructor(private readonly o: DiscordClientOptions) {
    this.clock = o.clock ?? realClock;
    this.breaker = new InvalidRequestBreaker({ clock: this.clock, ...o.breaker });
    this.reconnect = new ReconnectGuard({ clock: this.clock, ...o.reconnect });
    this.rest = new REST({
      api: o.apiBase.replace(/\/+$/, ""),
      version: "10",
      timeout: o.requestTimeoutMs ?? 15_000,
    }).setToken(o.token);
    this.rest.on("response", (_request, response) => {
      this.breaker.record(response.status, response.headers.get("x-ratelimit-scope"));
    });
  }

  /** Open the Gateway; resolves once READY arrived (bounded), rejects on a fatal close or timeout. */
  async connect(): Promise<void> {
    const manager = new WebSocketManager({
      token: this.o.token,
      intents: this.o.intents,
      rest: this.rest,
      shardCount: 1,
      // A per-client session store: the library's default is process-global, so a second client
      // in one process would RESUME the first one's session.
      retrieveSessionInfo: (shardId) => this.sessionFor(shardId),
      updateSessionInfo: (shardId, info) => {
        if (info) this.sessions.set(shardId, info);
        else this.sessions.delete(shardId);
      },
      readyTimeout: this.o.readyTimeoutMs ?? 15_000,
    });
    this.manager = manager;
    manager.on(WebSocketShardEvents.Dispatch, ({ data }) => this.onDispatch(data));
    manager.on(WebSocketShardEvents.Resumed, () => this.setConnected(true));
    manager.on(WebSocketShardEvents.Closed, ({ code }) => {
      this.reconnect.closed();
      this.reconnectPending = true;
      this.setConnected(false, code >= 4000 && code !== 4200 ? `gateway closed (${code})` : undefined);
    });
    manager.on(WebSocketShardEvents.Error, ({ error }) => {
      this.o.logger.warn("discord gateway error", { error: error.message });
    });
    const timeoutMs = (this.o.readyTimeoutMs ?? 15_000) + 5_000;
    let timer: unknown;
    const timeout = new Promise<never>((_, reject) => {
      timer = this.clock.setTimeout(
        () => reject(new Error(`no READY from the Discord gateway within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      await Promise.race([manager.connect(), timeout]);
    } catch (error) {
      await this.close();
      throw error;
    } finally {
      this.clock.clearTimeout(timer);
    }
  }

  /**
   * The reconnect guard's hook. @discordjs/ws awaits this before every new connection attempt, so
   * it is where the backoff delay can be spent. While stopping, the wait never settles: the shard
   * is being discarded, and resolving would let it open a socket nobody closes.
   */
  private async sessionFor(shardId: number): Promise<SessionInfo | null> {
    if (this.reconnectPending) {
      this.reconnectPending = false;
      const delay = this.reconnect.delayMs();
      if (delay > 0) {
        this.o.logger.info("discord gateway reconnect backoff", { ms: delay });
        try {
          await sleep(this.clock, delay, this.stopping.signal);
        } catch {
          return new Promise<never>(() => {});
        }
      }
    }
    return this.sessions.get(shardId) ?? null;
  }

  private onDispatch(payload: { t?: unknown; d?: unknown }): void {
    const event = typeof payload.t === "string" ? payload.t : "";
    if (event === "READY") {
      const ready = readySchema.safeParse(payload.d);
      if (ready.success) {
        this.botUserId = ready.data.user.id;
        this.applicationId = ready.data.application.id;
      } else this.o.logger.warn("discord READY without user/application", {});
      this.setConnected(true);
    }
    try {
      this.o.onDispatch(event, payload.d);
    } catch (error) {
      this.o.logger.error("discord dispatch handler failed", { event, error: String(error) });
    }
  }

  private setConnected(connected: boolean, error?: string): void {
    if (connected) this.reconnect.opened();
    this.connected = connected;
    this.o.onState?.(error === undefined ? { connected } : { connected, error });
  }

  async close(): Promise<void> {
    this.stopping.abort();
    const manager = this.manager;
    this.manager = null;
    if (manager) {
      try {
        await manager.destroy({ reason: "parley shutting down" });
      } catch (error) {
        this.o.logger.warn("discord gateway close failed", { error: String(error) });
      }
      manager.removeAllListeners();
    }
    this.rest.clearHashSweeper();
    this.rest.clearHandlerSweeper();
    this.connected = false;
  }

  // ── REST ───────────────────────────────────────────────────────────────────────────────────

  /** The one request path: breaker check, @discordjs/rest (rate limits, retries), classification. */
  async call<T>(
    method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE",
    route: `/${string}`,
    o: CallOptions = {},
  ) {
    const template = route
      .replace(/\d{15,20}/g, ":id")
      .replace(/\/interactions\/:id\/[^/]+/, "/interactions/:id/:token")
      .replace(/\/webhooks\/:id\/[^/]+/, "/webhooks/:id/:token");
    if (this.breaker.isOpen()) {
      this.o.logger.warn("discord send refused: invalid-request breaker open", {
        route: template,
        coolOffMs: this.breaker.remainingMs(),
      });
      return { ok: false, kind: "refused", status: 0, message: "invalid-request breaker open" } as const;
    }
    const files: RawFile[] | undefined = o.files?.map((f, i) => ({
      key: `files[${i}]`,
      name: f.name,
      data: Buffer.from(f.data),
      contentType: f.contentType,
    }));
    try {
      const data = (await this.rest.request({
        method: method as never,
        fullRoute: route,
        ...(o.body === undefined ? {} : { body: o.body }),
        ...(files ? { files } : {}),
        ...(o.auth === false ? { auth: false } : {}),
      })) as T;
      return { ok: true, data } as const;
    } catch (error) {
      const result = classify(error);
      this.o.logger.warn("discord request failed", {
        method,
        route: template,
        status: result.status,
        kind: result.kind,
        error: result.message,
      });
      return result;
    }
  }

  createMessage(channelId: string, body: MessageBody, files?: UploadFile[]) {
    return this.call<{ id: string }>("POST", `/channels/${channelId}/messages`, {
      body: messagePayload(body),
      ...(files?.length ? { files } : {}),
    });
  }

  editMessage(channelId: string, messageId: string, body: MessageBody, files?: UploadFile[]) {
    return this.call<{ id: string }>("PATCH", `/channels/${channelId}/messages/${messageId}`, {
      body: messagePayload(body),
      ...(files?.length ? { files } : {}),
    });
  }

  addReaction(channelId: string, messageId: string, emoji: string) {
    return this.call(
      "PUT",
      `/channels/${channelId}/messages/${messageId}/reactions/${encodeURIComponent(emoji)}/@me`,
    );
  }

  removeReaction(channelId: string, messageId: string, emoji: string) {
    return this.call(
      "DELETE",
      `/channels/${channelId}/messages/${messageId}/reactions/${encodeURIComponent(emoji)}/@me`,
    );
  }

  typing(channelId: string) {
    return this.call("POST", `/channels/${channelId}/typing`);
  }

  interactionCallback(interactionId: string, token: string, callback: InteractionCallback) {
    return this.call("POST", `/interactions/${interactionId}/${token}/callback`, {
      body: callback,
      auth: false,
    });
  }

  /** A follow-up to an already-acknowledged interaction (e.g. an ephemeral "expired" notice). */
  followup(token: string, body: MessageBody) {
    return this.call<{ id: string }>("POST", `/webhooks/${this.applicationId}/${token}`, {
      body: messagePayload(body),
      auth: false,
    });
  }

  /**
   * Edit the interaction's original message. For a component press acknowledged with a deferred
   * update (type 6) that is the message the component sits on, which is the only way to edit an
   * EPHEMERAL one: channel routes cannot see it. The press's token authorizes it, not the bot token.
   */
  editOriginal(token: string, body: MessageBody) {
    return this.call<{ id: string }>("PATCH", `/webhooks/${this.applicationId}/${token}/messages/@original`, {
      body: messagePayload(body),
      auth: false,
    });
  }

  async getChannel(channelId: string): Promise<DiscordApiResult<DiscordChannel>> {
    const res = await this.call<unknown>("GET", `/channels/${channelId}`);
    if (!res.ok) return res;
    const parsed = channelSchema.safeParse(res.data);
    return parsed.success
      ? { ok: true, data: parsed.data }
      : { ok: false, kind: "permanent", status: 200, message: "malformed channel object" };
  }

  async startThread(
    channelId: string,
    messageId: string,
    name: string,
  ): Promise<DiscordApiResult<DiscordChannel>> {
    const res = await this.call<unknown>("POST", `/channels/${channelId}/messages/${messageId}/threads`, {
      body: { name, auto_archive_duration: 1440 },
    });
    if (!res.ok) return res;
    const parsed = channelSchema.safeParse(res.data);
    return parsed.success
      ? { ok: true, data: parsed.data }
      : { ok: false, kind: "permanent", status: 200, message: "malformed thread object" };
  }

  /** PUT the whole set every time: idempotent, so safe on every start without diffing. */
  registerCommands(rows: readonly unknown[]) {
    return this.call<unknown[]>("PUT", `/applications/${this.applicationId}/commands`, { body: rows });
  }
}

/**
 * 4xx other than 429 is permanent and never retried; 5xx, timeouts and connection failures already
 * exhausted @discordjs/rest's retries and are transient. A non-JSON body degrades to an error result
 * inside the library and so lands here too, never in rendering.
 */
function classify(error: unknown): Extract<DiscordApiResult<never>, { ok: false }> {
  if (error instanceof DiscordAPIError)
    return {
      ok: false,
      kind: error.status === 429 ? "transient" : "permanent",
      status: error.status,
      message: `discord code ${String(error.code)}`,
    };
  if (error instanceof HTTPError)
    return { ok: false, kind: "transient", status: error.status, message: `http ${error.status}` };
  const name = error instanceof Error ? error.name : "";
  return { ok: false, kind: "transient", status: 0, message: name || "request failed" };
}
