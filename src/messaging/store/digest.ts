/**
 * Content digests: the journal keeps one per payload (a redelivery is recognised as the same or as
 * changed content) and the ledger one per delivered part (a resumed turn knows whether the text it
 * is about to post is what already landed). Layer: messaging.
 */
import { createHash } from "node:crypto";

/** SHA-256 of the UTF-8 text, lowercase hex. */
export function contentDigest(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}
