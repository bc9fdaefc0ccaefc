/**
 * The one download discipline for files users send: a platform hands over a reference, the channel
 * turns it into a URL it has validated, and the bytes come through here. No redirect is followed
 * unless the channel admits each hop itself (it could leave the admitted origin), the whole
 * download shares one time bound, the bytes READ are counted whatever the headers claim, and
 * stopping early (a cap, a refusal, the turn's stop) releases the connection instead of draining
 * it. Which hosts are admitted, and which headers are sent, is each channel's decision. Layer:
 * messaging (fetch and timers injected).
 */
import type { Timers } from "../base/clock.js";
import { realClock } from "../base/clock.js";

/** One hop of a download, as the channel admitted it. */
export interface DownloadTarget {
  url: URL;
  /** Headers for this hop alone (a credential decided for this host is never carried to the next). */
  headers?: Readonly<Record<string, string>>;
  /** Handed to fetch as `dispatcher` (undici): e.g. a connection pinned to the vetted addresses. */
  dispatcher?: unknown;
}

export interface BoundedDownloadOptions {
  timers?: Timers;
  /** Connect to last byte, including `resolve` (default 60 s). */
  timeoutMs?: number;
  /** Backstop on bytes read; the shared ingest caps are the real bound, set below it. */
  maxBytes: number;
  /** Names the server in refusal text ("the file server", "Telegram's file server"). */
  serverName?: string;
  /**
   * Headers sent with the first GET, for a file server that needs a credential (Slack's bot token):
   * the credential reaches the admitted URL and nothing else (a redirect's hop sends only what its
   * `admit` returns). Default: none, so whatever authorizes the download must already be in the URL.
   */
  headers?: Readonly<Record<string, string>>;
  /** Injected for tests; the global fetch otherwise. */
  fetch?: typeof fetch;
  /**
   * Follow at most `max` redirects, each admitted afresh by `admit` (it throws to refuse the hop);
   * absent, a redirect is refused.
   */
  redirects?: {
    max: number;
    admit(location: URL, hop: number, signal: AbortSignal): DownloadTarget | Promise<DownloadTarget>;
  };
}

export const DEFAULT_DOWNLOAD_TIMEOUT_MS = 60_000;

/**
 * Stream the bytes at the URL `resolve` yields. `resolve` runs inside the time bound and receives
 * its abort signal, so a lookup (Telegram's getFile) shares the download's deadline; it should
 * throw, before any connection, for a URL the channel does not admit.
 */
export async function* boundedDownload(
  resolve: (signal: AbortSignal) => URL | DownloadTarget | Promise<URL | DownloadTarget>,
  signal: AbortSignal,
  opts: BoundedDownloadOptions,
): AsyncGenerator<Uint8Array> {
  const timers = opts.timers ?? realClock;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_DOWNLOAD_TIMEOUT_MS;
  const server = opts.serverName ?? "the file server";
  const abort = new AbortController();
  const onAbort = () => abort.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  if (signal.aborted) onAbort();
  const timer = timers.setTimeout(
    () => abort.abort(new Error(`the download took longer than ${Math.round(timeoutMs / 1000)} s`)),
    timeoutMs,
  );
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  try {
    const first = await withAbortReason(Promise.resolve(resolve(abort.signal)), abort.signal);
    let target: DownloadTarget = first instanceof URL ? { url: first } : first;
    let res: Response;
    for (let hop = 0; ; hop += 1) {
      res = await withAbortReason(
        (opts.fetch ?? fetch)(target.url, {
          method: "GET",
          redirect: "manual",
          // No cookies; a credential only where the channel decided this very host gets one: the
          // options' headers go to the admitted first URL alone, a redirect's hop gets its own.
          headers: { accept: "*/*", ...(hop === 0 ? opts.headers : undefined), ...target.headers },
          signal: abort.signal,
          ...(target.dispatcher !== undefined ? { dispatcher: target.dispatcher } : {}),
        } as RequestInit),
        abort.signal,
      );
      if (res.status < 300 || res.status >= 400) break;
      await discard(res);
      const location = res.headers.get("location");
      if (!opts.redirects || !location)
        throw new Error(`${server} answered with a redirect, which is not followed`);
      if (hop >= opts.redirects.max)
        throw new Error(`${server} redirected more than ${opts.redirects.max} times`);
      let next: URL;
      try {
        next = new URL(location, target.url);
      } catch {
        throw new Error(`${server} redirected to an invalid address`);
      }
      target = await withAbortReason(
        Promise.resolve(opts.redirects.admit(next, hop + 1, abort.signal)),
        abort.signal,
      );
    }
    if (!res.ok) {
      await discard(res);
      throw new Error(`${server} answered HTTP ${res.status}`);
    }
    if (!res.body) return;
    reader = res.body.getReader();
    let read = 0;
    for (;;) {
      const { done, value } = await withAbortReason(reader.read(), abort.signal);
      if (done) return;
      read += value.length;
      if (read > opts.maxBytes) throw new Error("the file is larger than any allowed size");
      yield value;
    }
  } finally {
    timers.clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
    if (!abort.signal.aborted) abort.abort(new Error("download closed"));
    // A body that fails to cancel has nothing left to tell us: the download already ended.
    await reader?.cancel().catch(() => undefined);
  }
}

/** An answer we refuse: its body is dropped; a failure to drop it changes nothing we report. */
async function discard(res: Response): Promise<void> {
  await res.body?.cancel().catch(() => undefined);
}

/** fetch rejects with a generic AbortError; report the reason the download was aborted for. */
export async function withAbortReason<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (signal.aborted && signal.reason instanceof Error) throw signal.reason;
    throw error;
  }
}
