/**
 * Inbound WhatsApp files: the byte source the shared ingest reads for one of them. The file is
 * fetched encrypted from WhatsApp's media server and decrypted here with the message's media key
 * (keys derived by baileys' `getMediaKeys`), its MAC checked before the last bytes are released.
 *
 * The length is checked twice, against two different values, because neither alone is enough:
 * - before any request, the sender's DECLARED length: absent, or over the cap for its kind, is
 *   refused (a declaration is the only bound that can act before the bytes arrive, and a media
 *   message without one is not a shape WhatsApp sends);
 * - while downloading, the bytes that really come: the download stops at what the declared length
 *   encrypts to, so an UNDERSTATED file is cut off and refused, never read on to its real size.
 *
 * Where from: only `directPath` is used (a sender's message also names a full `url`, which could
 * point anywhere), joined to the media origin derived from the configured socket URL (WhatsApp's
 * `mmg.whatsapp.net` by default; the same host as a custom socket URL), HTTPS (plain HTTP only on
 * loopback), no redirects, bounded in time (messaging/files/bounded-download.ts). baileys' own
 * download follows redirects and has no size bound, which is why it is not used.
 */
import { createDecipheriv, createHmac, timingSafeEqual } from "node:crypto";
import { getMediaKeys } from "@whiskeysockets/baileys";
import type { Timers } from "../messaging/base/clock.js";
import type { InboundAttachment } from "../messaging/channel/transport.js";
import { boundedDownload } from "../messaging/files/bounded-download.js";
import type { Attachment, IngestLimits } from "../messaging/files/ingest.js";
import { DEFAULT_INGEST_LIMITS } from "../messaging/files/ingest.js";
import type { MediaDescriptor, MediaKind } from "./media.js";
import { mediaDescriptorOf } from "./media.js";

/** WhatsApp Web's media host (baileys' DEF_MEDIA_HOST). */
export const WHATSAPP_MEDIA_ORIGIN = "https://mmg.whatsapp.net";
const WHATSAPP_WS_HOST = "web.whatsapp.com";

/** This channel's per-kind caps (parley's policy, not WhatsApp's figures): the shared defaults. */
export const WHATSAPP_INGEST_LIMITS: Readonly<Partial<IngestLimits>> = Object.freeze({
  maxImageBytes: DEFAULT_INGEST_LIMITS.maxImageBytes,
  maxAudioBytes: DEFAULT_INGEST_LIMITS.maxAudioBytes,
  maxVideoBytes: DEFAULT_INGEST_LIMITS.maxVideoBytes,
  maxDocumentBytes: DEFAULT_INGEST_LIMITS.maxDocumentBytes,
});

