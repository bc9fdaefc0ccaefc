/** Passes 2 and 3: base64 runs that decode to a credential, and bare AWS-secret-shaped runs. */
import { F_B64, F_HEX, has } from "./chars.js";
import { b64DecodeData, utf8Decode } from "./codecs.js";
import { containsCredentialPattern } from "./provider-tokens.js";
import type { Src } from "./source.js";

export const SECRET_KEY_LEN = 40;

/** Shannon-entropy addend for a count c within a 40-character window. */
export const ENTROPY_TERMS: number[] = [0];
for (let c = 1; c <= SECRET_KEY_LEN; c++)
  ENTROPY_TERMS.push((c / SECRET_KEY_LEN) * Math.log2(c / SECRET_KEY_LEN));

export const WINDOW_COUNTS = new Int32Array(128);
export const WINDOW_ORDER: number[] = [];

export function hasAllThreeClasses(s: string, a: number, b: number): boolean {
  let lower = false;
  let upper = false;
  let digit = false;
  for (let k = a; k < b; k++) {
    const c = s.charCodeAt(k);
    if (c >= 97 && c <= 122) lower = true;
    else if (c >= 65 && c <= 90) upper = true;
    else if (c >= 48 && c <= 57) digit = true;
    if (lower && upper && digit) return true;
  }
  return false;
}

export function allHex(s: string, a: number, b: number): boolean {
  for (let k = a; k < b; k++) if (!has(s.charCodeAt(k), F_HEX)) return false;
  return b > a;
}

/** Encoded text (not a random key): the run decodes to at least 85% printable ASCII. */
export function decodesToPrintable(s: string, a: number, b: number): boolean {
  const raw = b64DecodeData(s, a, b, false);
  if (raw === null || raw.length === 0) return false;
  let printable = 0;
  for (const byte of raw)
    if (byte === 9 || byte === 10 || byte === 13 || (byte >= 0x20 && byte <= 0x7e)) printable++;
  return printable / raw.length >= 0.85;
}

/**
 * A bare 40-character AWS secret access key: no prefix and no label, so it is judged
 * by shape, with every gate biased toward NOT redacting (mixed classes, not hex, no
 * word-like lowercase run, few vowels, high entropy, not decodable to text).
 */
export function looksLikeSecretKey(s: string, w: number): boolean {
  const b = w + SECRET_KEY_LEN;
  if (!hasAllThreeClasses(s, w, b) || allHex(s, w, b)) return false;
  let run = 0;
  let letters = 0;
  let vowels = 0;
  for (let k = w; k < b; k++) {
    const c = s.charCodeAt(k);
    if (c >= 97 && c <= 122) {
      if (++run > 5) return false;
    } else run = 0;
    if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90)) {
      letters++;
      const l = c | 0x20;
      if (l === 97 || l === 101 || l === 105 || l === 111 || l === 117) vowels++;
    }
  }
  if (letters > 0 && vowels / letters > 0.3) return false;
  // Shannon entropy, summed in first-occurrence order like Python's Counter.
  let acc = 0;
  WINDOW_ORDER.length = 0;
  for (let k = w; k < b; k++) {
    const c = s.charCodeAt(k);
    if ((WINDOW_COUNTS[c] as number)++ === 0) WINDOW_ORDER.push(c);
  }
  for (const c of WINDOW_ORDER) {
    acc += ENTROPY_TERMS[WINDOW_COUNTS[c] as number] as number;
    WINDOW_COUNTS[c] = 0;
  }
  if (-acc < 4.3) return false;
  return !decodesToPrintable(s, w, b);
}

/** Whether any 40-character window of the run `s[a:b]` looks like a bare secret key. */
export function containsBareSecret(s: string, a: number, b: number): boolean {
  const len = b - a;
  if (len < SECRET_KEY_LEN) return false;
  const fragment = len > SECRET_KEY_LEN;
  if (fragment && (!hasAllThreeClasses(s, a, b) || allHex(s, a, b))) return false;
  if (decodesToPrintable(s, a, b)) return false;
  for (let w = a; w + SECRET_KEY_LEN <= b; w++) {
    if (!looksLikeSecretKey(s, w)) continue;
    if (fragment) {
      let slashes = 0;
      for (let k = w; k < w + SECRET_KEY_LEN; k++) if (s.charCodeAt(k) === 47) slashes++;
      if (slashes > 3) continue; // a window of a long path, not a key
    }
    return true;
  }
  return false;
}

/** A base64 chunk (40+ data chars, up to two `=`) that decodes (strictly) to text holding a credential. */
export function chunkDecodesToCredential(s: string, a: number, dataEnd: number, end: number): boolean {
  const data = dataEnd - a;
  const pad = end - dataEnd;
  const rem = data % 4;
  if (rem === 1 || (rem === 2 && pad < 2) || (rem === 3 && pad < 1)) return false;
  const raw = b64DecodeData(s, a, dataEnd, false);
  if (raw === null) return false;
  const decoded = utf8Decode(raw, "ignore") ?? "";
  return containsCredentialPattern(decoded);
}

export interface B64Chunk {
  start: number;
  dataEnd: number;
  end: number;
}

/**
 * `[A-Za-z0-9+/]{40,}={0,2}` chunks from `start` (leftmost, greedy: the maximal runs of
 * 40+); returns the first undecided offset. Probes the 40th character ahead first, so
 * ordinary prose is crossed about one word per probe instead of one character.
 */
export function scanB64Chunks(src: Src, start: number, out: B64Chunk[]): number {
  const s = src.s;
  const n = src.n;
  // A trailing run of a partial text may still grow (or reach 40): undecided from its start.
  let tail = n;
  if (!src.eof) while (tail > start && has(s.charCodeAt(tail - 1), F_B64)) tail--;
  let i = start; // always the start of a run, or just after a non-run character
  while (i + SECRET_KEY_LEN <= n) {
    let j = i + SECRET_KEY_LEN - 1;
    while (j >= i && has(s.charCodeAt(j), F_B64)) j--;
    if (j >= i) {
      i = j + 1; // a non-run character inside the window: no 40-run can start before it
      continue;
    }
    let r = i + SECRET_KEY_LEN;
    while (r < n && has(s.charCodeAt(r), F_B64)) r++;
    if (r === n && !src.eof) return i;
    let e = r;
    while (e < r + 2 && e < n && s.charCodeAt(e) === 61) e++;
    if (e === n && e < r + 2 && !src.eof) return i; // one more `=` could still join the chunk
    out.push({ start: i, dataEnd: r, end: e });
    i = e;
  }
  return tail;
}
