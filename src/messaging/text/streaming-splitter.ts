/**
 * The fence-safe markdown splitter, written as a stream so the one-shot splitMarkdownSafe and a live
 * renderer share a single implementation. Greedy, left to right, and every cut depends only on the
 * text before it, so a longer prefix reproduces every chunk but the last: a caller sends sealed chunks
 * and keeps `tail` as its live buffer. Lengths are Unicode code points (Python `str` semantics).
 *
 * Cost is linear: complete lines are decided once; an unfinished line parks at the first decision more
 * text could change (does it still fit? is the whole line still short enough to place whole?) and an
 * append resumes from there instead of re-splitting the buffer.
 */
import { closerOf, contentEnd, type FenceState, nextFence, prefixTogglesFence, readHead } from "./fences.js";
import { isPyWhitespace as isPySpace } from "./whitespace.js";

export interface SplitOptions {
  /** Capacity held back from every chunk for a suffix the caller appends. */
  reserve?: number;
}

/** How a fence is closed at a cut and reopened in the next chunk (see #scaffold). */
interface Scaffold {
  readonly reopen: string;
  readonly reopenCp: number;
  readonly closer: string;
  readonly closerCp: number;
}

const NO_SCAFFOLD: Scaffold = Object.freeze({ reopen: "", reopenCp: 0, closer: "", closerCp: 0 });

/**
 * From this budget on, fence scaffolding may take at most half a chunk. Below it a chunk holds too
 * little for the limit to matter (the parity samples split at 8 to 40 and keep the reference's
 * scaffolding); real platform caps are in the thousands.
 */
const FLOOD_GUARD_BUDGET = 64;

/** A fence-marker run this long is cut hard rather than two markers at a time (see #widestPrefixClean). */
const LONG_MARKER_RUN = 6;
const BLANK = 1;
const TABLE = 2;
/** Normal ladder. */
const TOP = 0;
/** No clean cut exists and the buffer is sealed: place the line whole, or cut it dirty if it is too long. */
const WHOLE = 1;

export class StreamingSplitter {
  readonly #limit: number;
  readonly #budget: number;
  readonly #disabled: boolean;
  #finished = false;
  #started = false;
  #held = "";
  #heldCp = 0;
  #lastUnit = 0;
  #sealed: string[] = [];
  // The chunk being filled: a reopener (when it starts inside a fence) plus whole lines or fragments.
  #reopen = "";
  #reopenCp = 0;
  #scaffoldOf: FenceState = null;
  #scaffoldCache: Scaffold = NO_SCAFFOLD;
  #body = "";
  #bodyCp = 0;
  // Per placed line or fragment: UTF-16 length, code points, BLANK/TABLE flags (for the cut ladder).
  #partLen: number[] = [];
  #partCp: number[] = [];
  #partFlags: number[] = [];
  #solo = false;
  // Fence state before the current line; the line is #cutOff (already sealed by cuts) + #frag.
  #state: FenceState = null;
  #cutOff = "";
  #lineCp = 0;
  #frag = "";
  #fragCp = 0;
  #phase = TOP;

  constructor(limit: number, opts: SplitOptions = {}) {
    const reserve = opts.reserve ?? 0;
    if (!Number.isInteger(limit)) throw new RangeError(`limit must be an integer, got ${limit}`);
    if (!Number.isInteger(reserve)) throw new RangeError(`reserve must be an integer, got ${reserve}`);
    this.#limit = limit;
    this.#budget = limit - reserve;
    // A non-positive limit, or a reserve eating the whole budget, means "do not split".
    this.#disabled = limit <= 0 || this.#budget <= 0;
  }

