/**
 * Slack's Web API edge: @slack/web-api's WebClient, pointed at `slack.apiUrl`, with its own retries
 * (transport failures and 5xx) and its own rate-limit handling (a 429 pauses the client's queue for
 * the Retry-After it names, then the call is sent again). Results are classified rather than thrown,
 * so a renderer can report a part that did not land; log lines name the method, never a token.
 *
 * Added here, beyond the SDK: the external upload flow. WebClient.filesUploadV2 posts the bytes to
 * whatever `upload_url` the API returned with the bot token in the Authorization header; parley
 * uploads to that URL only after admitting its host (derived from the configured origin), and
 * without the token (an upload URL is authorized by itself).
 */
import type { Logger as SdkLogger } from "@slack/web-api";
import { LogLevel, WebAPIPlatformError, WebClient } from "@slack/web-api";
import type { Logger } from "../messaging/base/logger.js";
import type { FileOrigins } from "./attachments.js";
import { admitFileUrl, fileOriginsFor } from "./attachments.js";

export type SlackResult<T> = { ok: true; data: T } | { ok: false; error: string };

export interface SlackIdentity {
  botUserId: string;
  botId: string;
  teamId: string;
  team: string;
  botName: string;
  /** The bot token's granted scopes (auth.test's x-oauth-scopes header). */
  scopes: string[];
}

export interface RetryPolicy {
  retries: number;
  factor?: number;
  minTimeout?: number;
  maxTimeout?: number;
}

export interface SlackClientOptions {
  token: string;
  apiUrl: string;
  logger: Logger;
  retry?: RetryPolicy;
  timeoutMs?: number;
  /** Injected for tests; the global fetch otherwise (uploads go through it too). */
  fetch?: typeof fetch;
}

/** Transport failures and 5xx are retried a few times; a 429 is waited out by the SDK itself. */
export const DEFAULT_RETRY: RetryPolicy = { retries: 4, factor: 2, minTimeout: 500, maxTimeout: 5_000 };

/** The SDK's logger, writing into parley's (its debug chatter stays at debug). */
export function sdkLogger(logger: Logger, name = "slack"): SdkLogger {
  let level = LogLevel.WARN;
  const text = (msg: unknown[]) => msg.map((m) => (m instanceof Error ? m.message : String(m))).join(" ");
  return {
    debug: (...msg) => logger.debug(`${name}: ${text(msg)}`),
    info: (...msg) => logger.debug(`${name}: ${text(msg)}`),
    warn: (...msg) => logger.warn(`${name}: ${text(msg)}`),
    error: (...msg) => logger.warn(`${name}: ${text(msg)}`),
    setLevel: (l) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => {},
  };
}

/** The WebClient options every Slack client parley builds shares: the origin above all. */
export function webClientOptions(
  o: Pick<SlackClientOptions, "apiUrl" | "logger" | "retry" | "timeoutMs" | "fetch">,
) {
  return {
    slackApiUrl: `${o.apiUrl.replace(/\/+$/, "")}/`,
    logger: sdkLogger(o.logger),
    retryConfig: o.retry ?? DEFAULT_RETRY,
    timeout: o.timeoutMs ?? 15_000,
    ...(o.fetch ? { fetch: o.fetch } : {}),
  };
}

type Args = Record<string, unknown>;

export class SlackClient {
  readonly web: WebClient;
  readonly origins: FileOrigins;
  private readonly fetchFn: typeof fetch;
  identity: SlackIdentity = { botUserId: "", botId: "", teamId: "", team: "", botName: "", scopes: [] };

  constructor(private readonly o: SlackClientOptions) {
    this.web = new WebClient(o.token, webClientOptions(o));
    this.origins = fileOriginsFor(o.apiUrl);
    this.fetchFn = o.fetch ?? fetch;
  }

