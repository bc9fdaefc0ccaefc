/**
 * Inbound Discord files: the host-bound fetcher that turns an InboundAttachment (its `ref` is the
 * URL from the MESSAGE_CREATE envelope) into the shared `Attachment` the ingest reads. The URL comes
 * from the platform's event, not from parley, so it is validated before any byte moves: HTTPS, a
 * Discord CDN host, the default port, no redirects, a bounded time and a byte ceiling on what is
 * READ. The bot token is never sent: CDN URLs are signed by their query, and a token on a wrong
 * host is a leaked token. Caps per kind, classification and temp files belong to
 * messaging/attachments.ts; nothing of that is repeated here.
 */

import type { Timers } from "../messaging/base/clock.js";
import type { InboundAttachment } from "../messaging/channel/transport.js";
import { boundedDownload } from "../messaging/files/bounded-download.js";
import type { Attachment } from "../messaging/files/ingest.js";

/** The hosts Discord serves message attachments from (`url` and `proxy_url`). */
export const DISCORD_CDN_HOSTS: ReadonlySet<string> = new Set(["cdn.discordapp.com", "media.discordapp.net"]);

/** Backstop on bytes read per file, above every shared ingest cap (which is the real bound). */
export const DEFAULT_FETCH_MAX_BYTES = 64 * 1024 * 1024;

export interface AttachmentFetchOptions {
  /**
   * One exact origin admitted besides the CDN: the `discord.apiBase` an operator configured (how
   * tests reach the loopback fake). Only the origin (scheme, host, port) is compared, exactly.
   */
  extraOrigin?: string;
  timeoutMs?: number;
  maxBytes?: number;
  timers?: Timers;
  /** Injected for tests; the global fetch otherwise. */
  fetch?: typeof fetch;
}

/** Why a URL is not fetched; the message ends up in the user's refusal line. */
export class AttachmentUrlRefused extends Error {}

/**
 * The allowed-origin rule. Returns the parsed URL, or throws AttachmentUrlRefused naming the rule
 * that failed (never the URL itself: its query is a signature).
 */
export function admitAttachmentUrl(ref: string, extraOrigin?: string): URL {
  let url: URL;
  try {
    url = new URL(ref);
  } catch {
    throw new AttachmentUrlRefused("the attachment has no valid URL");
  }
  // Userinfo would be sent as credentials to whoever answers; Discord never puts it in a CDN URL.
  if (url.username || url.password) throw new AttachmentUrlRefused("the URL carries credentials");
  // The operator named this server explicitly; its exact origin (scheme included) is trusted as-is.
  if (extraOrigin !== undefined && url.origin === originOf(extraOrigin)) return url;
  // Plain HTTP could be rewritten on the way; Discord's CDN is HTTPS only.
  if (url.protocol !== "https:") throw new AttachmentUrlRefused("only HTTPS downloads are allowed");
  // Exact host match (URL lowercases it; a trailing dot or a look-alike suffix does not match).
  if (!DISCORD_CDN_HOSTS.has(url.hostname))
    throw new AttachmentUrlRefused(`${url.hostname} is not Discord's file server`);
  // A non-default port is not the CDN's front door, whatever the host name says.
  if (url.port !== "") throw new AttachmentUrlRefused("the URL names a non-default port");
  return url;
}

function originOf(base: string): string | undefined {
  try {
    return new URL(base).origin;
  } catch {
    return undefined;
  }
}

/** The shared ingest's byte source for one Discord attachment; nothing is fetched until read. */
export function discordAttachment(att: InboundAttachment, opts: AttachmentFetchOptions = {}): Attachment {
  return {
    name: att.name,
    ...(att.mimeType !== undefined ? { mimeType: att.mimeType } : {}),
    ...(att.size !== undefined ? { size: att.size } : {}),
    read: (signal) => download(att.ref, signal, opts),
  };
}

function download(
  ref: string,
  signal: AbortSignal,
  opts: AttachmentFetchOptions,
): AsyncGenerator<Uint8Array> {
  return boundedDownload(
    // Validated before any connection: a refused URL costs no request at all.
    () => admitAttachmentUrl(ref, opts.extraOrigin),
    signal,
    {
      maxBytes: opts.maxBytes ?? DEFAULT_FETCH_MAX_BYTES,
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
      ...(opts.timers ? { timers: opts.timers } : {}),
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
    },
  );
}
