/**
 * The Connector's network edge: the HTTP client handed to the SDK's ConnectorClient (its documented
 * `httpClient` option), so every Connector call the SDK makes (sends, replies, edits, typing,
 * member lookups) passes here, signed with the bot's token by the SDK's own credential policy.
 *
 * Written here rather than left to the SDK's default client because the spec asks for more than it
 * does: (1) the SDK trusts every serviceUrl (AppCredentials.isTrustedServiceUrl is always true), so
 * the host allow-list is enforced at the one place a token leaves the process, before any byte is
 * sent; (2) Teams' documented transient set is 412, 429, 502 and 504, retried honouring
 * Retry-After, else exponentially, on the injected clock (the SDK's own policy skips 412 and sleeps
 * on real timers); (3) at most ~7 calls a second per conversation, Teams' per-thread budget, paced
 * here so a burst of edits queues instead of earning 429s; (4) no redirect is followed (the token
 * would travel with it). A failure is thrown as TeamsSendError with the status; thrown, not
 * returned, the SDK's retry policy passes it through untouched, so retries happen once, here.
 */
import type { ConnectorClientOptions } from "botframework-connector";
import type { Clock } from "../messaging/base/clock.js";
import { sleep } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import { TeamsSendError } from "./errors.js";

type HttpClient = NonNullable<ConnectorClientOptions["httpClient"]>;
type WebResource = Parameters<HttpClient["sendRequest"]>[0];
type CompatResponse = Awaited<ReturnType<HttpClient["sendRequest"]>>;
type HeadersLike = WebResource["headers"];

/** Teams' documented transient answers: retried; everything else fails at once. */
export const RETRIED_STATUSES: ReadonlySet<number> = new Set([412, 429, 502, 504]);
/** 1000 ms / 7: Teams allows about seven messages a second in one conversation. */
export const DEFAULT_MIN_GAP_MS = 150;
/** Connector answers are small (an id, a member); anything larger is not an answer. */
const MAX_RESPONSE_BYTES = 1024 * 1024;

export interface ConnectorHttpOptions {
  /** Whether a URL is on an allowed Connector host: the only places the bot's token may go. */
  admits(url: URL): boolean;
  clock: Clock;
  logger: Logger;
  /** Minimum gap between two calls in one conversation. */
  minGapMs?: number;
  maxRetries?: number;
  /** The first exponential backoff step (doubled per retry, capped by maxBackoffMs). */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** A Retry-After longer than this is not waited out: the call fails and the caller reports it. */
  maxRetryAfterMs?: number;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** The SDK's header bag, over a plain record (lowercase names). */
class PlainHeaders implements HeadersLike {
  private readonly map = new Map<string, { name: string; value: string }>();
  constructor(entries: Iterable<[string, string]> = []) {
    for (const [name, value] of entries) this.set(name, value);
  }
  set(name: string, value: string | number): void {
    this.map.set(name.toLowerCase(), { name, value: String(value) });
  }
  get(name: string): string | undefined {
    return this.map.get(name.toLowerCase())?.value;
  }
  contains(name: string): boolean {
    return this.map.has(name.toLowerCase());
  }
  remove(name: string): boolean {
    return this.map.delete(name.toLowerCase());
  }
  rawHeaders(): Record<string, string> {
    return this.toJson();
  }
  headersArray(): { name: string; value: string }[] {
    return [...this.map.values()];
  }
  headerNames(): string[] {
    return [...this.map.values()].map((h) => h.name);
  }
  headerValues(): string[] {
    return [...this.map.values()].map((h) => h.value);
  }
  clone(): PlainHeaders {
    return new PlainHeaders(this.headersArray().map((h) => [h.name, h.value]));
  }
  toJson(options: { preserveCase?: boolean } = {}): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [key, h] of this.map) out[options.preserveCase ? h.name : key] = h.value;
    return out;
  }
}

/**
 * Calls to one conversation in order, each at least `minGapMs` after the previous one started; a
 * 429's Retry-After holds the whole conversation, so the calls queued behind it wait too.
 */
export class ConversationPacer {
  private readonly nextAt = new Map<string, number>();
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(
    private readonly clock: Clock,
    private readonly minGapMs: number,
  ) {}

  run<T>(key: string, call: () => Promise<T>): Promise<T> {
    const mine = (this.tails.get(key) ?? Promise.resolve()).then(call);
    const tail = mine.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) {
        this.tails.delete(key);
        if ((this.nextAt.get(key) ?? 0) <= this.clock.now()) this.nextAt.delete(key);
      }
    });
    return mine;
  }

  /** Wait until the conversation may be called again, then claim the slot. */
  async turn(key: string): Promise<void> {
    for (;;) {
      const wait = (this.nextAt.get(key) ?? 0) - this.clock.now();
      if (wait <= 0) break;
      await sleep(this.clock, wait);
    }
    this.nextAt.set(key, this.clock.now() + this.minGapMs);
  }

  block(key: string, untilMs: number): void {
    this.nextAt.set(key, Math.max(this.nextAt.get(key) ?? 0, untilMs));
  }
}

