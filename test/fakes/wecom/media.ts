/**
 * How WeCom encrypts a media object, reproduced for the fake: AES-256-CBC under the object's own
 * 32-byte key, IV = the key's first 16 bytes, PKCS#7-padded to a 32-byte multiple. The key travels
 * as base64 of the raw 32 bytes: the only form aibot-node-sdk `src/crypto.ts` (`decryptFile`) reads.
 */
import { createCipheriv, randomBytes } from "node:crypto";

export function newMediaKey(): Buffer {
  return randomBytes(32);
}

export function encodeMediaKey(key: Buffer): string {
  return key.toString("base64");
}

/** PKCS#7 to 32: always 1..32 bytes of padding, each holding the pad length; `badPad` breaks it. */
export function encryptMedia(plain: Uint8Array, key: Buffer, opts: { badPad?: boolean } = {}): Buffer {
  const padLen = 32 - (plain.length % 32);
  const padding = Buffer.alloc(padLen, padLen);
  // A pad byte that disagrees with its neighbours: what a corrupt or forged object decrypts to.
  if (opts.badPad) padding[0] = padLen === 1 ? 0 : padLen - 1;
  const cipher = createCipheriv("aes-256-cbc", key, key.subarray(0, 16));
  cipher.setAutoPadding(false);
  return Buffer.concat([cipher.update(Buffer.concat([plain, padding])), cipher.final()]);
}
