/**
 * The iLink bot API over plain `fetch` (no SDK exists). One origin per client: the token rides only
 * there, redirects are refused (a 3xx would carry it elsewhere), and every call carries what iLink
 * asks of a bot: `AuthorizationType: ilink_bot_token`, the bearer token, a fresh random
 * `X-WECHAT-UIN` (base64 of a random uint32 in decimal) and `base_info` naming parley. Errors hide
 * in 200 bodies: a nonzero `ret` or `errcode` is a failure (IlinkApiError), `-14` trips the session
 * pause (SessionExpiredError), and while the pause runs nothing leaves (SessionPausedError).
 */
import { randomBytes } from "node:crypto";
import type { Timers } from "../messaging/base/clock.js";
import { realClock } from "../messaging/base/clock.js";
import { IlinkApiError, SessionExpiredError, SessionPausedError } from "./errors.js";
import { parseJsonLossless } from "./json.js";
import type { SessionPause } from "./pause.js";
import type {
  GetConfigResult,
  GetUpdatesResult,
  QrCodeResult,
  QrStatusResult,
  WireMessage,
  WireResult,
} from "./wire.js";
import { SESSION_EXPIRED } from "./wire.js";

/** What `base_info` says about the client: parley, by name. */
export const BASE_INFO = { channel_version: "parley/1", bot_agent: "parley" } as const;
/** Ordinary calls; the long poll has its own bound (the server's suggestion plus a margin). */
const CALL_TIMEOUT_MS = 15_000;
/** Over the server's suggested long-poll time, so the server answers first. */
const POLL_MARGIN_MS = 5_000;
/** Bodies iLink answers are small; a larger one is not iLink's. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface IlinkClientOptions {
  /** The API origin (no trailing slash). */
  origin: string;
  /** Absent only for the QR login calls, which precede having one. */
  token?: string;
  pause?: SessionPause;
  timers?: Timers;
  fetch?: typeof fetch;
  /** Four random bytes for X-WECHAT-UIN; injectable for tests. */
  random?: () => Buffer;
}

/** `X-WECHAT-UIN`: base64 of a random uint32 written in decimal, fresh per call. */
export function randomUin(random: () => Buffer = () => randomBytes(4)): string {
  return Buffer.from(String(random().readUInt32BE(0)), "utf8").toString("base64");
}

/** The failure code a 200 body carries: errcode when nonzero, else ret; 0 is success. */
export function failureCode(body: WireResult): number {
  const errcode = typeof body.errcode === "number" ? body.errcode : 0;
  if (errcode !== 0) return errcode;
  return typeof body.ret === "number" ? body.ret : 0;
}

