/**
 * The one fence state machine behind every splitting function: CommonMark-style fenced code blocks
 * read line by line. Every consumer (splitter, span scanner, line classifier, the splitter's cut
 * checks) asks this module, so the open/close rule exists exactly once.
 *
 * Lines are split on "\n" only; a trailing "\r" belongs to the terminator for the grammar (CRLF text
 * must not hide a closer) but stays in the text, so splitting never loses a byte.
 */

const BACKTICK = 0x60;
const TILDE = 0x7e;
const SPACE = 0x20;
const TAB = 0x09;
const CR = 0x0d;
const LF = 0x0a;

/** An open fence: which character, how long its run was, and its opener line (info string included). */
export interface Fence {
  readonly char: number;
  readonly size: number;
  /** The opener line without its terminator; reopened verbatim after a split so the language tag survives. */
  readonly opener: string;
}

/** null while outside any fence. */
export type FenceState = Fence | null;

export type FenceRole = "outside" | "open" | "body" | "close";

/**
 * The shape of a line's start, precomputed once so a cut search can ask "would this prefix be a
 * delimiter?" in O(1) per candidate instead of re-parsing every prefix.
 */
export interface LineHead {
  /** Count of leading spaces (up to 3; meaningful only when `char` is set). */
  readonly indent: number;
  /** Fence character right after the indent, or 0 when there is none. */
  readonly char: number;
  /** Length of the run of `char` after the indent. */
  readonly run: number;
  /** Index of the first backtick after the run (or Infinity): a backtick fence's info may not hold one. */
  readonly backtickAfterRun: number;
  /** Index just past the run plus any trailing spaces/tabs/CR: a closer may carry nothing else. */
  readonly blankAfterRun: number;
}

/** The head of every line that cannot start a fence (most lines), shared so reading one allocates nothing. */
const PLAIN: LineHead = Object.freeze({
  indent: 0,
  char: 0,
  run: 0,
  backtickAfterRun: Number.POSITIVE_INFINITY,
  blankAfterRun: 0,
});

/** Reads the fence-relevant head of `line[0, end)`; a cut search passes the widest prefix it may take. */
export function readHead(line: string, end = line.length): LineHead {
  let i = 0;
  while (i < end && i < 4 && line.charCodeAt(i) === SPACE) i++;
  const c = i < end ? line.charCodeAt(i) : 0;
  if (i > 3 || (c !== BACKTICK && c !== TILDE)) return PLAIN;
  let j = i;
  while (j < end && line.charCodeAt(j) === c) j++;
  let blank = j;
  while (blank < end && isFenceBlank(line.charCodeAt(blank))) blank++;
  let tick = Number.POSITIVE_INFINITY;
  if (c === BACKTICK) {
    for (let t = j; t < end; t++) {
      if (line.charCodeAt(t) === BACKTICK) {
        tick = t;
        break;
      }
    }
  }
  return { indent: i, char: c, run: j - i, backtickAfterRun: tick, blankAfterRun: blank };
}

/** What may follow a closer's run: spaces, tabs, and the CR of a CRLF terminator. */
function isFenceBlank(u: number): boolean {
  return u === SPACE || u === TAB || u === CR;
}

/**
 * Would the first `k` UTF-16 units of the line described by `head` change `state`?
 * Outside: is that prefix an opener (≤3 spaces, ≥3 backticks or tildes, and a backtick fence's info
 * holds no backtick). Inside: is it a closer (same character, run at least as long, nothing else).
 */
export function prefixTogglesFence(head: LineHead, k: number, state: FenceState): boolean {
  if (head.char === 0) return false;
  if (state === null) {
    if (head.run < 3 || k < head.indent + 3) return false;
    // A run cut short is still a bare opener; past the run the info must stay backtick-free.
    return head.char === TILDE || k <= head.backtickAfterRun;
  }
  if (head.char !== state.char || head.run < state.size) return false;
  return k >= head.indent + state.size && k <= head.blankAfterRun;
}

