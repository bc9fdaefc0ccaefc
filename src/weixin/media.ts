/**
 * iLink's media protocol work: an image, voice note, file or video in a message is a CDN reference
 * (`encrypt_query_param`) plus a key; the object on the CDN is AES-128-ECB with PKCS#7 padding to 16
 * bytes. This is NOT WeCom's scheme (AES-256-CBC, 32-byte pad, per-object IV): the two are kept
 * apart on purpose. node:crypto does the cipher and checks the padding (its block is ours).
 *
 * The key arrives in two encodings of one value: base64 of the 16 raw bytes (images) or base64 of
 * their 32 ASCII hex digits (files, voice, video). They are told apart by the decoded length and a
 * strict hex check, because a wrong guess decrypts to plausible garbage instead of failing.
 */
import { createDecipheriv } from "node:crypto";
import { decodeSealKey, MediaError } from "../messaging/files/sealed-media.js";

export { MediaError };

const HEX32 = /^[0-9a-fA-F]{32}$/;
const BLOCK = 16;

/** The object's 16-byte key from either encoding; MediaError otherwise. */
export function decodeMediaKey(aesKey: string): Buffer {
  return decodeSealKey(aesKey, BLOCK, "the media");
}

/**
 * An image item's own `aeskey` (bare hex, beside the media's base64 one) in the first encoding, so
 * one decoder reads every key; "" when it is not exactly 32 hex digits.
 */
export function hexKeyAsBase64(hex: string): string {
  return HEX32.test(hex.trim()) ? Buffer.from(hex.trim(), "hex").toString("base64") : "";
}

/** Decrypt a ciphertext stream; plaintext is yielded as decrypted, the padding checked at the end. */
export async function* decryptMedia(
  cipher: AsyncIterable<Uint8Array>,
  key: Buffer,
): AsyncGenerator<Uint8Array> {
  const decipher = createDecipheriv("aes-128-ecb", key, null);
  let total = 0;
  for await (const chunk of cipher) {
    total += chunk.length;
    const out = decipher.update(chunk);
    if (out.length > 0) yield out;
  }
  if (total === 0 || total % BLOCK !== 0)
    throw new MediaError("bad_length", "the object is not whole 16-byte blocks: it is not an iLink object");
  let last: Buffer;
  try {
    last = decipher.final();
  } catch {
    throw new MediaError("bad_padding", "the object's padding is invalid (a wrong key or a damaged object)");
  }
  if (last.length > 0) yield last;
}
