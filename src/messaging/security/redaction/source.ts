/**
 * The text a rule reads, whose end may not be final yet: a rule that needs a character past the
 * end of an unfinished stream buffer throws NEED_MORE, which is how a stream learns what is undecided.
 */
import { has } from "./chars.js";

/** Thrown by {@link Src.at} when a rule needs a character the stream has not delivered yet. */
export const NEED_MORE: { readonly needMore: true } = Object.freeze({ needMore: true });

export class Src {
  readonly n: number;
  constructor(
    readonly s: string,
    readonly eof: boolean,
  ) {
    this.n = s.length;
  }
  /** Char code at `i`; -1 past the end of a final text; throws NEED_MORE past the end of a partial one. */
  at(i: number): number {
    if (i < this.n) return this.s.charCodeAt(i);
    if (this.eof) return -1;
    throw NEED_MORE;
  }
  /** Char code before `i` (lookbehind); -1 at the start. */
  before(i: number): number {
    return i > 0 ? this.s.charCodeAt(i - 1) : -1;
  }
  /** Whether `lit` occurs at `i`; compares left to right so a mismatch never waits for input. */
  lit(i: number, lit: string): boolean {
    for (let k = 0; k < lit.length; k++) if (this.at(i + k) !== lit.charCodeAt(k)) return false;
    return true;
  }
  /** End of the run of `flag` characters starting at `i`. */
  run(i: number, flag: number): number {
    let k = i;
    while (has(this.at(k), flag)) k++;
    return k;
  }
}

export function isNeedMore(e: unknown): boolean {
  return e === NEED_MORE;
}

/** Python re.IGNORECASE equivalence for one ASCII letter (adds ı/İ for i, ſ for s, K for k). */
export function pyFoldEq(c: number, lowerLetter: number): boolean {
  if (c < 0) return false;
  if (c < 128) return (c | 0x20) === lowerLetter && lowerLetter >= 97 && lowerLetter <= 122;
  if (lowerLetter === 105) return c === 0x131 || c === 0x130;
  if (lowerLetter === 115) return c === 0x17f;
  if (lowerLetter === 107) return c === 0x212a;
  return false;
}

/** Case-insensitive literal (lowercase `lit`) with Python's folding rules. */
export function litFold(src: Src, i: number, lit: string): boolean {
  for (let k = 0; k < lit.length; k++) {
    const want = lit.charCodeAt(k);
    const c = src.at(i + k);
    if (want >= 97 && want <= 122 ? !pyFoldEq(c, want) : c !== want) return false;
  }
  return true;
}

/** ASCII-only case-insensitive literal (lowercase `lit`), for this port's own rules. */
export function litAsciiCI(src: Src, i: number, lit: string): boolean {
  for (let k = 0; k < lit.length; k++) {
    const want = lit.charCodeAt(k);
    const c = src.at(i + k);
    const folded = c >= 65 && c <= 90 ? c | 0x20 : c;
    if (folded !== want) return false;
  }
  return true;
}

export const ND_RE = /^\p{Nd}$/u;

/** UTF-16 width of a Python `\d` (Unicode decimal digit) at `i`, or 0. */
export function pyDigitAt(src: Src, i: number): number {
  const c = src.at(i);
  if (c < 0) return 0;
  if (c < 128) return c >= 48 && c <= 57 ? 1 : 0;
  if (c >= 0xd800 && c <= 0xdbff) {
    const d = src.at(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return ND_RE.test(String.fromCharCode(c, d)) ? 2 : 0;
    return 0;
  }
  return ND_RE.test(String.fromCharCode(c)) ? 1 : 0;
}
