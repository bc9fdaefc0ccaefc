/**
 * An inbound file that arrives sealed: the message carries a reference and the object's own AES key,
 * the object is fetched only when the turn that answers the message reads it, bounded, then
 * decrypted (WeCom and WeChat's iLink both work so). The ciphers differ and stay in each channel's
 * media.ts; this owns the order of the gates (reference, address, key, download, decryption) and
 * the one audited refusal, so a channel cannot skip one.
 */
import type { InboundAttachment } from "../channel/transport.js";
import type { AuditSink } from "../security/audit.js";
import { type BoundedDownloadOptions, boundedDownload } from "./bounded-download.js";
import type { Attachment } from "./ingest.js";

/** A refusal of a sealed object, with the classification its audit row and refusal line carry. */
export class MediaError extends Error {
  constructor(
    readonly reason: "bad_ref" | "media_host" | "bad_key" | "bad_length" | "bad_padding",
    message: string,
  ) {
    super(message);
    this.name = "MediaError";
  }
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const HEX = /^[0-9a-fA-F]+$/;

/**
 * An AES key of `size` bytes sent as base64 of the raw bytes, or as base64 of their hex digits. The
 * two are told apart by the decoded length and a strict hex check, because a wrong guess decrypts
 * to plausible garbage instead of failing. `what` names the object in the error ("the file").
 */
export function decodeSealKey(text: string, size: number, what: string): Buffer {
  const trimmed = text.trim();
  if (!BASE64.test(trimmed)) throw new MediaError("bad_key", `${what}'s key is not base64`);
  const bytes = Buffer.from(trimmed, "base64");
  if (bytes.length === size) return bytes;
  if (bytes.length === size * 2) {
    const hex = bytes.toString("latin1");
    // The length is already 2 × size: only the digits are left to check.
    if (HEX.test(hex)) return Buffer.from(hex, "hex");
  }
  throw new MediaError("bad_key", `${what}'s key is not a ${size}-byte AES key`);
}

export interface SealedMediaOptions {
  /** The audit operation of a refusal ("wecom.media"). */
  operation: string;
  audit: AuditSink;
  /**
   * Where the object is and its key, from the stored reference (already JSON): a MediaError refuses
   * it (bad_ref, media_host, bad_key) before anything is fetched.
   */
  open(ref: Record<string, unknown>): { url: URL; key: Buffer };
  /** The platform's cipher over the downloaded stream; a MediaError for a bad length or pad. */
  decrypt(cipher: AsyncIterable<Uint8Array>, key: Buffer): AsyncGenerator<Uint8Array>;
  /** The download's bounds (maxBytes is of ciphertext read); its server name is said in errors. */
  download: BoundedDownloadOptions;
}

/** The byte source for one sealed file: opened, downloaded, decrypted; read at most once, by the turn. */
export function sealedMediaSource(file: InboundAttachment, o: SealedMediaOptions): Attachment {
  const refuse = (reason: string, message: string): never => {
    o.audit.log(o.operation, "refused", { reason, file: file.name });
    throw new Error(message);
  };
  return {
    name: file.name,
    ...(file.mimeType ? { mimeType: file.mimeType } : {}),
    ...(file.size !== undefined ? { size: file.size } : {}),
    async *read(signal: AbortSignal) {
      let ref: unknown;
      try {
        ref = JSON.parse(file.ref);
      } catch {
        return refuse("bad_ref", "the file's reference is unreadable");
      }
      if (typeof ref !== "object" || ref === null)
        return refuse("bad_ref", "the file's reference is unreadable");
      let sealed: { url: URL; key: Buffer };
      try {
        sealed = o.open(ref as Record<string, unknown>);
      } catch (error) {
        if (error instanceof MediaError) return refuse(error.reason, error.message);
        throw error;
      }
      try {
        yield* o.decrypt(
          boundedDownload(() => sealed.url, signal, o.download),
          sealed.key,
        );
      } catch (error) {
        if (error instanceof MediaError) return refuse(error.reason, error.message);
        throw error;
      }
    },
  };
}
