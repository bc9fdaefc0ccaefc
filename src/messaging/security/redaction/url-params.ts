/** Pass 4: `?token=` parameter values, in literal, HTML-reference and percent spellings. */
import { F_ALNUM, F_DIGIT, F_HEX, has, pyWs } from "./chars.js";
import { ENCODED_REDACTION_MARKER, REDACTION_MARKER } from "./markers.js";
import { isNeedMore, type Src } from "./source.js";

export interface NumRef {
  cp: number;
  end: number;
}

/**
 * An HTML numeric character reference at j (`&#` [x] up to 8 leading zeros, digits,
 * `;` or a non-digit), the bound the reference uses so a stream can hold it.
 */
export function numRef(src: Src, j: number): NumRef | null {
  if (src.at(j) !== 38 || src.at(j + 1) !== 35) return null;
  let k = j + 2;
  const x = src.at(k);
  const hex = x === 120 || x === 88;
  if (hex) k++;
  const flag = hex ? F_HEX : F_DIGIT;
  const runStart = k;
  // At most 8 leading zeros plus 3 digits can spell a reference the rules compare
  // against; a longer run never matches, so stop reading (bounds a stream's holdback).
  while (has(src.at(k), flag)) if (++k - runStart > 11) return null;
  let z = runStart;
  while (z < k && src.s.charCodeAt(z) === 48) z++;
  if (z - runStart > 8 || k === z || k - z > 8) return null;
  const cp = Number.parseInt(src.s.slice(z, k), hex ? 16 : 10);
  const end = src.at(k) === 59 ? k + 1 : k;
  return { cp, end };
}

/** Separator spellings before a parameter name, in the reference's order. */
export function sepEnds(src: Src, i: number): number[] {
  const c = src.at(i);
  if (c === 63) return [i + 1];
  if (c !== 38) return [];
  const ends = [i + 1];
  if (src.lit(i + 1, "amp;")) ends.push(i + 5);
  if (src.lit(i + 1, "AMP;")) ends.push(i + 5);
  if (src.lit(i + 1, "amp") && !has(src.at(i + 4), F_ALNUM)) ends.push(i + 4);
  if (src.lit(i + 1, "AMP") && !has(src.at(i + 4), F_ALNUM)) ends.push(i + 4);
  const r = numRef(src, i);
  if (r !== null && r.cp === 0x26) ends.push(r.end);
  if (src.lit(i + 1, "quest;")) ends.push(i + 7);
  if (r !== null && r.cp === 0x3f) ends.push(r.end);
  return ends;
}

/** `=` or an HTML spelling of it. */
export function eqEnd(src: Src, j: number): number {
  const c = src.at(j);
  if (c === 61) return j + 1;
  if (c !== 38) return -1;
  if (src.lit(j + 1, "equals;")) return j + 8;
  const r = numRef(src, j);
  return r !== null && r.cp === 0x3d ? r.end : -1;
}

/** One character at j spelled literally (ASCII case-insensitive) or as an HTML reference to either case. */
export function htmlOrLiteral(src: Src, j: number, ch: number): number {
  const c = src.at(j);
  const isLetter = (ch | 0x20) >= 97 && (ch | 0x20) <= 122;
  const lower = isLetter ? ch | 0x20 : ch;
  const upper = isLetter ? lower & ~0x20 : ch;
  if (c === lower || c === upper) return j + 1;
  if (c === 38) {
    const r = numRef(src, j);
    if (r !== null && (r.cp === lower || r.cp === upper)) return r.end;
  }
  return -1;
}

/** A `%` at the HTML stage: literal, numeric reference, or `&percnt;`. */
export function percentSignEnd(src: Src, j: number): number {
  const c = src.at(j);
  if (c === 37) return j + 1;
  if (c !== 38) return -1;
  const r = numRef(src, j);
  if (r !== null && r.cp === 37) return r.end;
  return src.lit(j, "&percnt;") ? j + 8 : -1;
}

/** One letter of the `token` name: literal, HTML reference, or a percent escape whose bytes may themselves be HTML references. */
export function tokenLetterEnd(src: Src, j: number, letter: string): number {
  const code = letter.charCodeAt(0);
  const upperCode = code & ~0x20;
  const c = src.at(j);
  if ((c | 0x20) === code && c < 128) return j + 1;
  if (c === 38) {
    const r = numRef(src, j);
    if (r !== null && (r.cp === code || r.cp === upperCode)) return r.end;
  }
  const p = percentSignEnd(src, j);
  if (p < 0) return -1;
  const lowerHex = code.toString(16);
  const upperHex = upperCode.toString(16);
  let h = htmlOrLiteral(src, p, lowerHex.charCodeAt(0));
  if (h < 0) h = htmlOrLiteral(src, p, upperHex.charCodeAt(0));
  if (h < 0) return -1;
  return htmlOrLiteral(src, h, lowerHex.charCodeAt(1));
}

/** Value class of a secret-bearing parameter: stops at whitespace, `&`, quotes, `#` and bytes no URL query can carry. */
export function isParamValueChar(c: number): boolean {
  if (c < 0 || pyWs(c)) return false;
  return !(
    c === 38 ||
    c === 34 ||
    c === 39 ||
    c === 35 ||
    c === 60 ||
    c === 62 ||
    c === 123 ||
    c === 125 ||
    c === 124 ||
    c === 92 ||
    c === 94 ||
    c === 96
  );
}

export interface ParamHit {
  start: number;
  valueStart: number;
  valueEnd: number;
}

/** Value run of a parameter at j; -1 when empty or a `${...}` template placeholder. */
export function paramValueEnd(src: Src, j: number): number {
  let k = j;
  while (isParamValueChar(src.at(k))) k++;
  if (k === j) return -1;
  // A `${NAME}` template is documentation, not a bearer value (the reference leaves it).
  if (k === j + 1 && src.s.charCodeAt(j) === 36 && src.at(k) === 123) return -1;
  return k;
}

/** `?token=` / `&token=` (and HTML/percent spellings) at i. */
export function tokenParamAt(src: Src, i: number): ParamHit | null {
  for (const sep of sepEnds(src, i)) {
    let j = sep;
    for (const letter of "token") {
      j = tokenLetterEnd(src, j, letter);
      if (j < 0) break;
    }
    if (j < 0) continue;
    const v = eqEnd(src, j);
    if (v < 0) continue;
    const e = paramValueEnd(src, v);
    if (e < 0) continue;
    return { start: i, valueStart: v, valueEnd: e };
  }
  return null;
}

/** Whether a redaction marker already stands at j (byte identity, never a shape). */
export function markerAt(src: Src, j: number): boolean {
  return src.lit(j, REDACTION_MARKER) || src.lit(j, ENCODED_REDACTION_MARKER);
}

export const PARAM_START_RE = /[?&]/g;

export function scanParams(
  src: Src,
  start: number,
  out: ParamHit[],
  at: (src: Src, i: number) => ParamHit | null,
): number {
  const re = PARAM_START_RE;
  let i = start;
  try {
    for (;;) {
      re.lastIndex = i;
      if (!re.test(src.s)) return src.n;
      i = re.lastIndex - 1; // just past the one-character match
      const hit = at(src, i);
      if (hit === null) {
        i++;
        continue;
      }
      markerAt(src, hit.valueStart); // decide now: the marker check may read past the value
      out.push(hit);
      i = hit.valueEnd;
    }
  } catch (err) {
    if (isNeedMore(err)) return i;
    throw err;
  }
}