/** The cap a declared kind must fit before anything is fetched. */
export function declaredCapFor(
  kind: MediaKind,
  limits: Partial<IngestLimits> = WHATSAPP_INGEST_LIMITS,
): number {
  const l = { ...DEFAULT_INGEST_LIMITS, ...limits };
  switch (kind) {
    case "image":
    case "sticker":
      return l.maxImageBytes;
    case "audio":
      return l.maxAudioBytes;
    case "video":
      return l.maxVideoBytes;
    case "document":
      return l.maxDocumentBytes;
  }
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * The origin media is fetched from, derived from the socket URL: WhatsApp's media host for
 * WhatsApp's socket, else the socket's own host (`wss:` → `https:`; `ws:` → `http:` on loopback only).
 */
export function mediaOriginFor(webSocketUrl: string): string {
  const ws = new URL(webSocketUrl);
  if (ws.hostname === WHATSAPP_WS_HOST) return WHATSAPP_MEDIA_ORIGIN;
  if (ws.protocol === "wss:") return `https://${ws.host}`;
  if (ws.protocol === "ws:" && LOOPBACK.has(ws.hostname)) return `http://${ws.host}`;
  throw new Error(`no media origin for ${ws.protocol}//${ws.host}: media is fetched over HTTPS only`);
}

/** The download URL for a descriptor: its path on the admitted origin, or a refusal. */
export function mediaUrl(origin: string, directPath: string): URL {
  // The path is the sender's: it may carry a query (WhatsApp's signed parameters), nothing else.
  if (!directPath.startsWith("/") || directPath.startsWith("//") || /[\s\\#]|\.\./.test(directPath))
    throw new Error("the file's path is not a WhatsApp media path");
  const url = new URL(directPath, origin);
  if (url.origin !== new URL(origin).origin) throw new Error("the file's path leaves the media server");
  return url;
}

/** Bytes a plaintext of `n` bytes encrypts to: AES-CBC with PKCS#7 padding, then a 10-byte MAC. */
export function encryptedLength(n: number): number {
  return (Math.floor(n / 16) + 1) * 16 + MAC_BYTES;
}

const MAC_BYTES = 10;

export interface WhatsAppFileOptions {
  /** From mediaOriginFor(settings.webSocketUrl). */
  origin: string;
  timers?: Timers;
  timeoutMs?: number;
  /** The proxy-aware fetch when whatsapp.proxyUrl is set. */
  fetch?: typeof fetch;
  limits?: Partial<IngestLimits>;
}

/** The byte source for one file this channel normalized. */
export function whatsappAttachment(attachment: InboundAttachment, o: WhatsAppFileOptions): Attachment {
  return {
    name: attachment.name,
    ...(attachment.mimeType ? { mimeType: attachment.mimeType } : {}),
    ...(attachment.size !== undefined ? { size: attachment.size } : {}),
    read: (signal) => decryptedBytes(mediaDescriptorOf(attachment), o, signal),
  };
}

async function* decryptedBytes(
  d: MediaDescriptor,
  o: WhatsAppFileOptions,
  signal: AbortSignal,
): AsyncGenerator<Uint8Array> {
  // Before any request: no declaration, or one over the cap, is refused outright.
  if (d.declared === null) throw new Error("WhatsApp declared no length for it, so it was not downloaded");
  const cap = declaredCapFor(d.kind, o.limits);
  if (d.declared > cap)
    throw new Error(
      `it is declared as ${d.declared} bytes, over the ${cap}-byte limit, so it was not downloaded`,
    );
  const url = mediaUrl(o.origin, d.directPath);
  const { iv, cipherKey, macKey } = await getMediaKeys(Buffer.from(d.mediaKey, "base64"), d.kind);
  if (!macKey) throw new Error("no MAC key could be derived for it");
  const decipher = createDecipheriv("aes-256-cbc", cipherKey, iv);
  const mac = createHmac("sha256", macKey).update(iv);
  // The last 10 bytes are the MAC, not ciphertext: held back until the stream ends.
  let tail = Buffer.alloc(0);
  let plain = 0;
  const bound = encryptedLength(d.declared);
  try {
    for await (const chunk of boundedDownload(() => url, signal, {
      maxBytes: bound,
      serverName: "WhatsApp's media server",
      ...(o.timers ? { timers: o.timers } : {}),
      ...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}),
      ...(o.fetch ? { fetch: o.fetch } : {}),
    })) {
      const joined = Buffer.concat([tail, chunk]);
      const body = joined.subarray(0, Math.max(0, joined.length - MAC_BYTES));
      tail = joined.subarray(body.length);
      mac.update(body);
      const out = decipher.update(body);
      plain += out.length;
      if (out.length > 0) yield out;
    }
  } catch (error) {
    if (error instanceof Error && error.message === "the file is larger than any allowed size")
      throw new Error("it is longer than WhatsApp declared, so it was refused");
    throw error;
  }
  const expected = mac.digest().subarray(0, MAC_BYTES);
  if (tail.length !== MAC_BYTES || !timingSafeEqual(expected, tail))
    throw new Error("it failed WhatsApp's integrity check (damaged, or not the file that was sent)");
  const last = decipher.final();
  plain += last.length;
  if (plain > d.declared) throw new Error("it is longer than WhatsApp declared, so it was refused");
  if (last.length > 0) yield last;
}
