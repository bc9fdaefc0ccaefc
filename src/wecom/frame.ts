/**
 * What one WeCom bubble frame (or push) carries, and where in the answer a bubble stands. Pure.
 *
 * A frame is the bubble's WHOLE text: the reasoning in `<think></think>` (WeCom folds it away), a
 * lead line (a steer's quote), the answer's slice, and a status line. It must fit 5,120 code points
 * AND 20,480 UTF-8 bytes; the answer slice is bounded by its caller (split at 4,608 code points, so
 * it can never pass the bytes whatever the script), the status line gives way next, and the
 * reasoning takes what is left, keeping its newest part. A final guard cuts at a code point, never
 * inside a surrogate pair, should anything still overflow.
 *
 * Progress through the answer is counted on the RAW text (offsets into the answer as streamed),
 * never on a transformed slice: a transform (tables, redaction) changes lengths, and an offset taken
 * from its output would index a different string.
 */
import { clip } from "../messaging/text/clip.js";
import { closeOpenFence, type FenceState, nextFence } from "../messaging/text/fences.js";
import { displaySafeFor } from "../messaging/text/options.js";
import { truncateUtf8 } from "../messaging/text/split.js";
import { renderTables } from "../messaging/text/tables/index.js";
import { WECOM_MAX_REPLY_BYTES, WECOM_MAX_REPLY_CHARS } from "./limits.js";
import { WECOM_CAPABILITIES } from "./transport.js";

export interface FrameParts {
  /** Joined reasoning, already display-safe. */
  think?: string;
  lead?: string;
  body: string;
  /** The live status line (italic) or the end's status line. */
  footer?: string;
}

/** A slice as sent: tables stay canonical (table mode off), then the display-form redaction. */
export function presentSlice(slice: string): string {
  const caps = WECOM_CAPABILITIES;
  return displaySafeFor(
    renderTables(slice, { policy: caps.tableMode, nativeTables: caps.nativeTables }),
    caps,
  );
}

const cps = (s: string) => Array.from(s).length;
const bytes = (s: string) => Buffer.byteLength(s, "utf8");

function assemble(think: string, lead: string, body: string, footer: string): string {
  const main = `${lead}${body}`;
  const withFooter = footer ? (main.trim() ? `${main}\n\n${footer}` : footer) : main;
  if (!think) return withFooter;
  return withFooter ? `<think>${think}</think>\n\n${withFooter}` : `<think>${think}</think>`;
}

/** The newest `n` code points of `text` (an ellipsis marks the cut). */
function newest(text: string, n: number): string {
  const chars = Array.from(text);
  if (chars.length <= n) return text;
  if (n <= 1) return "";
  return `…${chars.slice(chars.length - (n - 1)).join("")}`;
}

/** Whether `text` fits one frame: both caps. */
export function fitsFrame(text: string): boolean {
  return cps(text) <= WECOM_MAX_REPLY_CHARS && bytes(text) <= WECOM_MAX_REPLY_BYTES;
}

/** One frame's content within both caps (see the module doc for what gives way first). */
export function composeFrame(p: FrameParts): string {
  const lead = p.lead ?? "";
  let footer = p.footer ?? "";
  const thinkText = p.think ? closeOpenFence(p.think) : "";
  const fits = fitsFrame;
  if (!fits(assemble("", lead, p.body, footer))) footer = "";
  let out = assemble("", lead, p.body, footer);
  if (thinkText) {
    // The reasoning gets what is left, its newest part; none at all when nothing is left.
    let n = WECOM_MAX_REPLY_CHARS - cps(out) - cps("<think></think>\n\n");
    while (n > 1) {
      const candidate = assemble(closeOpenFence(newest(thinkText, n)), lead, p.body, footer);
      if (fits(candidate)) {
        out = candidate;
        break;
      }
      // Over on bytes (wide script): shrink until it fits.
      n = Math.min(n - 1, Math.floor(n * 0.9));
    }
  }
  // The last guard: never past either cap, and never inside a code point.
  return clip(truncateUtf8(out, WECOM_MAX_REPLY_BYTES), WECOM_MAX_REPLY_CHARS);
}

/**
 * How much of `segment` a head chunk of splitMarkdownSafe(segment) covers (UTF-16 units). The chunk
 * is a prefix of the segment, plus a fence closer when the cut fell inside code; the splitter drops
 * the whitespace at its cut. 0 when the chunk does not map back (resume from the start: a repeat,
 * never a hole).
 */
export function headExtent(segment: string, head: string): number {
  let end: number;
  if (segment.startsWith(head)) end = head.length;
  else {
    const nl = head.lastIndexOf("\n");
    if (nl < 0 || !segment.startsWith(head.slice(0, nl))) return 0;
    end = nl;
  }
  while (end < segment.length && /\s/.test(segment[end] as string)) end++;
  return end;
}

/**
 * Where a new bubble may start near `offset` of `text`: the offset itself, or, inside fenced code,
 * the start of its line with the fence's opener to reopen it (a bubble that began mid-code would
 * show the rest as prose). Moving back only ever repeats text, never skips it.
 */
export function resumePoint(text: string, offset: number): { start: number; reopen: string } {
  let state: FenceState = null;
  let lineStart = 0;
  for (let start = 0; start < offset; ) {
    const nl = text.indexOf("\n", start);
    const end = nl < 0 ? text.length : nl + 1;
    if (end > offset) {
      lineStart = start;
      break;
    }
    state = nextFence(state, text.slice(start, end));
    start = end;
    lineStart = end;
  }
  if (state === null) return { start: offset, reopen: "" };
  // Inside a fence: this line is code (or its closer); start at the line and reopen the fence.
  return { start: lineStart, reopen: `${state.opener}\n` };
}