/** The route as a log line can carry it: ids replaced (they name people and conversations). */
function routeOf(method: string, url: URL): string {
  const path = url.pathname
    .replace(/\/v3\/conversations\/[^/]+/, "/v3/conversations/:id")
    .replace(/\/(activities|members|attachments)\/[^/]+/, "/$1/:id");
  return `${method} ${path.slice(path.indexOf("/v3/"))}`;
}

/** Retry-After in seconds or as an HTTP date, in ms from now; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header.trim());
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(header);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

export class ConnectorHttp implements HttpClient {
  readonly pacer: ConversationPacer;
  private readonly o: Required<Omit<ConnectorHttpOptions, "fetch">> & { fetch: typeof fetch };

  constructor(options: ConnectorHttpOptions) {
    this.o = {
      minGapMs: DEFAULT_MIN_GAP_MS,
      maxRetries: 3,
      backoffMs: 1000,
      maxBackoffMs: 30_000,
      maxRetryAfterMs: 60_000,
      timeoutMs: 30_000,
      fetch: options.fetch ?? fetch,
      ...options,
    };
    this.pacer = new ConversationPacer(this.o.clock, this.o.minGapMs);
  }

  async sendRequest(request: WebResource): Promise<CompatResponse> {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      throw new TeamsSendError(0, "a Connector call named no valid URL");
    }
    const route = routeOf(request.method, url);
    // Before any byte is sent: the request already carries the bot's token.
    if (url.protocol !== "https:" || url.username || url.password || !this.o.admits(url)) {
      this.o.logger.warn("teams: Connector call refused: not an allowed Connector host", { route });
      throw new TeamsSendError(0, `${route} refused: not an allowed Connector host`);
    }
    const conversation = /\/v3\/conversations\/([^/]+)/.exec(url.pathname)?.[1] ?? "";
    return this.pacer.run(conversation, () => this.attempts(request, url, route, conversation));
  }

  private async attempts(
    request: WebResource,
    url: URL,
    route: string,
    conversation: string,
  ): Promise<CompatResponse> {
    for (let retry = 0; ; retry += 1) {
      await this.pacer.turn(conversation);
      const res = await this.once(request, url, route);
      if (res.status >= 200 && res.status < 300) return this.answer(request, res, route);
      await res.body?.cancel().catch(() => undefined);
      if (res.status >= 300 && res.status < 400)
        throw new TeamsSendError(res.status, `${route} answered a redirect, which is not followed`);
      const after = retryAfterMs(res.headers.get("retry-after"), this.o.clock.now());
      const delay = after ?? Math.min(this.o.maxBackoffMs, this.o.backoffMs * 2 ** retry);
      if (!RETRIED_STATUSES.has(res.status) || retry >= this.o.maxRetries || delay > this.o.maxRetryAfterMs) {
        this.o.logger.warn("teams: Connector call failed", { route, status: res.status, retries: retry });
        throw new TeamsSendError(res.status, `${route} answered HTTP ${res.status}`);
      }
      this.o.logger.info("teams: Connector asked to retry", { route, status: res.status, delayMs: delay });
      this.pacer.block(conversation, this.o.clock.now() + delay);
    }
  }

  private async once(request: WebResource, url: URL, route: string): Promise<Response> {
    const abort = new AbortController();
    const timer = this.o.clock.setTimeout(() => abort.abort(), this.o.timeoutMs);
    try {
      const body = request.body;
      if (body !== undefined && body !== null && typeof body !== "string")
        throw new TeamsSendError(0, `${route}: an unexpected request body`);
      return await this.o.fetch(url, {
        method: request.method,
        headers: request.headers.rawHeaders(),
        ...(typeof body === "string" ? { body } : {}),
        redirect: "manual",
        signal: abort.signal,
      });
    } catch (error) {
      if (error instanceof TeamsSendError) throw error;
      const why = abort.signal.aborted ? `timed out after ${this.o.timeoutMs} ms` : "could not be reached";
      this.o.logger.warn("teams: Connector unreachable", { route, why });
      throw new TeamsSendError(0, `${route} ${why}`, { cause: error });
    } finally {
      this.o.clock.clearTimeout(timer);
    }
  }

  private async answer(request: WebResource, res: Response, route: string): Promise<CompatResponse> {
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (bytes.length > MAX_RESPONSE_BYTES) throw new TeamsSendError(res.status, `${route}: answer too large`);
    return {
      request,
      status: res.status,
      headers: new PlainHeaders(res.headers.entries()),
      bodyAsText: new TextDecoder().decode(bytes),
    } as CompatResponse;
  }
}