  /** Feeds more text; returns the chunks this append sealed (final: later text never changes them). */
  append(text: string): string[] {
    if (typeof text !== "string") throw new TypeError("StreamingSplitter.append expects a string");
    if (this.#finished) throw new Error("StreamingSplitter: append after finish");
    if (text === "") return [];
    if (!this.#started) {
      this.#held += text;
      if (this.#disabled) return [];
      this.#heldCp += this.#countCp(text);
      // Text that fits one chunk is returned whole, so nothing is decided until it overflows.
      if (this.#heldCp <= this.#budget) return [];
      this.#started = true;
      const all = this.#held;
      this.#held = "";
      this.#lastUnit = 0;
      this.#feed(all);
    } else {
      this.#feed(text);
    }
    return this.#takeSealed();
  }

  /**
   * The live buffer. When splitMarkdownSafe(text so far) returns k chunks, every append so far has
   * returned the first k - 1 between them and `tail` is chunk k ("" when k = 0). It is unsealed: an open
   * fence stays open and trailing whitespace stays, exactly as in the one-shot result's last chunk.
   */
  get tail(): string {
    if (!this.#started) return this.#held;
    if (this.#body === "" && this.#frag === "") return "";
    return this.#reopen + this.#body + this.#frag;
  }

  /** Ends the stream; returns the remaining chunks (the tail, when there is one). */
  finish(): string[] {
    if (this.#finished) return [];
    this.#finished = true;
    if (!this.#started) return this.#held === "" ? [] : [this.#held];
    if (this.#frag !== "") this.#drive(true, false);
    // The final chunk is left as is: an unclosed fence stays open for the caller to present.
    if (this.#body !== "") this.#sealed.push(this.#reopen + this.#body);
    return this.#takeSealed();
  }

  #takeSealed(): string[] {
    const out = this.#sealed;
    this.#sealed = [];
    return out;
  }

  /** Code points in `text` (holding `pairs` surrogate pairs), counting a pair split across appends once. */
  #countCp(text: string, pairs = countPairs(text)): number {
    let n = text.length - pairs;
    if (isLow(text.charCodeAt(0)) && isHigh(this.#lastUnit)) n--;
    this.#lastUnit = text.charCodeAt(text.length - 1);
    return n;
  }

  #feed(text: string): void {
    // Surrogate pairs are located once per append, so counting each line's code points is O(1).
    const pairsAt = pairPositions(text);
    let nextPair = 0;
    for (let start = 0; start < text.length; ) {
      const nl = text.indexOf("\n", start);
      const end = nl < 0 ? text.length : nl + 1;
      const piece = start === 0 && end === text.length ? text : text.slice(start, end);
      let pairs = 0;
      while (nextPair < pairsAt.length && pairsAt[nextPair]! < end) {
        pairs++;
        nextPair++;
      }
      const cp = this.#countCp(piece, pairs);
      this.#lineCp += cp;
      this.#frag += piece;
      this.#fragCp += cp;
      if (nl >= 0) this.#drive(true, true);
      start = end;
    }
    // An unfinished line runs up to the first decision that more text could still change. A line that
    // still fits its chunk (an unfinished line reserves no closer) would park right there: skip the ladder.
    if (this.#frag === "") return;
    if (this.#phase === TOP && !this.#solo && this.#chunkCp + this.#fragCp <= this.#budget) return;
    this.#drive(false, false);
  }

  get #chunkCp(): number {
    return this.#reopenCp + this.#bodyCp;
  }

  /**
   * Places the current line (or its unplaced remainder). `final`: the line is complete, so every
   * decision commits. `more`: a newline ends it, so text may follow and a fence may need sealing.
   * Returns early, parked, at a decision later text could still change.
   */
  #drive(final: boolean, more: boolean): void {
    const state = this.#state;
    let after: FenceState = null;
    let flags = 0;
    if (final) {
      const line = this.#cutOff + this.#frag;
      const end = contentEnd(line);
      after = nextFence(state, line);
      if (state === null && after === null) flags = lineFlags(line, end, more);
    }
    const budget = this.#budget;
    for (;;) {
      if (this.#phase === WHOLE) {
        // Eligibility reads the logical line and the limit alone, never the room left.
        if (this.#lineCp <= this.#limit) {
          if (!final) return;
          this.#place(flags);
          this.#solo = true;
          break;
        }
        // Longer than any chunk may be: the widest cut whose prefix keeps the fence state.
        this.#cut(this.#widestPrefixClean(this.#freshRoom(state), state), state);
        this.#phase = TOP;
        continue;
      }
      // A whole-placed line holds its chunk alone.
      if (this.#solo) {
        this.#seal(state);
        continue;
      }
      const used = this.#chunkCp;
      if (state === null) {
        // An opener budgets its closer, except into an empty chunk: an opener line has no clean cut,
        // so insisting on that room would force a dirty cut of a line the chunk can hold.
        const cost = after !== null && more ? this.#scaffold(after).closerCp : 0;
        if (used === 0 ? this.#fragCp <= budget : used + this.#fragCp + cost <= budget) {
          if (!final) return;
          this.#place(flags);
          break;
        }
        if (this.#paragraphCut() || this.#lineBreakCut()) continue;
        const k = this.#cleanCut(budget - used, null);
        if (k !== null) {
          this.#cut(k, null);
          continue;
        }
        // No clean cut: seal first (keyed on cleanliness alone), then decide whole vs dirty.
        if (used > 0) this.#seal(null);
        this.#phase = WHOLE;
        continue;
      }
      // Inside a fence a body line reserves its closer (a closer line needs none).
      const cost = after !== null && more ? this.#scaffold(state).closerCp : 0;
      if (used + this.#fragCp + cost <= budget) {
        if (!final) return;
        this.#place(flags);
        break;
      }
      // Inside a fence cuts fall on line boundaries: a chunk holding more than its reopener is sealed,
      // and a line is hard-cut only when even a fresh chunk cannot hold it.
      // (A chunk holding only scaffolding, or none for a fence too wide to carry, is already fresh.)
      if (this.#body !== "") {
        this.#seal(state);
        continue;
      }
      const room = this.#freshRoom(state);
      if (this.#fragCp <= room) {
        if (!final) return;
        this.#place(flags);
        break;
      }
      const k = this.#cleanCut(room, state);
      if (k !== null) {
        this.#cut(k, state);
        continue;
      }
      this.#phase = WHOLE;
    }
    this.#state = after;
    this.#cutOff = "";
    this.#lineCp = 0;
    this.#frag = "";
    this.#fragCp = 0;
    this.#phase = TOP;
  }

  /** Room for a fragment in a chunk that holds only its scaffolding; never below one character. */
  #freshRoom(state: FenceState): number {
    if (state === null) return this.#budget;
    const scaffold = this.#scaffold(state);
    return Math.max(1, this.#budget - scaffold.reopenCp - scaffold.closerCp);
  }

  /**
   * How a cut inside `state`'s fence closes it and the next chunk reopens it. The original opener
   * line keeps the language tag; but an opener the model made long (`\`\`\`` + 1,800 characters of
   * info, or 1,000 backticks) would leave each chunk room for one character, so 40,000 characters of
   * body became 40,000 messages. Once a budget can afford real text (FLOOD_GUARD_BUDGET), scaffolding
   * may take at most half of it: the bare fence (same character, same length, no info) when that
   * fits, else none (the continuation reads as plain text, which beats a flood).
   */
  #scaffold(state: NonNullable<FenceState>): Scaffold {
    if (state === this.#scaffoldOf) return this.#scaffoldCache;
    const closer = closerOf(state);
    const full = {
      reopen: `${state.opener}\n`,
      reopenCp: cpLength(state.opener) + 1,
      closer,
      closerCp: state.size + 1,
    };
    let chosen: Scaffold = full;
    const half = Math.floor(this.#budget / 2);
    if (this.#budget >= FLOOD_GUARD_BUDGET && full.reopenCp + full.closerCp > half) {
      chosen =
        2 * (state.size + 1) <= half
          ? { reopen: `${closer}\n`, reopenCp: state.size + 1, closer, closerCp: state.size + 1 }
          : NO_SCAFFOLD;
    }
    this.#scaffoldOf = state;
    this.#scaffoldCache = chosen;
    return chosen;
  }

  /** Paragraph break at least halfway in: the latest blank line with a line on each side of it. */
  #paragraphCut(): boolean {
    let at = this.#reopenCp;
    let best = -1;
    let bestCp = 0;
    const n = this.#partFlags.length;
    for (let j = 0; j < n - 1; j++) {
      at += this.#partCp[j]!;
      if (j >= 1 && (this.#partFlags[j]! & BLANK) !== 0) {
        best = j;
        bestCp = at;
      }
    }
    if (best < 0 || bestCp < Math.floor(this.#budget / 2)) return false;
    this.#cutBefore(best + 1);
    return true;
  }

  /** The last line break, at least a quarter in; a trailing table row moves on with its header. */
  #lineBreakCut(): boolean {
    const used = this.#chunkCp;
    if (used === 0 || used < Math.floor(this.#budget / 4)) return false;
    const n = this.#partFlags.length;
    // The row might be a header whose separator comes next; the cut cannot peek, so it moves the row.
    if (n >= 2 && (this.#partFlags[n - 1]! & TABLE) !== 0) {
      if (used - this.#partCp[n - 1]! >= Math.floor(this.#budget / 4)) {
        this.#cutBefore(n - 1);
        return true;
      }
    }
    this.#seal(null);
    return true;
  }

  /** Seals parts [0, j) (plus the reopener) as a chunk and keeps the rest as the new chunk. */
  #cutBefore(j: number): void {
    let len = 0;
    let cp = 0;
    for (let i = 0; i < j; i++) {
      len += this.#partLen[i]!;
      cp += this.#partCp[i]!;
    }
    this.#emit(this.#reopen + this.#body.slice(0, len), null);
    this.#body = this.#body.slice(len);
    this.#bodyCp -= cp;
    this.#partLen.splice(0, j);
    this.#partCp.splice(0, j);
    this.#partFlags.splice(0, j);
    // The cut sits on an outside line boundary, so the rest starts outside any fence.
    this.#reopen = "";
    this.#reopenCp = 0;
  }

  /** The largest cut (index, code points) within `room` whose halves both start a plain line. */
  #cleanCut(room: number, state: FenceState): [number, number] | null {
    return this.#search(room, state, true);
  }

  /**
   * The largest cut within `room` whose prefix keeps the fence state; at least one character.
   *
   * Every prefix of a fence-marker run from its third marker on toggles the fence, so that cut is two
   * characters, and its remainder is the same run again: the reference turned 40,000 backticks at a
   * 1,900 cap into 19,051 two-backtick messages. A run of up to five keeps the reference's treatment
   * (at most two short cuts); a longer one is cut hard instead: at the room while the run fills it,
   * else two markers before its end, so the remainder (``js …) no longer reads as a delimiter. A chunk of
   * markers that opens a fence it never closes is harmless next to a flood, and only the first
   * `room` characters are read, so a stream decides exactly as a whole split does.
   */
  #widestPrefixClean(room: number, state: FenceState): [number, number] {
    const frag = this.#frag;
    const clean = this.#search(room, state, false);
    if (clean === null) return [cpToIndex(frag, 1), 1];
    const widest = Math.max(1, Math.min(room, this.#fragCp - 1));
    const widestIndex = this.#fragCp === frag.length ? widest : cpToIndex(frag, widest);
    // The fragment's own marker run (after up to three spaces of indent) decides, so a run is judged
    // once, whole, and not again from the middle after each short cut.
    let k = 0;
    while (k < 3 && frag.charCodeAt(k) === 0x20) k++;
    const marker = frag.charCodeAt(k);
    if (marker !== 0x60 && marker !== 0x7e) return clean;
    let end = k;
    while (end <= widestIndex && frag.charCodeAt(end) === marker) end++;
    // A short run keeps the reference's two short cuts only at the start of a line: a fragment left by
    // a cut (the line goes on in the next chunk) is cut hard too, or every chunk boundary a run lands on
    // would cost two more messages (`~~~…` then `~~~~~…` in one line made 8 chunks where 7 is the bound).
    const continuation = this.#cutOff !== "" && this.#budget >= FLOOD_GUARD_BUDGET;
    if (end - k < LONG_MARKER_RUN && !continuation) return clean;
    // Spaces and markers are one unit each, so an index is also a code-point count here.
    if (end > widestIndex) return [widestIndex, widest];
    return [end - 2, end - 2];
  }

  #search(room: number, state: FenceState, cleanRemainder: boolean): [number, number] | null {
    const frag = this.#frag;
    let k = Math.min(room, this.#fragCp - 1);
    if (k < 1) return null;
    let i = this.#fragCp === frag.length ? k : cpToIndex(frag, k);
    const head = readHead(frag, i + 1);
    while (k >= 1) {
      // The remainder is judged by its first character alone: it may still be arriving.
      if (!prefixTogglesFence(head, i, state) && !(cleanRemainder && startsDelimiter(frag.charCodeAt(i)))) {
        return [i, k];
      }
      i -= i >= 2 && isLow(frag.charCodeAt(i - 1)) && isHigh(frag.charCodeAt(i - 2)) ? 2 : 1;
      k--;
    }
    return null;
  }

  /** Seals the chunk plus the fragment's first `cut` units; the rest stays the fragment. */
  #cut([index, cp]: [number, number], state: FenceState): void {
    const head = this.#frag.slice(0, index);
    this.#emit(this.#reopen + this.#body + head, state);
    this.#reset(state);
    this.#cutOff += head;
    this.#frag = this.#frag.slice(index);
    this.#fragCp -= cp;
  }

  #place(flags: number): void {
    if (this.#frag === "") return;
    this.#body += this.#frag;
    this.#bodyCp += this.#fragCp;
    this.#partLen.push(this.#frag.length);
    this.#partCp.push(this.#fragCp);
    this.#partFlags.push(flags);
  }

  #seal(state: FenceState): void {
    this.#emit(this.#reopen + this.#body, state);
    this.#reset(state);
  }

  #emit(text: string, state: FenceState): void {
    let chunk: string;
    const closer = state === null ? "" : this.#scaffold(state).closer;
    if (state !== null && closer === "") {
      chunk = text; // a fence too wide to carry: its continuation goes as it is
    } else if (state !== null) {
      // A cut inside a fence closes it with the same character at matching length.
      chunk = text.endsWith("\n") ? text + closer : `${text}\n${closer}`;
    } else {
      // Outside a fence trailing whitespace cannot be content; leading whitespace always is.
      chunk = rstripPy(text);
    }
    if (chunk !== "") this.#sealed.push(chunk);
  }

  /** Starts a new chunk; inside a fence it opens with the original opener line. */
  #reset(state: FenceState): void {
    // The original opener line, indent and info string included, so the language tag carries over.
    const scaffold = state === null ? NO_SCAFFOLD : this.#scaffold(state);
    this.#reopen = scaffold.reopen;
    this.#reopenCp = scaffold.reopenCp;
    this.#body = "";
    this.#bodyCp = 0;
    this.#partLen.length = 0;
    this.#partCp.length = 0;
    this.#partFlags.length = 0;
    this.#solo = false;
  }
}

function isHigh(u: number): boolean {
  return u >= 0xd800 && u <= 0xdbff;
}

function isLow(u: number): boolean {
  return u >= 0xdc00 && u <= 0xdfff;
}

const SURROGATE = /[\ud800-\udfff]/;
const NO_PAIRS: readonly number[] = [];
const PAIR = /[\ud800-\udbff][\udc00-\udfff]/g;

/** Indices of the surrogate pairs in `text` (a lone surrogate is one code point, as in Python). */
function pairPositions(text: string): readonly number[] {
  if (!SURROGATE.test(text)) return NO_PAIRS;
  const at: number[] = [];
  PAIR.lastIndex = 0;
  while (PAIR.test(text)) at.push(PAIR.lastIndex - 2);
  return at;
}

function countPairs(text: string): number {
  return pairPositions(text).length;
}

/** Code points in `text`; a lone surrogate counts one, as a Python `str` does. */
function cpLength(text: string): number {
  return text.length - countPairs(text);
}

/** UTF-16 index of code point `k` in `text`, never inside a surrogate pair. */
function cpToIndex(text: string, k: number): number {
  let i = 0;
  for (let n = 0; n < k && i < text.length; n++) {
    i += isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1)) ? 2 : 1;
  }
  return i;
}

/** A remainder starting with indent or a fence character could read as a delimiter. */
function startsDelimiter(u: number): boolean {
  return u === 0x20 || u === 0x09 || u === 0x60 || u === 0x7e;
}

/** Python's str.rstrip(): its whitespace set, not JavaScript's. */
function rstripPy(text: string): string {
  let end = text.length;
  while (end > 0 && isPySpace(text.charCodeAt(end - 1))) end--;
  return end === text.length ? text : text.slice(0, end);
}

/** BLANK for a whitespace-only terminated line; TABLE for a pipe row that is not a separator row. */
function lineFlags(line: string, end: number, terminated: boolean): number {
  let i = 0;
  while (i < end && isPySpace(line.charCodeAt(i))) i++;
  if (i === end) return terminated ? BLANK : 0;
  const pipe = line.indexOf("|", i);
  if (pipe < 0 || pipe >= end) return 0;
  // A separator row (only pipes, colons, dashes, spaces) is never a header, so it never moves.
  for (; i < end; i++) {
    const u = line.charCodeAt(i);
    if (u !== 0x7c && u !== 0x3a && u !== 0x2d && !isPySpace(u)) return TABLE;
  }
  return 0;
}
