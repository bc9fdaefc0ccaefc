/**
 * WeCom's media protocol work: an image, file or video in a callback is a ~5-minute URL plus the
 * object's OWN key, and the object is AES-256-CBC with IV = the key's first 16 bytes, PKCS#7-padded
 * to a 32-byte multiple. node:crypto does the cipher with auto-padding OFF, because its PKCS#7 check
 * is for 16-byte blocks: the pad here can be up to 32, so it is checked by hand. A bad pad or a
 * ragged length is a refusal with a reason, never a crash (callback-mode crypto, @wecom/crypto, is a
 * different scheme and not needed here).
 *
 * The key arrives in two encodings of one value: base64 of the 32 raw bytes, or base64 of their 64
 * ASCII hex digits. They are told apart by the decoded length and a strict hex check, because a
 * wrong guess decrypts to plausible garbage instead of failing.
 */
import { createDecipheriv } from "node:crypto";
import { decodeSealKey, MediaError } from "../messaging/files/sealed-media.js";
import { WECOM_PAD_BLOCK } from "./limits.js";

export { MediaError };

/** The object's 32-byte key from either encoding; MediaError("bad_key") when it is neither. */
export function decodeMediaKey(aeskey: string): Buffer {
  // The SDK documents base64 of the raw key; hex-then-base64 is accepted defensively (it costs nothing).
  return decodeSealKey(aeskey, 32, "the file");
}

/**
 * Decrypt a ciphertext stream. Plaintext is yielded as it is decrypted, except the last block,
 * which is held until the end so the padding can be checked and removed before anyone sees it.
 */
export async function* decryptMedia(
  cipher: AsyncIterable<Uint8Array>,
  key: Buffer,
): AsyncGenerator<Uint8Array> {
  const decipher = createDecipheriv("aes-256-cbc", key, key.subarray(0, 16));
  decipher.setAutoPadding(false);
  let held: Buffer = Buffer.alloc(0);
  let total = 0;
  for await (const chunk of cipher) {
    total += chunk.length;
    held = Buffer.concat([held, decipher.update(chunk)]);
    if (held.length > WECOM_PAD_BLOCK) {
      yield held.subarray(0, held.length - WECOM_PAD_BLOCK);
      held = held.subarray(held.length - WECOM_PAD_BLOCK);
    }
  }
  // Padded to 32 means at least one 32-byte block, and whole blocks only.
  if (total === 0 || total % WECOM_PAD_BLOCK !== 0)
    throw new MediaError("bad_length", "the file is not whole 32-byte blocks: it is not a WeCom object");
  held = Buffer.concat([held, decipher.final()]);
  yield unpad(held);
}

/** The PKCS#7 padding removed, after checking every pad byte (1..32, each equal to the length). */
function unpad(block: Buffer): Buffer {
  const pad = block[block.length - 1] ?? 0;
  if (pad < 1 || pad > WECOM_PAD_BLOCK || pad > block.length)
    throw new MediaError("bad_padding", "the file's padding is invalid (a wrong key or a damaged file)");
  for (let i = block.length - pad; i < block.length; i++)
    if (block[i] !== pad)
      throw new MediaError("bad_padding", "the file's padding is invalid (a wrong key or a damaged file)");
  return block.subarray(0, block.length - pad);
}