  /** auth.test: who the bot is, in which workspace, with which scopes. Throws on a rejected token. */
  async verify(): Promise<SlackIdentity> {
    const res = await this.web.auth.test();
    this.identity = {
      botUserId: res.user_id ?? "",
      botId: res.bot_id ?? "",
      teamId: res.team_id ?? "",
      team: res.team ?? "",
      botName: res.user ?? "",
      scopes: res.response_metadata?.scopes ?? [],
    };
    return this.identity;
  }

  /** The one call path: the SDK's retries and 429 handling, then a classified result. */
  async call<T = Args>(method: string, args: Args): Promise<SlackResult<T>> {
    try {
      return { ok: true, data: (await this.web.apiCall(method, args)) as T };
    } catch (error) {
      const code = error instanceof WebAPIPlatformError ? String(error.data.error) : errorName(error);
      this.o.logger.warn("slack call failed", { method, error: code });
      return { ok: false, error: code };
    }
  }

  postMessage(args: Args) {
    return this.call<{ ts: string }>("chat.postMessage", args);
  }

  update(args: Args) {
    return this.call<{ ts: string }>("chat.update", args);
  }

  /** chat.delete: the bot removes one of its own messages. */
  deleteMessage(channel: string, ts: string) {
    return this.call("chat.delete", { channel, ts });
  }

  postEphemeral(args: Args) {
    return this.call("chat.postEphemeral", args);
  }

  startStream(args: Args) {
    return this.call<{ ts: string }>("chat.startStream", args);
  }

  appendStream(args: Args) {
    return this.call("chat.appendStream", args);
  }

  stopStream(args: Args) {
    return this.call("chat.stopStream", args);
  }

  addReaction(channel: string, timestamp: string, name: string) {
    return this.call("reactions.add", { channel, timestamp, name });
  }

  removeReaction(channel: string, timestamp: string, name: string) {
    return this.call("reactions.remove", { channel, timestamp, name });
  }

  setStatus(channel: string, threadTs: string, status: string) {
    return this.call("assistant.threads.setStatus", { channel_id: channel, thread_ts: threadTs, status });
  }

  setTitle(channel: string, threadTs: string, title: string) {
    return this.call("assistant.threads.setTitle", { channel_id: channel, thread_ts: threadTs, title });
  }

  /**
   * The external upload flow from validated bytes: ask for an upload URL, admit its host, send the
   * bytes there without the token and without following a redirect, then complete the upload into
   * the thread. The file id, or the reason it did not land.
   */
  async uploadFile(f: {
    channel: string;
    threadTs?: string;
    filename: string;
    title: string;
    bytes: Uint8Array;
  }): Promise<SlackResult<{ id: string }>> {
    const asked = await this.call<{ upload_url?: string; file_id?: string }>("files.getUploadURLExternal", {
      filename: f.filename,
      length: f.bytes.byteLength,
    });
    if (!asked.ok) return asked;
    const { upload_url: uploadUrl, file_id: id } = asked.data;
    if (!uploadUrl || !id) return { ok: false, error: "no upload URL" };
    let target: URL;
    try {
      target = admitFileUrl(uploadUrl, this.origins);
    } catch (error) {
      this.o.logger.warn("slack upload URL refused", { error: errorName(error) });
      return { ok: false, error: "upload URL refused" };
    }
    try {
      const res = await this.fetchFn(target, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/octet-stream" },
        body: f.bytes,
        signal: AbortSignal.timeout(60_000),
      });
      await res.body?.cancel().catch(() => undefined);
      if (res.status !== 200) return { ok: false, error: `upload answered HTTP ${res.status}` };
    } catch (error) {
      return { ok: false, error: errorName(error) };
    }
    const done = await this.call("files.completeUploadExternal", {
      files: [{ id, title: f.title }],
      channel_id: f.channel,
      ...(f.threadTs ? { thread_ts: f.threadTs } : {}),
    });
    return done.ok ? { ok: true, data: { id } } : done;
  }
}

function errorName(error: unknown): string {
  if (error instanceof Error) return (error as { code?: string }).code ?? error.name;
  return "request failed";
}
