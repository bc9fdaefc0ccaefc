/**
 * The response_url: a one-shot HTTPS endpoint a callback carries, accepting ONE answer to that
 * message. It is the last resort (a push and a sealed bubble come first), it is posted to only on an
 * admitted origin, without redirects and within a time bound, and it reports whether WeCom ACCEPTED
 * the answer (the status and the errcode), so a failed post is never mistaken for a delivered one.
 * What WeCom says back is never logged: it can echo the answer.
 */
import type { Timers } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { OriginPolicy } from "./origins.js";
import { withinWireCap } from "./wire.js";

export interface ResponseUrlOptions {
  origins: OriginPolicy;
  timers: Timers;
  logger: Logger;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** Bounded memory of used URLs: each accepts one answer, a second post is not even tried. */
const MAX_REMEMBERED = 10_000;

export class ResponseUrl {
  private readonly used = new Set<string>();

  constructor(private readonly o: ResponseUrlOptions) {}

  /** Post `content` once; true only when WeCom accepted it. */
  async post(raw: string, content: string): Promise<boolean> {
    if (this.used.has(raw)) return false;
    const url = this.o.origins.admit(raw);
    if (!url) {
      this.o.logger.warn("wecom: a response_url on a host nobody admitted was not used");
      return false;
    }
    this.used.add(raw);
    if (this.used.size > MAX_REMEMBERED) {
      const oldest = this.used.values().next().value;
      if (oldest !== undefined) this.used.delete(oldest);
    }
    const abort = new AbortController();
    const timer = this.o.timers.setTimeout(
      () => abort.abort(new Error("timed out")),
      this.o.timeoutMs ?? 15_000,
    );
    try {
      const res = await (this.o.fetch ?? fetch)(url, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          msgtype: "markdown",
          markdown: { content: withinWireCap(content, this.o.logger) },
        }),
        signal: abort.signal,
      });
      const text = await res.text();
      let errcode: unknown;
      try {
        errcode = (JSON.parse(text) as { errcode?: unknown }).errcode;
      } catch {
        errcode = undefined;
      }
      const ok = res.status === 200 && errcode === 0;
      if (!ok)
        this.o.logger.warn("wecom: response_url refused the answer", {
          status: res.status,
          errcode: typeof errcode === "number" ? errcode : null,
        });
      return ok;
    } catch (error) {
      this.o.logger.warn("wecom: response_url post failed", {
        error: error instanceof Error ? error.name : "error",
      });
      return false;
    } finally {
      this.o.timers.clearTimeout(timer);
    }
  }
}
