/**
 * Fence-safe markdown splitting shared by every channel, plus its byte-capped and UTF-8 primitives.
 * The splitting rules themselves live in StreamingSplitter (one implementation for one-shot and live
 * use) and the fence grammar in fences.ts (one state machine for every function here).
 */
import { type SplitOptions, StreamingSplitter } from "./streaming-splitter.js";

export { iterFenceLines, iterFenceSpans } from "./fences.js";

/**
 * Splits markdown into chunks of at most `limit - reserve` code points without breaking fenced code:
 * a cut inside a fence closes it and reopens the next chunk with the original opener line. Prefix
 * stable: splitting a longer prefix of the same stream reproduces every chunk but the last.
 */
export function splitMarkdownSafe(text: string, limit: number, opts: SplitOptions = {}): string[] {
  if (typeof text !== "string") throw new TypeError("splitMarkdownSafe expects a string");
  const splitter = new StreamingSplitter(limit, opts);
  return [...splitter.append(text), ...splitter.finish()];
}

/** Smallest character budget worth re-splitting at; below it the UTF-8 floor takes over. */
const MIN_CHAR_BUDGET = 16;
/**
 * Re-splits allowed before the floor takes over. Real text converges in a few (the parity sample needs
 * at most 4); a chunk whose fence scaffolding alone overflows the cap would otherwise shrink by a
 * sliver per full re-split, hundreds of times.
 */
const MAX_RESPLITS = 32;

/**
 * splitMarkdownSafe for a platform that caps UTF-8 bytes: split by characters, measure the chunks,
 * and shrink the character budget in proportion to the worst overflow until they fit. Once the
 * budget would drop below MIN_CHAR_BUDGET, any chunk still too large is cut by chunkUtf8Bytes.
 */
export function splitMarkdownBytes(text: string, maxBytes: number, opts: SplitOptions = {}): string[] {
  if (typeof text !== "string") throw new TypeError("splitMarkdownBytes expects a string");
  const reserve = opts.reserve ?? 0;
  if (!Number.isInteger(maxBytes) || !Number.isInteger(reserve)) {
    throw new RangeError("maxBytes and reserve must be integers");
  }
  if (text === "") return [];
  const budget = maxBytes - reserve;
  // Same contract as splitMarkdownSafe: a cap that leaves no room means "do not split".
  if (maxBytes <= 0 || budget <= 0 || utf8Length(text) <= budget) return [text];
  let chars = budget;
  for (let attempt = 1; ; attempt++) {
    const chunks = splitMarkdownSafe(text, chars);
    let worst = 0;
    for (const chunk of chunks) worst = Math.max(worst, utf8Length(chunk));
    if (worst <= budget) return chunks;
    const next = Math.floor((chars * budget) / worst);
    if (next < MIN_CHAR_BUDGET || attempt === MAX_RESPLITS) {
      const floored = byteFloor(chunks, budget);
      // The floor re-cuts each oversize chunk alone, leaving a short remainder per chunk (emoji at a
      // 9-byte cap: 8, 8, 8, 8, 4 bytes per 9-character chunk). One more split at the proportional
      // budget often fits outright; keep whichever sends fewer messages.
      if (next >= 1 && next < chars) {
        const retry = byteFloor(splitMarkdownSafe(text, next), budget);
        if (retry.length < floored.length) return retry;
      }
      return floored;
    }
    chars = next;
  }
}

/** The UTF-8 floor: every chunk still over `budget` bytes is cut greedily by bytes. */
function byteFloor(chunks: readonly string[], budget: number): string[] {
  return chunks.flatMap((chunk) => (utf8Length(chunk) > budget ? chunkUtf8Bytes(chunk, budget) : [chunk]));
}

/**
 * Lossless greedy split into pieces of at most `maxBytes` UTF-8 bytes, never inside a code point; a
 * code point wider than the cap travels alone. A non-positive cap returns the text whole.
 */
export function chunkUtf8Bytes(text: string, maxBytes: number): string[] {
  if (typeof text !== "string") throw new TypeError("chunkUtf8Bytes expects a string");
  if (!Number.isInteger(maxBytes)) throw new RangeError("maxBytes must be an integer");
  if (text === "") return [];
  if (maxBytes <= 0) return [text];
  const out: string[] = [];
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < text.length; ) {
    const width = unitWidth(text, i);
    const size = utf8Width(text.codePointAt(i)!);
    if (bytes + size > maxBytes && i > start) {
      out.push(text.slice(start, i));
      start = i;
      bytes = 0;
    }
    bytes += size;
    i += width;
  }
  out.push(text.slice(start));
  return out;
}

/** The longest prefix of at most `maxBytes` UTF-8 bytes, whole code points only; a non-positive cap keeps all. */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (typeof text !== "string") throw new TypeError("truncateUtf8 expects a string");
  if (!Number.isInteger(maxBytes)) throw new RangeError("maxBytes must be an integer");
  if (maxBytes <= 0) return text;
  let bytes = 0;
  for (let i = 0; i < text.length; ) {
    bytes += utf8Width(text.codePointAt(i)!);
    if (bytes > maxBytes) return text.slice(0, i);
    i += unitWidth(text, i);
  }
  return text;
}

/** UTF-8 length; a lone surrogate counts three bytes, as Python's surrogatepass encodes it. */
function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; ) {
    n += utf8Width(text.codePointAt(i)!);
    i += unitWidth(text, i);
  }
  return n;
}

function utf8Width(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/** UTF-16 units of the code point at `i`: 2 for a surrogate pair, else 1. */
function unitWidth(text: string, i: number): number {
  return text.codePointAt(i)! > 0xffff ? 2 : 1;
}
