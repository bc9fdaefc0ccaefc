/**
 * Inbound iLink media onto the shared ingest: the byte source for one object, read only when the
 * turn that answers the message runs. The URL is built here, never taken from the message: the
 * configured CDN origin's `/download` with the reference percent-encoded, so media comes only from
 * there (no token is sent: the reference authorizes the download). Downloaded without redirects,
 * bounded in time and in bytes READ (the plaintext ceiling plus one block of padding), then
 * decrypted (media.ts). Every refusal is audited with its reason. Classification, per-kind caps and
 * the temp files are the shared ingest's.
 */
import type { Timers } from "../messaging/base/clock.js";
import type { InboundAttachment } from "../messaging/channel/transport.js";
import type { Attachment, IngestLimits } from "../messaging/files/ingest.js";
import { sealedMediaSource } from "../messaging/files/sealed-media.js";
import type { AuditSink } from "../messaging/security/audit.js";
import { decodeMediaKey, decryptMedia, MediaError } from "./media.js";

/** The largest object parley reads from the CDN (Tencent's own plugin bounds downloads at 100 MiB). */
export const WEIXIN_MAX_MEDIA_BYTES = 100 * 1024 * 1024;

export const WEIXIN_INGEST_LIMITS: Readonly<Partial<IngestLimits>> = Object.freeze({
  maxImageBytes: WEIXIN_MAX_MEDIA_BYTES,
  maxAudioBytes: WEIXIN_MAX_MEDIA_BYTES,
  maxVideoBytes: WEIXIN_MAX_MEDIA_BYTES,
  maxDocumentBytes: WEIXIN_MAX_MEDIA_BYTES,
});

export interface MediaSourceOptions {
  /** The configured CDN origin (weixin.cdnUrl), no trailing slash. */
  cdnUrl: string;
  audit: AuditSink;
  timers: Timers;
  /** Plaintext ceiling (default WEIXIN_MAX_MEDIA_BYTES); the ciphertext read may be one block more. */
  maxBytes?: number;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** The download URL for a reference: only ever on the configured CDN origin. */
export function downloadUrl(cdnUrl: string, param: string): URL {
  return new URL(`${cdnUrl}/download?encrypted_query_param=${encodeURIComponent(param)}`);
}

/** The byte source for one object: downloaded, decrypted; read at most once, by the turn. */
export function mediaSource(file: InboundAttachment, o: MediaSourceOptions): Attachment {
  return sealedMediaSource(file, {
    operation: "weixin.media",
    audit: o.audit,
    open(ref) {
      const param = ref.param;
      if (typeof param !== "string" || param === "" || param.length > 16_384)
        throw new MediaError("bad_ref", "the media reference is unusable");
      return { url: downloadUrl(o.cdnUrl, param), key: decodeMediaKey(String(ref.key ?? "")) };
    },
    decrypt: decryptMedia,
    download: {
      // PKCS#7 always adds 1-16 bytes: a file at exactly the ceiling arrives one block larger.
      maxBytes: (o.maxBytes ?? WEIXIN_MAX_MEDIA_BYTES) + 16,
      serverName: "WeChat's media CDN",
      timers: o.timers,
      ...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}),
      ...(o.fetch ? { fetch: o.fetch } : {}),
    },
  });
}
