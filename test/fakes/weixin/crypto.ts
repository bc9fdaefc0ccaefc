/** The CDN's side of iLink media: AES-128-ECB with PKCS#7, and the two key encodings iLink sends. */
import { createCipheriv, randomBytes } from "node:crypto";

export function encryptEcb(plain: Buffer, key: Buffer): Buffer {
  const cipher = createCipheriv("aes-128-ecb", key, null);
  return Buffer.concat([cipher.update(plain), cipher.final()]);
}

export function newKey(): Buffer {
  return randomBytes(16);
}

/** `raw`: base64 of the 16 bytes (images); `hex`: base64 of their 32 ASCII hex digits (others). */
export function encodeKey(key: Buffer, encoding: "raw" | "hex"): string {
  return encoding === "raw"
    ? key.toString("base64")
    : Buffer.from(key.toString("hex"), "latin1").toString("base64");
}
