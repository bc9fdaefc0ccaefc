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
import { renderTablesWithMetadata } from "../messaging/text/tables/index.js";

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
/** Bytes of the answer a status frame shows: enough to see it moving, never a second answer. */
const TAIL_BYTES = 600;
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
 * The byte-exact chunker: pieces within `bytes` UTF-8 bytes and `chars` code points, cut only
 * between code points (never inside a surrogate pair), whose concatenation is exactly the input.
 */
export function chunkExact(text: string, bytes = WEBEX_CHUNK_BYTES, chars = WEBEX_CHUNK_CHARS): string[] {
  // Both bounds: bytes first (never inside a character), then the character floor.
  return chunkUtf8Bytes(text, bytes).flatMap((piece) => {
    const cps = Array.from(piece);
    if (cps.length <= chars) return [piece];
    const out: string[] = [];
    for (let i = 0; i < cps.length; i += chars) out.push(cps.slice(i, i + chars).join(""));
    return out;
  });
}

/**
 * The last guard on every send: a body still over the cap (a redaction marker longer than what it
 * replaced) is cut by bytes at a character boundary, so nothing is lost and Webex refuses nothing.
 */
export function lastByteGuard(text: string, cap = WEBEX_MAX_BYTES): string[] {
  if (utf8Bytes(text) <= cap && codePoints(text) <= WEBEX_MAX_CHARS) return [text];
  return chunkExact(text, cap, WEBEX_MAX_CHARS);
}

/** Whether a rendered table grid fits one answer chunk (the tables module's `fits`). */
export function fitsOneChunk(grid: string): boolean {
  return utf8Bytes(grid) <= WEBEX_CHUNK_BYTES && codePoints(grid) <= WEBEX_CHUNK_CHARS;
}

/** One message of an answer; `exact` marks a piece of a raw table cut byte-exactly. */
export interface AnswerChunk {
  text: string;
  exact: boolean;
}

/**
 * An answer (tables already rendered with `fitsOneChunk`) as messages, each redacted on the form
 * Webex renders. Prose and rendered tables go through the byte-bounded fence-safe splitter. A raw
 * table run (a grid too big for one message that no card could show) is cut by the byte-exact
 * chunker instead: the fence-safe splitter eats the whitespace at its cuts, while these pieces put
 * together again are the table exactly, which is what a reader copying it back needs.
 */
export function chunkAnswer(
  prefix: string,
  rendered: { text: string; rawRuns?: readonly (readonly [number, number])[] },
): AnswerChunk[] {
  const out: AnswerChunk[] = [];
  const prose = (text: string) => {
    if (text.trim())
      for (const chunk of splitForWebex(webexSafe(text))) out.push({ text: chunk, exact: false });
  };
  let at = 0;
  let lead = prefix;
  for (const [start, end] of rendered.rawRuns ?? []) {
    // The blank lines around a raw run are the message break itself.
    prose((lead + rendered.text.slice(at, start)).replace(/\n+$/, ""));
    lead = "";
    for (const piece of chunkExact(webexSafe(rendered.text.slice(start, end))))
      out.push({ text: piece, exact: true });
    at = end;
  }
  prose(
    rendered.rawRuns?.length ? rendered.text.slice(at).replace(/^\n+/, "") : lead + rendered.text.slice(at),
  );
  return out;
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

/**
 * An answer (its tables already presented with `fitsOneChunk`) as Webex messages: chunkAnswer's
 * pieces. Presenting is idempotent, so reading the tables again finds only the runs left raw, and
 * those are cut byte-exact. With a footer, a last piece that is a raw table's, cut exactly, stays
 * exact: the footer then comes on its own (an empty last piece). A live frame is the answer's tail,
 * cut from the REDACTED answer (a key split by the cut was already replaced whole).
 */
export function fitWebex(source: string, o: { policy: string; footer?: string; live?: boolean }): string[] {
  if (!source.trim()) return [];
  if (o.live) return [answerTail(webexSafe(source), TAIL_BYTES)];
  const rendered = renderTablesWithMetadata(source, {
    policy: o.policy,
    nativeTables: false,
    fits: fitsOneChunk,
  });
  const chunks = chunkAnswer("", rendered);
  const pieces = chunks.map((c) => c.text);
  if (o.footer && chunks.at(-1)?.exact) pieces.push("");
  return pieces;
}
