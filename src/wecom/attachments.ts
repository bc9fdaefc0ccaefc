/**
 * Inbound WeCom files onto the shared ingest: which items of a callback are files (as descriptors:
 * the URL and the object's key, nothing fetched at arrival) and the byte source the ingest reads for
 * one of them, only when the turn that answers the message runs. The source admits the URL only on
 * an origin the operator allowed (origins.ts), downloads without redirects and bounded in time and
 * in bytes READ (the plaintext ceiling plus the padding: the ciphertext of a file at exactly 20 MB
 * is 32 bytes longer), then decrypts (media.ts). Every refusal here is audited with its reason.
 * Caps per kind, classification and the temp files are the shared ingest's.
 */
import type { Timers } from "../messaging/base/clock.js";
import type { InboundAttachment } from "../messaging/channel/transport.js";
import type { Attachment, IngestLimits } from "../messaging/files/ingest.js";
import { sealedMediaSource } from "../messaging/files/sealed-media.js";
import type { AuditSink } from "../messaging/security/audit.js";
import { WECOM_MAX_CIPHERTEXT_BYTES, WECOM_MAX_PLAINTEXT_BYTES } from "./limits.js";
import { decodeMediaKey, decryptMedia, MediaError } from "./media.js";
import type { OriginPolicy } from "./origins.js";
import type { CallbackBody, WireMedia } from "./wire.js";

/**
 * Every kind at WeCom's own file ceiling. Audio too: a voice message never reaches the ingest (its
 * transcript is the text), so the only audio here is a file the user attached, which WeCom carried
 * up to 20 MB.
 */
export const WECOM_INGEST_LIMITS: Readonly<Partial<IngestLimits>> = Object.freeze({
  maxImageBytes: WECOM_MAX_PLAINTEXT_BYTES,
  maxAudioBytes: WECOM_MAX_PLAINTEXT_BYTES,
  maxVideoBytes: WECOM_MAX_PLAINTEXT_BYTES,
  maxDocumentBytes: WECOM_MAX_PLAINTEXT_BYTES,
});

interface MediaRef {
  url: string;
  aeskey: string;
}

function attachmentOf(kind: "image" | "file" | "video", media: WireMedia | undefined): InboundAttachment[] {
  if (typeof media?.url !== "string" || typeof media.aeskey !== "string") return [];
  const ref: MediaRef = { url: media.url, aeskey: media.aeskey };
  // Defensive only: the SDK's FileContent has no filename (it reads Content-Disposition on download).
  const name =
    kind === "file" && typeof media.filename === "string" && media.filename ? media.filename : kind;
  return [{ name, ref: JSON.stringify(ref) }];
}

/**
 * What a callback says and carries. A voice message is its transcript; a mixed message's caption
 * lives in its item list; a message that is only files is still a message.
 */
export function contentOf(body: CallbackBody): { text: string; attachments: InboundAttachment[] } {
  switch (body.msgtype) {
    case "text":
      return { text: body.text?.content ?? "", attachments: [] };
    case "voice":
      return { text: body.voice?.content ?? "", attachments: [] };
    case "image":
      return { text: "", attachments: attachmentOf("image", body.image) };
    case "file":
      return { text: "", attachments: attachmentOf("file", body.file) };
    case "video":
      return { text: "", attachments: attachmentOf("video", body.video) };
    case "mixed": {
      const items = Array.isArray(body.mixed?.msg_item) ? body.mixed.msg_item : [];
      const text = items
        .filter((i) => i.msgtype === "text")
        .map((i) => i.text?.content ?? "")
        .filter((t) => t.trim() !== "")
        .join("\n");
      return {
        text,
        attachments: items.flatMap((i) => (i.msgtype === "image" ? attachmentOf("image", i.image) : [])),
      };
    }
    default:
      return { text: "", attachments: [] };
  }
}

export interface MediaSourceOptions {
  origins: OriginPolicy;
  audit: AuditSink;
  timers: Timers;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** Two files with one name would be one line in the prompt and one temp name: number the repeats. */
export function distinctNames(refs: readonly InboundAttachment[]): InboundAttachment[] {
  const seen = new Map<string, number>();
  return refs.map((r) => {
    const n = (seen.get(r.name) ?? 0) + 1;
    seen.set(r.name, n);
    return n === 1 ? r : { ...r, name: `${r.name} (${n})` };
  });
}

/** The byte source for one file: admitted, downloaded, decrypted; read at most once, by the turn. */
export function mediaSource(file: InboundAttachment, o: MediaSourceOptions): Attachment {
  return sealedMediaSource(file, {
    operation: "wecom.media",
    audit: o.audit,
    open(ref) {
      const url = typeof ref.url === "string" ? o.origins.admit(ref.url) : null;
      // Never fetched: the address is not on an origin WeCom serves media from.
      if (!url)
        throw new MediaError("media_host", "the file's address is not on an admitted WeCom media host");
      return { url, key: decodeMediaKey(String(ref.aeskey ?? "")) };
    },
    decrypt: decryptMedia,
    download: {
      maxBytes: WECOM_MAX_CIPHERTEXT_BYTES,
      serverName: "WeCom's media server",
      timers: o.timers,
      ...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}),
      ...(o.fetch ? { fetch: o.fetch } : {}),
    },
  });
}