/** End of the line's grammar content: "\n" and one trailing "\r" are terminator, not content. */
export function contentEnd(line: string): number {
  let end = line.length;
  if (end > 0 && line.charCodeAt(end - 1) === LF) end--;
  if (end > 0 && line.charCodeAt(end - 1) === CR) end--;
  return end;
}

/** The line's text for grammar purposes (terminator dropped). */
export function lineContent(line: string): string {
  const end = contentEnd(line);
  return end === line.length ? line : line.slice(0, end);
}

/** The fence `line` opens when read outside any fence, or null. */
export function openerOf(line: string): Fence | null {
  const end = contentEnd(line);
  const head = readHead(line, end);
  if (!prefixTogglesFence(head, end, null)) return null;
  return { char: head.char, size: head.run, opener: line.slice(0, end) };
}

/** Does `line` close `fence`? */
export function closesFence(fence: Fence, line: string): boolean {
  const end = contentEnd(line);
  return prefixTogglesFence(readHead(line, end), end, fence);
}

/** The fence state after `line` (terminator optional). */
export function nextFence(state: FenceState, line: string): FenceState {
  if (state === null) return openerOf(line);
  return closesFence(state, line) ? null : state;
}

/** Classifies one line against `state` and returns the state after it. */
export function advanceFence(state: FenceState, line: string): { state: FenceState; role: FenceRole } {
  if (state === null) {
    const opened = openerOf(line);
    return opened === null ? { state: null, role: "outside" } : { state: opened, role: "open" };
  }
  return closesFence(state, line) ? { state: null, role: "close" } : { state, role: "body" };
}

/** The synthetic closer for a fence: same character, matching length, no indent. */
export function closerOf(fence: Fence): string {
  return String.fromCharCode(fence.char).repeat(fence.size);
}

/** Every line of `text` (split on "\n", terminators dropped) with its role in the fence machine. */
export function* iterFenceLines(text: string): Generator<[string, FenceRole]> {
  // A generator, not an array: a caller that streams never holds one tuple per line, which on a
  // text of millions of short lines made old-space collection the super-linear part.
  let state: FenceState = null;
  for (let start = 0; start < text.length; ) {
    const nl = text.indexOf("\n", start);
    const end = nl < 0 ? text.length : nl + 1;
    const line = text.slice(start, end);
    const step = advanceFence(state, line);
    yield [lineContent(line), step.role];
    state = step.state;
    start = end;
  }
}

/**
 * The [start, end) UTF-16 spans that lie inside a fenced block, opener line through closer line
 * (terminator included); an unclosed fence runs to the end of the text. UTF-16 offsets so a caller
 * can slice the string directly.
 */
export function iterFenceSpans(text: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let state: FenceState = null;
  let open = -1;
  for (let start = 0; start < text.length; ) {
    const nl = text.indexOf("\n", start);
    const end = nl < 0 ? text.length : nl + 1;
    const step = advanceFence(state, text.slice(start, end));
    if (step.role === "open") open = start;
    if (step.role === "close") out.push([open, end]);
    state = step.state;
    start = end;
  }
  if (state !== null) out.push([open, text.length]);
  return out;
}

/**
 * `text` with a fence it leaves open closed on a line of its own: a live frame of a streamed answer
 * is cut wherever the stream stands, and a platform that renders markdown would otherwise show the
 * rest of the bubble (its status line) as code. Text with every fence closed comes back unchanged.
 */
export function closeOpenFence(text: string): string {
  let state: FenceState = null;
  for (let start = 0; start < text.length; ) {
    const nl = text.indexOf("\n", start);
    const end = nl < 0 ? text.length : nl + 1;
    state = nextFence(state, text.slice(start, end));
    start = end;
  }
  if (state === null) return text;
  return `${text}${text.endsWith("\n") ? "" : "\n"}${closerOf(state)}`;
}