export class IlinkClient {
  private readonly timers: Timers;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly o: IlinkClientOptions) {
    this.timers = o.timers ?? realClock;
    this.fetchImpl = o.fetch ?? fetch;
  }

  get origin(): string {
    return this.o.origin;
  }

  // ── login ─────────────────────────────────────────────────────────────────────────────────

  getBotQrcode(): Promise<QrCodeResult> {
    return this.call<QrCodeResult>("GET", "ilink/bot/get_bot_qrcode?bot_type=3", undefined, CALL_TIMEOUT_MS);
  }

  /** Held by the server until the status changes or its own timeout; a local timeout reads as `wait`. */
  async getQrcodeStatus(qrcode: string, signal?: AbortSignal): Promise<QrStatusResult> {
    try {
      return await this.call<QrStatusResult>(
        "GET",
        `ilink/bot/get_qrcode_status?qrcode=${encodeURIComponent(qrcode)}`,
        undefined,
        40_000,
        signal,
      );
    } catch (error) {
      if (error instanceof LocalTimeout) return { status: "wait" };
      throw error;
    }
  }

  // ── messages ──────────────────────────────────────────────────────────────────────────────

  /** One long poll; a local timeout is an empty answer with the cursor unchanged. */
  async getUpdates(buf: string, timeoutMs: number, signal?: AbortSignal): Promise<GetUpdatesResult> {
    try {
      return await this.call<GetUpdatesResult>(
        "POST",
        "ilink/bot/getupdates",
        { get_updates_buf: buf },
        timeoutMs + POLL_MARGIN_MS,
        signal,
      );
    } catch (error) {
      if (error instanceof LocalTimeout) return { ret: 0, msgs: [], get_updates_buf: buf };
      throw error;
    }
  }

  async sendMessage(msg: WireMessage): Promise<void> {
    await this.call("POST", "ilink/bot/sendmessage", { msg }, CALL_TIMEOUT_MS);
  }

  async getConfig(userId: string, contextToken: string | undefined): Promise<GetConfigResult> {
    return this.call<GetConfigResult>(
      "POST",
      "ilink/bot/getconfig",
      { ilink_user_id: userId, ...(contextToken ? { context_token: contextToken } : {}) },
      CALL_TIMEOUT_MS,
    );
  }

  async sendTyping(userId: string, ticket: string, status: number): Promise<void> {
    await this.call(
      "POST",
      "ilink/bot/sendtyping",
      { ilink_user_id: userId, typing_ticket: ticket, status },
      CALL_TIMEOUT_MS,
    );
  }

  // ── the one path ──────────────────────────────────────────────────────────────────────────

  private async call<T extends WireResult>(
    method: "GET" | "POST",
    path: string,
    body: Record<string, unknown> | undefined,
    timeoutMs: number,
    outer?: AbortSignal,
  ): Promise<T> {
    const endpoint = path.split("?")[0] ?? path;
    // Stopping: nothing new leaves (a listener added to an aborted signal would never fire).
    if (outer?.aborted) throw outer.reason instanceof Error ? outer.reason : new Error("aborted");
    const left = this.o.pause?.remainingMs() ?? 0;
    if (left > 0) throw new SessionPausedError(endpoint, this.o.pause?.pausedUntil ?? 0);
    const headers: Record<string, string> = {
      AuthorizationType: "ilink_bot_token",
      "X-WECHAT-UIN": randomUin(this.o.random),
    };
    if (this.o.token) headers.Authorization = `Bearer ${this.o.token}`;
    if (method === "POST") headers["Content-Type"] = "application/json";
    const controller = new AbortController();
    let timedOut = false;
    const timer = this.timers.setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onOuter = () => controller.abort(outer?.reason);
    outer?.addEventListener("abort", onOuter, { once: true });
    let text: string;
    let status: number;
    try {
      const response = await this.fetchImpl(`${this.o.origin}/${path}`, {
        method,
        headers,
        // Never followed: a redirect would carry the bearer token to another host.
        redirect: "manual",
        signal: controller.signal,
        ...(method === "POST" ? { body: JSON.stringify({ ...body, base_info: BASE_INFO }) } : {}),
      });
      status = response.status;
      text = await readBounded(response);
    } catch (error) {
      if (timedOut) throw new LocalTimeout(endpoint);
      throw error;
    } finally {
      this.timers.clearTimeout(timer);
      outer?.removeEventListener("abort", onOuter);
    }
    if (status < 200 || status > 299)
      throw new IlinkApiError(endpoint, status, `iLink ${endpoint}: HTTP ${status}`);
    let parsed: unknown;
    try {
      // Lossless: a 64-bit message_id must reach the dedupe key digit for digit (json.ts).
      parsed = text.trim() === "" ? {} : parseJsonLossless(text);
    } catch {
      throw new IlinkApiError(endpoint, status, `iLink ${endpoint}: the answer is not JSON`);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new IlinkApiError(endpoint, status, `iLink ${endpoint}: the answer is not a JSON object`);
    const result = parsed as T;
    const code = failureCode(result);
    if (code === SESSION_EXPIRED) {
      this.o.pause?.trip();
      throw new SessionExpiredError(endpoint);
    }
    if (code !== 0) {
      // errmsg is iLink's own text, clipped: it never echoes the token (it is not in any body).
      const said = typeof result.errmsg === "string" ? `: ${result.errmsg.slice(0, 200)}` : "";
      throw new IlinkApiError(endpoint, code, `iLink ${endpoint} failed (${code})${said}`);
    }
    return result;
  }
}

/** The local bound ran out (distinct from the caller's abort, which propagates). */
class LocalTimeout extends Error {
  constructor(endpoint: string) {
    super(`iLink ${endpoint}: no answer in time`);
    this.name = "LocalTimeout";
  }
}

async function readBounded(response: Response): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > MAX_BODY_BYTES) {
      await reader.cancel();
      throw new Error("iLink answered more than 4 MiB: not an iLink answer");
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}
