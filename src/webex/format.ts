/**
 * Text shaping for Webex's sinks. Webex renders Markdown and caps a message at 7,439 UTF-8 bytes;
 * the shared modules count code points, so every body is bounded again here in bytes, never cutting
 * a character, and redacted on the form Webex renders.
 */
import { redactForDisplay } from "../messaging/security/display-safety.js";
import {
  chunkUtf8Bytes,
  splitMarkdownBytes,
  splitMarkdownSafe,
  truncateUtf8,
} from "../messaging/text/split.js";

/** Webex's documented cap on a message's text/markdown, in UTF-8 bytes. */
export const WEBEX_MAX_BYTES = 7439;
/** Room kept under the cap for a status line or steer note appended to a chunk. */
export const WEBEX_FOOTER_BYTES = 400;
export const WEBEX_CHUNK_BYTES = WEBEX_MAX_BYTES - WEBEX_FOOTER_BYTES;
/**
 * The safe character floor the capabilities declare (7,439 bytes at 4 bytes a character): the
 * shared contract holds every message to it as well, so both bounds apply to every body.
 */
export const WEBEX_MAX_CHARS = Math.floor(WEBEX_MAX_BYTES / 4);
const FOOTER_CHARS = 100;
export const WEBEX_CHUNK_CHARS = WEBEX_MAX_CHARS - FOOTER_CHARS;

export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** The floor at every sink: redact the form Webex renders (its Markdown). */
export function webexSafe(text: string): string {
  return redactForDisplay(text).text;
}

/** An answer for delivery: fence-safe by bytes, each chunk then held under the hard cap. */
export function splitForWebex(text: string, budget = WEBEX_CHUNK_BYTES): string[] {
  return splitMarkdownSafe(text, WEBEX_CHUNK_CHARS)
    .flatMap((chunk) => splitMarkdownBytes(chunk, budget))
    .flatMap((chunk) => lastByteGuard(chunk));
}

function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * The last guard on every send: a body still over the cap (a redaction marker longer than what it
 * replaced) is cut by bytes at a character boundary, so nothing is lost and Webex refuses nothing.
 */
export function lastByteGuard(text: string, cap = WEBEX_MAX_BYTES): string[] {
  if (utf8Bytes(text) <= cap && codePoints(text) <= WEBEX_MAX_CHARS) return [text];
  // Both bounds: bytes first (never inside a character), then the character floor.
  return chunkUtf8Bytes(text, cap).flatMap((piece) => {
    const cps = Array.from(piece);
    const out: string[] = [];
    for (let i = 0; i < cps.length; i += WEBEX_MAX_CHARS)
      out.push(cps.slice(i, i + WEBEX_MAX_CHARS).join(""));
    return out;
  });
}

/** Append a line if it still fits; a line that does not fit is dropped, never truncated mid-way. */
export function withLine(content: string, line: string, cap = WEBEX_MAX_BYTES): string {
  if (!line) return content;
  const joined = content ? `${content}\n\n${line}` : line;
  return utf8Bytes(joined) <= cap && codePoints(joined) <= WEBEX_MAX_CHARS ? joined : content;
}

/** The last `bytes` of an answer for a status frame: whole characters, from a line start when one is near. */
export function answerTail(text: string, bytes: number): string {
  if (utf8Bytes(text) <= bytes) return text;
  const reversed = Array.from(text).reverse().join("");
  const kept = Array.from(truncateUtf8(reversed, bytes)).reverse().join("");
  const nl = kept.indexOf("\n");
  return `…${nl >= 0 && nl < kept.length / 2 ? kept.slice(nl + 1) : kept}`;
}
