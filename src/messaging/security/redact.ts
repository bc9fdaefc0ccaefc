/**
 * Credential and exfiltration-URL redaction for every outbound message.
 *
 * Two stages, always in this order (see {@link redactAll}):
 *
 * 1. Exfiltration: a URL whose path/query CARRIES data (a credential, an encoded
 *    payload, a long query) is replaced by `[REDACTED: suspicious URL to <host>]`.
 *    Markdown link/image targets additionally lose any query string or long path
 *    payload unless their host is allow-listed, because chat apps fetch them
 *    (previews, unfurls, inline images) without a click.
 * 2. Credentials: provider tokens, key/value secrets, PEM blocks, bare AWS-secret
 *    shaped runs, base64-encoded credentials and secret-bearing URL parameters are
 *    replaced by {@link REDACTION_MARKER}.
 *
 * Every rule is a hand-written scanner over char codes (regexes only locate candidate
 * offsets or test backtracking-free shapes): each runs in time linear in its input,
 * and each can answer "undecided: I need more input" when it reaches the end of an
 * unfinished buffer. That second property is what lets {@link StreamRedactor} emit
 * exactly what the batch functions would, chunk by chunk: the batch path is the same
 * engine run with `eof = true`.
 *
 * Indices are UTF-16 offsets internally; lengths reported in warnings are code
 * points, matching the reference implementation this module was ported from.
 */

/** The replacement for a redacted credential. */
export const REDACTION_MARKER = "[REDACTED: credential]";
/** The replacement for a base64 run that decodes to a credential. */
export const ENCODED_REDACTION_MARKER = "[REDACTED: encoded credential]";
/** Prefix of the replacement for a suspicious URL; the host and `]` follow. */
export const EXFILTRATION_MARKER_PREFIX = "[REDACTED: suspicious URL to ";

export interface RedactionResult {
  text: string;
  warnings: string[];
}

export interface ExfiltrationOptions {
  /**
   * Hosts trusted to receive URL data. Exact, case-insensitive; an entry starting
   * with "." also covers every subdomain. A listed host skips only the payload-SIZE
   * heuristics (long query, base64-looking blob) and the markdown-target rule; a
   * literal credential in its URL is still redacted.
   */
  allowedHosts?: readonly string[];
}

/** One decided replacement, in the coordinates of the stage's input text. */
export interface RedactionSpan {
  start: number;
  end: number;
  replacement: string;
}

/**
 * What a stage decided about a text, used by both the batch functions and the
 * stream redactor. `cut` is the offset up to which everything is final: no span,
 * scanner match or pending decision straddles it, and no rule needs text beyond the
 * buffer to settle anything before it. With `eof` it is the text's length.
 */
export interface StagePlan {
  spans: RedactionSpan[];
  warnings: string[];
  cut: number;
}

// ───────────────────────── character classes ─────────────────────────

const F_ALNUM = 1; // [A-Za-z0-9]
const F_URLSAFE = 2; // [A-Za-z0-9_-]
const F_B64 = 4; // [A-Za-z0-9+/]
const F_UPDIG = 8; // [A-Z0-9]
const F_HOST = 16; // [a-zA-Z0-9._-]
const F_LETTER = 32; // [A-Za-z]
const F_DIGIT = 64; // [0-9]
const F_BEARER = 128; // [A-Za-z0-9._~+/-]
const F_SLACK = 256; // [0-9a-zA-Z-]
const F_B64EQ = 512; // [A-Za-z0-9+/=]
const F_HEX = 1024; // [0-9A-Fa-f]
const F_IPV6 = 2048; // [0-9A-Fa-f:.]
const F_WORD = 4096; // [A-Za-z0-9_]
const F_IDENT = 8192; // [A-Za-z0-9_.-]
const F_SCHEME = 16384; // [A-Za-z0-9+.-]

const CLS = new Uint16Array(128);
(() => {
  const add = (chars: string, flag: number): void => {
    for (let k = 0; k < chars.length; k++) {
      const code = chars.charCodeAt(k);
      CLS[code] = (CLS[code] ?? 0) | flag;
    }
  };
  const upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const lower = "abcdefghijklmnopqrstuvwxyz";
  const digits = "0123456789";
  const alnum = upper + lower + digits;
  add(alnum, F_ALNUM | F_URLSAFE | F_B64 | F_HOST | F_BEARER | F_SLACK | F_B64EQ | F_WORD | F_IDENT);
  add(alnum, F_SCHEME);
  add("_-", F_URLSAFE);
  add("+/", F_B64 | F_B64EQ);
  add("=", F_B64EQ);
  add(upper + digits, F_UPDIG);
  add("._-", F_HOST);
  add(upper + lower, F_LETTER);
  add(digits, F_DIGIT);
  add("._~+/-", F_BEARER);
  add("-", F_SLACK);
  add(`${digits}ABCDEFabcdef`, F_HEX | F_IPV6);
  add(":.", F_IPV6);
  add("_", F_WORD | F_IDENT);
  add(".-", F_IDENT);
  add("+.-", F_SCHEME);
})();

function has(c: number, flag: number): boolean {
  return c >= 0 && c < 128 && ((CLS[c] ?? 0) & flag) !== 0;
}

/** Python's `\s` for str patterns (differs from JS `\s`: adds \x1c-\x1f and U+0085, drops U+FEFF). */
function pyWs(c: number): boolean {
  if (c < 0) return false;
  if (c <= 0x20) return c === 0x20 || (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x1f);
  if (c < 0x85) return false;
  return (
    c === 0x85 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

const ND_RE = /^\p{Nd}$/u;

/** UTF-16 width of a Python `\d` (Unicode decimal digit) at `i`, or 0. */
function pyDigitAt(src: Src, i: number): number {
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

/** Code points in `s[a:b]`: the reference reports lengths in Python `str` units. */
export function codePointLength(s: string, a = 0, b = s.length): number {
  let n = 0;
  for (let i = a; i < b; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < b) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

// ───────────────────────── input with an end that may not be final ─────────────────────────

/** Thrown by {@link Src.at} when a rule needs a character the stream has not delivered yet. */
const NEED_MORE: { readonly needMore: true } = Object.freeze({ needMore: true });

class Src {
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

function isNeedMore(e: unknown): boolean {
  return e === NEED_MORE;
}

/** Python re.IGNORECASE equivalence for one ASCII letter (adds ı/İ for i, ſ for s, K for k). */
function pyFoldEq(c: number, lowerLetter: number): boolean {
  if (c < 0) return false;
  if (c < 128) return (c | 0x20) === lowerLetter && lowerLetter >= 97 && lowerLetter <= 122;
  if (lowerLetter === 105) return c === 0x131 || c === 0x130;
  if (lowerLetter === 115) return c === 0x17f;
  if (lowerLetter === 107) return c === 0x212a;
  return false;
}

/** Case-insensitive literal (lowercase `lit`) with Python's folding rules. */
function litFold(src: Src, i: number, lit: string): boolean {
  for (let k = 0; k < lit.length; k++) {
    const want = lit.charCodeAt(k);
    const c = src.at(i + k);
    if (want >= 97 && want <= 122 ? !pyFoldEq(c, want) : c !== want) return false;
  }
  return true;
}

/** ASCII-only case-insensitive literal (lowercase `lit`), for this port's own rules. */
function litAsciiCI(src: Src, i: number, lit: string): boolean {
  for (let k = 0; k < lit.length; k++) {
    const want = lit.charCodeAt(k);
    const c = src.at(i + k);
    const folded = c >= 65 && c <= 90 ? c | 0x20 : c;
    if (folded !== want) return false;
  }
  return true;
}

// ───────────────────────── spans ─────────────────────────

interface Range {
  start: number;
  end: number;
}

function byStartThenEnd(a: Range, b: Range): number {
  return a.start - b.start || a.end - b.end;
}

function sortSpans(spans: RedactionSpan[]): RedactionSpan[] {
  return spans.sort(byStartThenEnd);
}

/** The spans that end at or before `cut` (all of them when nothing is pending). */
function spansBefore(spans: RedactionSpan[], cut: number): RedactionSpan[] {
  const out: RedactionSpan[] = [];
  for (const sp of spans) if (sp.end <= cut) out.push(sp);
  return out;
}

/** Parts of [start, end) that no span in the sorted, disjoint `taken` covers. */
function uncovered(start: number, end: number, taken: readonly RedactionSpan[]): Range[] {
  const gaps: Range[] = [];
  let lo = 0;
  let hi = taken.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((taken[mid] as RedactionSpan).end <= start) lo = mid + 1;
    else hi = mid;
  }
  let cursor = start;
  for (let k = lo; k < taken.length; k++) {
    const t = taken[k] as RedactionSpan;
    if (t.start >= end) break;
    if (t.start > cursor) gaps.push({ start: cursor, end: t.start });
    cursor = Math.max(cursor, t.end);
  }
  if (cursor < end) gaps.push({ start: cursor, end });
  return gaps;
}

/** Rewrites `text[from:to]` with the spans inside it (sorted, disjoint). */
export function spliceSpans(
  text: string,
  spans: readonly RedactionSpan[],
  from = 0,
  to = text.length,
): string {
  let out = "";
  let cursor = from;
  for (const sp of spans) {
    if (sp.start < from || sp.end > to) continue;
    out += text.slice(cursor, sp.start) + sp.replacement;
    cursor = sp.end;
  }
  return out + text.slice(cursor, to);
}

/**
 * The streaming cut: the earliest undecided offset, moved left until it no longer
 * sits strictly inside any decided region (a span, or a scanner match whose extent
 * would be read differently if scanning restarted inside it).
 */
function settleCut(cut: number, regions: Range[]): number {
  if (regions.length === 0) return cut;
  regions.sort(byStartThenEnd);
  let curStart = -1;
  let curEnd = -1;
  let result = cut;
  for (const r of regions) {
    if (r.end <= r.start) continue;
    if (r.start < curEnd) {
      curEnd = Math.max(curEnd, r.end);
      continue;
    }
    if (curStart < cut && cut < curEnd) result = Math.min(result, curStart);
    curStart = r.start;
    curEnd = r.end;
  }
  if (curStart < cut && cut < curEnd) result = Math.min(result, curStart);
  return result;
}

/** Never leave a surrogate pair split across two emitted pieces. */
function notInsidePair(s: string, cut: number): number {
  if (cut <= 0 || cut >= s.length) {
    if (cut === s.length && cut > 0) {
      const c = s.charCodeAt(cut - 1);
      if (c >= 0xd800 && c <= 0xdbff) return cut - 1;
    }
    return cut;
  }
  const prev = s.charCodeAt(cut - 1);
  const next = s.charCodeAt(cut);
  return prev >= 0xd800 && prev <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? cut - 1 : cut;
}

// ───────────────────────── byte codecs ─────────────────────────

const B64_VALUE = new Int8Array(128).fill(-1);
(() => {
  const std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (let k = 0; k < 64; k++) B64_VALUE[std.charCodeAt(k)] = k;
})();

/** Decodes base64 data characters (no padding) like CPython's non-strict decoder; null on a 4n+1 length. */
function b64DecodeData(s: string, a: number, b: number, urlsafe: boolean): Uint8Array | null {
  const len = b - a;
  if (len % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((len * 3) / 4));
  let acc = 0;
  let bits = 0;
  let o = 0;
  for (let i = a; i < b; i++) {
    let c = s.charCodeAt(i);
    if (urlsafe) {
      if (c === 45) c = 43;
      else if (c === 95) c = 47;
    }
    const v = c < 128 ? (B64_VALUE[c] ?? -1) : -1;
    if (v < 0) return null;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
      acc &= (1 << bits) - 1;
    }
  }
  return out.subarray(0, o);
}

type Utf8Errors = "strict-surrogatepass" | "replace" | "ignore";

/**
 * UTF-8 decoding with CPython's error handlers: invalid input is consumed one
 * "maximal subpart" at a time (Unicode §3.9), which is also what CPython does.
 * Returns null for a strict failure.
 */
function utf8Decode(bytes: Uint8Array, errors: Utf8Errors): string | null {
  let out = "";
  let i = 0;
  const n = bytes.length;
  const strict = errors === "strict-surrogatepass";
  const mark = errors === "replace" ? "\ufffd" : "";
  while (i < n) {
    const b0 = bytes[i] as number;
    if (b0 < 0x80) {
      out += String.fromCharCode(b0);
      i++;
      continue;
    }
    let need = 0;
    let lo = 0x80;
    let hi = 0xbf;
    let cp = 0;
    if (b0 >= 0xc2 && b0 <= 0xdf) {
      need = 1;
      cp = b0 & 0x1f;
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
      need = 2;
      cp = b0 & 0x0f;
      if (b0 === 0xe0) lo = 0xa0;
      else if (b0 === 0xed && errors !== "strict-surrogatepass") hi = 0x9f;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      need = 3;
      cp = b0 & 0x07;
      if (b0 === 0xf0) lo = 0x90;
      else if (b0 === 0xf4) hi = 0x8f;
    } else {
      if (strict) return null;
      out += mark;
      i++;
      continue;
    }
    let j = i + 1;
    let ok = true;
    for (let k = 0; k < need; k++, j++) {
      const bk = j < n ? (bytes[j] as number) : -1;
      const l = k === 0 ? lo : 0x80;
      const h = k === 0 ? hi : 0xbf;
      if (bk < l || bk > h) {
        ok = false;
        break;
      }
      cp = (cp << 6) | (bk & 0x3f);
    }
    if (!ok) {
      if (strict) return null;
      out += mark;
      i = j;
      continue;
    }
    out += String.fromCodePoint(cp);
    i = j;
  }
  return out;
}

/** Whether a JWT header segment base64url-decodes to a JSON object (Python json.loads semantics). */
function isJsonObjectSegment(seg: string): boolean {
  const bytes = b64DecodeData(seg, 0, seg.length, true);
  if (bytes === null) return false;
  let text = utf8Decode(bytes, "strict-surrogatepass");
  if (text === null) return false;
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // json.loads(bytes) decodes as utf-8-sig
  // An object starts with `{` and ends with `}` (JSON whitespace aside): reject the
  // common garbage without paying for a parser exception.
  if (!looksLikeJsonObjectText(text)) return false;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const relaxed = replacePythonJsonConstants(text);
    if (relaxed === text) return false;
    try {
      value = JSON.parse(relaxed);
    } catch {
      return false;
    }
  }
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isJsonWs(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

function looksLikeJsonObjectText(text: string): boolean {
  let a = 0;
  let b = text.length;
  while (a < b && isJsonWs(text.charCodeAt(a))) a++;
  while (b > a && isJsonWs(text.charCodeAt(b - 1))) b--;
  return b - a >= 2 && text.charCodeAt(a) === 123 && text.charCodeAt(b - 1) === 125;
}

/** Python's json accepts NaN/Infinity/-Infinity; map them to 0 outside strings so JSON.parse agrees. */
function replacePythonJsonConstants(text: string): string {
  let out = "";
  let inStr = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (inStr) {
      out += c;
      if (c === "\\") {
        out += text[i + 1] ?? "";
        i++;
      } else if (c === '"') inStr = false;
      continue;
    }
    if (c === '"') {
      inStr = true;
      out += c;
      continue;
    }
    const rest = text.startsWith("-Infinity", i) ? 9 : text.startsWith("Infinity", i) ? 8 : 0;
    if (rest > 0) {
      out += "0";
      i += rest - 1;
    } else if (text.startsWith("NaN", i)) {
      out += "0";
      i += 2;
    } else out += c;
  }
  return out;
}

/** Python `urllib.parse.unquote_plus` (utf-8, errors="replace"). */
function unquotePlus(s: string): string {
  return unquote(s.replace(/\+/g, " "));
}

/** Python `urllib.parse.unquote`: only ASCII runs are percent-decoded; bytes decode as UTF-8 with replacement. */
function unquote(s: string): string {
  if (!s.includes("%")) return s;
  let out = "";
  let i = 0;
  const n = s.length;
  while (i < n) {
    if (s.charCodeAt(i) >= 0x80) {
      let j = i;
      while (j < n && s.charCodeAt(j) >= 0x80) j++;
      out += s.slice(i, j);
      i = j;
      continue;
    }
    let j = i;
    while (j < n && s.charCodeAt(j) < 0x80) j++;
    const bytes: number[] = [];
    for (let k = i; k < j; k++) {
      const c = s.charCodeAt(k);
      if (c === 37 && k + 2 < j && has(s.charCodeAt(k + 1), F_HEX) && has(s.charCodeAt(k + 2), F_HEX)) {
        bytes.push(Number.parseInt(s.slice(k + 1, k + 3), 16));
        k += 2;
      } else bytes.push(c);
    }
    out += utf8Decode(Uint8Array.from(bytes), "replace") ?? "";
    i = j;
  }
  return out;
}

// ───────────────────────── pass 1: the reference credential alternation ─────────────────────────

/** Per-scan memo so runs shared by many candidate starts are read once (keeps every scan linear). */
class Pass1Memo {
  telegramFailUntil = -1;
  urlsafeFrom = -1;
  urlsafeEnd = -1;
  segFrom = -1;
  segEnd = -1;
  segCount = 0;
}

/** AWS access key id: long-term (AKIA) and STS (ASIA), 16 uppercase alphanumerics. */
function mAwsKeyId(src: Src, i: number): number {
  if (src.at(i) !== 65) return -1;
  const c1 = src.at(i + 1);
  if ((c1 !== 75 && c1 !== 83) || src.at(i + 2) !== 73 || src.at(i + 3) !== 65) return -1;
  for (let k = 4; k < 20; k++) if (!has(src.at(i + k), F_UPDIG)) return -1;
  return i + 20;
}

/** AWS labelled values: `key["']? \s* [:=] \s* ["']? value`, value stops at JSON delimiters. */
function mAwsLabel(src: Src, i: number, key: string): number {
  if (!src.lit(i, key)) return -1;
  let j = i + key.length;
  let c = src.at(j);
  if (c === 34 || c === 39) c = src.at(++j);
  while (pyWs(c)) c = src.at(++j);
  if (c !== 58 && c !== 61) return -1;
  c = src.at(++j);
  while (pyWs(c)) c = src.at(++j);
  if (c === 34 || c === 39) c = src.at(++j);
  const v = j;
  while (c >= 0 && !pyWs(c) && c !== 34 && c !== 39 && c !== 44 && c !== 125) c = src.at(++j);
  return j > v ? j : -1;
}

/** `-----END [A-Z ]*PRIVATE KEY-----` at q: end offset or -1. */
function pemMarkerAt(src: Src, q: number, word: string): number {
  if (!src.lit(q, word)) return -1;
  let k = q + word.length;
  let c = src.at(k);
  while ((c >= 65 && c <= 90) || c === 32) c = src.at(++k);
  const runStart = q + word.length;
  if (k - runStart < 11 || src.s.slice(k - 11, k) !== "PRIVATE KEY") return -1;
  return src.lit(k, "-----") ? k + 5 : -1;
}

/**
 * PEM private key: the whole block to the first END marker; with no END marker, the
 * header plus the base64 / Proc-Type / DEK-Info lines under it (one blank line may
 * be crossed when base64 follows). A header alone must not swallow trailing prose.
 */
function mPem(src: Src, i: number, endMemo: { from: number; at: number; end: number }): number {
  const h = pemMarkerAt(src, i, "-----BEGIN ");
  if (h < 0) return -1;
  // Full block: first END marker at or after the header (memoised: BEGIN headers arrive in order).
  let found = -1;
  if (endMemo.from >= 0 && h >= endMemo.from && (endMemo.at === -1 || endMemo.at >= h)) {
    found = endMemo.at === -1 ? -1 : endMemo.end;
  } else {
    let q = src.s.indexOf("-----END ", h);
    let at = -1;
    while (q >= 0) {
      const e = pemMarkerAt(src, q, "-----END ");
      if (e >= 0) {
        at = q;
        found = e;
        break;
      }
      q = src.s.indexOf("-----END ", q + 1);
    }
    if (at === -1 && !src.eof) throw NEED_MORE; // an END marker may still arrive
    endMemo.from = h;
    endMemo.at = at;
    endMemo.end = found;
  }
  if (found >= 0) return found;
  // Truncated block.
  let j = h;
  for (;;) {
    let c = src.at(j);
    let p: number;
    if (c === 13 && src.at(j + 1) === 10) p = j + 2;
    else if (c === 10) p = j + 1;
    else break;
    if (src.lit(p, "Proc-Type:") || src.lit(p, "DEK-Info:")) {
      let k = p;
      c = src.at(k);
      while (c >= 0 && c !== 10) c = src.at(++k);
      j = k;
      continue;
    }
    const r = src.run(p, F_B64EQ);
    if (r > p) {
      const t = src.at(r);
      if (t === 10 || t === -1 || (t === 13 && src.at(r + 1) === 10)) {
        j = r;
        continue;
      }
    }
    c = src.at(p);
    let p2 = -1;
    if (c === 13 && src.at(p + 1) === 10) p2 = p + 2;
    else if (c === 10) p2 = p + 1;
    if (p2 >= 0 && has(src.at(p2), F_B64EQ)) {
      j = p;
      continue;
    }
    break;
  }
  return j;
}

/** Slack token (bot/user/app-level/legacy). */
function mSlack(src: Src, i: number): number {
  if (!src.lit(i, "xox")) return -1;
  const c = src.at(i + 3);
  if ((c !== 98 && c !== 112 && c !== 97 && c !== 115) || src.at(i + 4) !== 45) return -1;
  const e = src.run(i + 5, F_SLACK);
  return e - (i + 5) >= 10 ? e : -1;
}

/** Telegram bot token `<bot id>:<secret>`; every start inside a failing digit run fails the same way. */
function mTelegram(src: Src, i: number, memo: Pass1Memo): number {
  if (i < memo.telegramFailUntil) return -1;
  const d = src.run(i, F_DIGIT);
  if (d - i >= 6 && src.at(d) === 58) {
    const e = src.run(d + 1, F_URLSAFE);
    if (e - (d + 1) >= 30) return e;
  }
  memo.telegramFailUntil = d;
  return -1;
}

/** Discord bot token: base64 snowflake, 6-char timestamp, HMAC; bounded on both sides. */
function mDiscord(src: Src, i: number): number {
  if (has(src.before(i), F_URLSAFE)) return -1;
  let k = i + 1;
  while (k - (i + 1) <= 30 && has(src.at(k), F_URLSAFE)) k++;
  const l1 = k - (i + 1);
  if (l1 < 22 || l1 > 30 || src.at(k) !== 46) return -1;
  for (let t = 1; t <= 6; t++) if (!has(src.at(k + t), F_URLSAFE)) return -1;
  if (src.at(k + 7) !== 46) return -1;
  const e = src.run(k + 8, F_URLSAFE);
  return e - (k + 8) >= 25 ? e : -1;
}

/** `prefix` then a run of `flag` characters of at least `min` (and at most `max`) length. */
function mPrefixed(src: Src, i: number, prefix: string, flag: number, min: number, max = 0): number {
  if (!src.lit(i, prefix)) return -1;
  const b = i + prefix.length;
  let k = b;
  while ((max === 0 || k - b < max) && has(src.at(k), flag)) k++;
  return k - b >= min ? k : -1;
}

const URI_SCHEMES: Record<number, readonly string[]> = {
  112: ["postgresql", "postgres"],
  109: ["mysql", "mongodb+srv", "mongodb"],
  114: ["rediss", "redis"],
  97: ["amqps", "amqp"],
  104: ["https", "http"],
  102: ["ftps", "ftp"],
};

/** `://user:password@` after a scheme ending at j: the password may itself hold `@`, so the LAST one ends it. */
function userinfoEnd(src: Src, j: number): number {
  if (!src.lit(j, "://")) return -1;
  let k = j + 3;
  let c = src.at(k);
  while (c >= 0 && !pyWs(c) && c !== 58 && c !== 47 && c !== 64) c = src.at(++k);
  if (c !== 58) return -1;
  const pw = k + 1;
  let lastAt = -1;
  k = pw;
  c = src.at(k);
  while (c >= 0 && !pyWs(c) && c !== 47) {
    if (c === 64 && k > pw) lastAt = k;
    c = src.at(++k);
  }
  return lastAt >= 0 ? lastAt + 1 : -1;
}

/** Connection / fetch URI with embedded credentials: redacts `scheme://user:pass@`. */
function mUriUserinfo(src: Src, i: number): number {
  const schemes = URI_SCHEMES[src.s.charCodeAt(i)];
  if (schemes === undefined) return -1;
  for (const scheme of schemes) {
    if (!src.lit(i, scheme)) continue;
    const e = userinfoEnd(src, i + scheme.length);
    if (e >= 0) return e;
  }
  return -1;
}

/** End of the [A-Za-z0-9_-] run containing offset j (memoised per run). */
function urlsafeRunEnd(src: Src, j: number, memo: Pass1Memo): number {
  if (j > memo.urlsafeFrom && j < memo.urlsafeEnd) return memo.urlsafeEnd;
  const e = src.run(j, F_URLSAFE);
  memo.urlsafeFrom = j;
  memo.urlsafeEnd = e;
  return e;
}

/** JWS/JWE: `eyJ` header plus 2-4 dot segments (a segment may be empty: JWE with `dir`). */
function mJwt(src: Src, i: number, memo: Pass1Memo): number {
  if (!src.lit(i, "eyJ")) return -1;
  const h = urlsafeRunEnd(src, i + 3, memo);
  if (h === i + 3) return -1;
  if (memo.segFrom !== h) {
    let p = h;
    let k = 0;
    while (k < 4 && src.at(p) === 46) {
      p = src.run(p + 1, F_URLSAFE);
      k++;
    }
    memo.segFrom = h;
    memo.segEnd = p;
    memo.segCount = k;
  }
  return memo.segCount >= 2 ? memo.segEnd : -1;
}

/** The two-segment dashboard link token: `eyJ` + 96+ chars, `.`, an exactly 43-char HMAC. */
function mLinkToken(src: Src, i: number, memo: Pass1Memo): number {
  if (!src.lit(i, "eyJ")) return -1;
  const b = src.before(i);
  if (has(b, F_URLSAFE) || b === 46) return -1;
  const h = urlsafeRunEnd(src, i + 3, memo);
  if (h - (i + 3) < 96 || src.at(h) !== 46) return -1;
  let k = h + 1;
  while (k - (h + 1) <= 43 && has(src.at(k), F_URLSAFE)) k++;
  return k - (h + 1) === 43 ? k : -1;
}

/** HTTP/JSON `Authorization: Bearer <token>` (header and scheme are case-insensitive). */
function mBearerHeader(src: Src, i: number): number {
  if (!litFold(src, i, "authorization")) return -1;
  let j = i + 13;
  let c = src.at(j);
  if (c === 34 || c === 39) c = src.at(++j);
  while (pyWs(c)) c = src.at(++j);
  if (c !== 58 && c !== 61) return -1;
  c = src.at(++j);
  while (pyWs(c)) c = src.at(++j);
  if (c === 34 || c === 39) c = src.at(++j);
  if (!litFold(src, j, "bearer")) return -1;
  j += 6;
  c = src.at(j);
  if (!pyWs(c)) return -1;
  while (pyWs(c)) c = src.at(++j);
  const t = j;
  while (has(c, F_BEARER)) c = src.at(++j);
  if (j === t) return -1;
  while (c === 61) c = src.at(++j);
  return j;
}

/**
 * Pass 1 at one offset: the reference alternation, branches tried in the reference's
 * order among those that can start with this character. Returns the end or -1.
 */
function pass1At(
  src: Src,
  i: number,
  memo: Pass1Memo,
  pemMemo: { from: number; at: number; end: number },
): number {
  const c = src.s.charCodeAt(i);
  let e = -1;
  switch (c) {
    case 65: // A
      e = mAwsKeyId(src, i);
      if (e < 0) e = mAwsLabel(src, i, "AccessKeyId");
      if (e < 0) e = mBearerHeader(src, i);
      return e;
    case 97: // a
      e = mAwsLabel(src, i, "aws_secret_access_key");
      if (e < 0) e = mAwsLabel(src, i, "aws_session_token");
      if (e < 0) e = mAwsLabel(src, i, "aws_access_key_id");
      if (e < 0) e = mUriUserinfo(src, i);
      if (e < 0) e = mBearerHeader(src, i);
      return e;
    case 83: // S
      e = mAwsLabel(src, i, "SecretAccessKey");
      if (e < 0) e = mAwsLabel(src, i, "SessionToken");
      if (e < 0) e = mSgTwoPart(src, i);
      return e;
    case 45: // -
      return mPem(src, i, pemMemo);
    case 120: // x
      return mSlack(src, i);
    case 77:
    case 78:
    case 79: // M N O
      return mDiscord(src, i);
    case 103: // g
      e = mGithubClassic(src, i);
      if (e < 0) e = mPrefixed(src, i, "github_pat_", F_WORD, 40);
      if (e < 0) e = mPrefixed(src, i, "glpat-", F_URLSAFE, 16);
      return e;
    case 115: // s
      e = mStripe(src, i);
      if (e < 0) e = mPrefixed(src, i, "sk-proj-", F_URLSAFE, 16);
      if (e < 0) e = mPrefixed(src, i, "sk-ant-", F_URLSAFE, 16);
      return e;
    case 114: // r
      e = mStripe(src, i);
      if (e < 0) e = mUriUserinfo(src, i);
      return e;
    case 110: // n
      return mPrefixed(src, i, "npm_", F_ALNUM, 24);
    case 112: // p
      e = mPrefixed(src, i, "pypi-", F_URLSAFE, 16);
      if (e < 0) e = mUriUserinfo(src, i);
      return e;
    case 100: // d
      return mDigitalOcean(src, i);
    case 71: // G
      return mPrefixed(src, i, "GOCSPX-", F_URLSAFE, 20);
    case 109: // m
    case 104: // h
    case 102: // f
      return mUriUserinfo(src, i);
    case 101: // e
      e = mJwt(src, i, memo);
      if (e < 0) e = mLinkToken(src, i, memo);
      return e;
    default:
      if (c >= 48 && c <= 57) return mTelegram(src, i, memo);
      return -1;
  }
}

/** GitHub classic tokens: ghp_/gho_/ghs_/ghu_/ghr_ + 30..255 alphanumerics. */
function mGithubClassic(src: Src, i: number): number {
  if (!src.lit(i, "gh")) return -1;
  const c = src.at(i + 2);
  if ((c !== 111 && c !== 112 && c !== 115 && c !== 117 && c !== 114) || src.at(i + 3) !== 95) return -1;
  let k = i + 4;
  while (k - (i + 4) < 255 && has(src.at(k), F_ALNUM)) k++;
  return k - (i + 4) >= 30 ? k : -1;
}

/** Stripe secret / restricted keys, live or test. */
function mStripe(src: Src, i: number): number {
  if (src.at(i + 1) !== 107 || src.at(i + 2) !== 95) return -1;
  if (!src.lit(i + 3, "live_") && !src.lit(i + 3, "test_")) return -1;
  const e = src.run(i + 8, F_ALNUM);
  return e - (i + 8) >= 16 ? e : -1;
}

/** SendGrid `SG.<16+>.<16+>`. */
function mSgTwoPart(src: Src, i: number): number {
  if (!src.lit(i, "SG.")) return -1;
  const a = src.run(i + 3, F_URLSAFE);
  if (a - (i + 3) < 16 || src.at(a) !== 46) return -1;
  const b = src.run(a + 1, F_URLSAFE);
  return b - (a + 1) >= 16 ? b : -1;
}

/** DigitalOcean personal/OAuth/refresh tokens. */
function mDigitalOcean(src: Src, i: number): number {
  if (src.at(i + 1) !== 111) return -1;
  const c = src.at(i + 2);
  if (c !== 111 && c !== 112 && c !== 114) return -1;
  if (!src.lit(i + 3, "_v1_")) return -1;
  const e = src.run(i + 7, F_ALNUM);
  return e - (i + 7) >= 40 ? e : -1;
}

/**
 * Offsets where some pass-1 branch can begin: every branch's first two characters
 * are fixed ASCII (or, for Discord and Telegram, a class), so any other offset is
 * skipped by the regex engine without trying branches. Zero-width, so overlapping
 * candidates (`------BEGIN`) are all visited.
 */
const PASS1_CANDIDATE_RE =
  /(?=A[KScuU]|a[wmuU]|S[eG]|--|xo|[MNO][A-Za-z0-9_-]|g[hil]|sk|r[ke]|np|p[yo]|do|GO|m[yo]|ht|ft|ey|[0-9]{2})/g;

/**
 * Scans pass 1 from `start`. Collects hits (unless `hits` is null, which only asks
 * whether one exists) and returns the first undecided offset (the text length when
 * all is decided). A JWS/JWE-shaped hit whose header is not a JSON object is not a
 * credential (`eyJnotjson.abc.def`); the scan then retries at the next offset.
 */
function scanPass1(src: Src, start: number, validateJwt: boolean, hits: RedactionSpan[] | null): number {
  const memo = new Pass1Memo();
  const pemMemo = { from: -1, at: -1, end: -1 };
  const s = src.s;
  const n = src.n;
  const re = PASS1_CANDIDATE_RE;
  let i = start;
  try {
    while (i < n) {
      re.lastIndex = i;
      const m = re.exec(s);
      if (m === null) {
        // Only the last character can lack the second character the filter needs.
        if (src.eof || i > n - 1) break;
        i = n - 1;
      } else i = m.index;
      let e = pass1At(src, i, memo, pemMemo);
      if (e >= 0 && validateJwt && s.charCodeAt(i) === 101 && s.startsWith("eyJ", i)) {
        let dot = i;
        while (dot < e && s.charCodeAt(dot) !== 46) dot++;
        const header = s.slice(i, dot);
        // A header holding a second `eyJ` stays a credential: rejecting it would rescan
        // the same run once per `eyJ` (quadratic), and a real token never looks like that.
        if (countDots(s, i, e) >= 2 && header.indexOf("eyJ", 1) === -1 && !isJsonObjectSegment(header)) {
          e = mLinkToken(src, i, memo);
        }
      }
      if (e >= 0) {
        if (hits === null) return -2;
        hits.push({ start: i, end: e, replacement: REDACTION_MARKER });
        i = e;
      } else i++;
    }
    return n;
  } catch (err) {
    if (isNeedMore(err)) return i;
    throw err;
  }
}

function countDots(s: string, a: number, b: number): number {
  let n = 0;
  for (let k = a; k < b; k++) if (s.charCodeAt(k) === 46) n++;
  return n;
}

/** Whether any pass-1 credential pattern occurs in a complete text (no JWT-header check: wider). */
function containsCredentialPattern(text: string): boolean {
  return scanPass1(new Src(text, true), 0, false, null) === -2;
}

// ───────────────────────── passes 2 and 3: base64 runs ─────────────────────────

const SECRET_KEY_LEN = 40;

/** Shannon-entropy addend for a count c within a 40-character window. */
const ENTROPY_TERMS: number[] = [0];
for (let c = 1; c <= SECRET_KEY_LEN; c++)
  ENTROPY_TERMS.push((c / SECRET_KEY_LEN) * Math.log2(c / SECRET_KEY_LEN));

const WINDOW_COUNTS = new Int32Array(128);
const WINDOW_ORDER: number[] = [];

function hasAllThreeClasses(s: string, a: number, b: number): boolean {
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

function allHex(s: string, a: number, b: number): boolean {
  for (let k = a; k < b; k++) if (!has(s.charCodeAt(k), F_HEX)) return false;
  return b > a;
}

/** Encoded text (not a random key): the run decodes to at least 85% printable ASCII. */
function decodesToPrintable(s: string, a: number, b: number): boolean {
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
function looksLikeSecretKey(s: string, w: number): boolean {
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
function containsBareSecret(s: string, a: number, b: number): boolean {
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
function chunkDecodesToCredential(s: string, a: number, dataEnd: number, end: number): boolean {
  const data = dataEnd - a;
  const pad = end - dataEnd;
  const rem = data % 4;
  if (rem === 1 || (rem === 2 && pad < 2) || (rem === 3 && pad < 1)) return false;
  const raw = b64DecodeData(s, a, dataEnd, false);
  if (raw === null) return false;
  const decoded = utf8Decode(raw, "ignore") ?? "";
  return containsCredentialPattern(decoded);
}

interface B64Chunk {
  start: number;
  dataEnd: number;
  end: number;
}

/**
 * `[A-Za-z0-9+/]{40,}={0,2}` chunks from `start` (leftmost, greedy: the maximal runs of
 * 40+); returns the first undecided offset. Probes the 40th character ahead first, so
 * ordinary prose is crossed about one word per probe instead of one character.
 */
function scanB64Chunks(src: Src, start: number, out: B64Chunk[]): number {
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

// ───────────────────────── pass 4: `?token=` parameter values ─────────────────────────

interface NumRef {
  cp: number;
  end: number;
}

/**
 * An HTML numeric character reference at j (`&#` [x] up to 8 leading zeros, digits,
 * `;` or a non-digit), the bound the reference uses so a stream can hold it.
 */
function numRef(src: Src, j: number): NumRef | null {
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
function sepEnds(src: Src, i: number): number[] {
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
function eqEnd(src: Src, j: number): number {
  const c = src.at(j);
  if (c === 61) return j + 1;
  if (c !== 38) return -1;
  if (src.lit(j + 1, "equals;")) return j + 8;
  const r = numRef(src, j);
  return r !== null && r.cp === 0x3d ? r.end : -1;
}

/** One character at j spelled literally (ASCII case-insensitive) or as an HTML reference to either case. */
function htmlOrLiteral(src: Src, j: number, ch: number): number {
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
function percentSignEnd(src: Src, j: number): number {
  const c = src.at(j);
  if (c === 37) return j + 1;
  if (c !== 38) return -1;
  const r = numRef(src, j);
  if (r !== null && r.cp === 37) return r.end;
  return src.lit(j, "&percnt;") ? j + 8 : -1;
}

/** One letter of the `token` name: literal, HTML reference, or a percent escape whose bytes may themselves be HTML references. */
function tokenLetterEnd(src: Src, j: number, letter: string): number {
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
function isParamValueChar(c: number): boolean {
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

interface ParamHit {
  start: number;
  valueStart: number;
  valueEnd: number;
}

/** Value run of a parameter at j; -1 when empty or a `${...}` template placeholder. */
function paramValueEnd(src: Src, j: number): number {
  let k = j;
  while (isParamValueChar(src.at(k))) k++;
  if (k === j) return -1;
  // A `${NAME}` template is documentation, not a bearer value (the reference leaves it).
  if (k === j + 1 && src.s.charCodeAt(j) === 36 && src.at(k) === 123) return -1;
  return k;
}

/** `?token=` / `&token=` (and HTML/percent spellings) at i. */
function tokenParamAt(src: Src, i: number): ParamHit | null {
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
function markerAt(src: Src, j: number): boolean {
  return src.lit(j, REDACTION_MARKER) || src.lit(j, ENCODED_REDACTION_MARKER);
}

const PARAM_START_RE = /[?&]/g;

function scanParams(
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
      const m = re.exec(src.s);
      if (m === null) return src.n;
      i = m.index;
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

// ───────────────────────── pass 5: this port's wider coverage ─────────────────────────

interface ExtraHit {
  start: number; // scanner match start (for streaming regions)
  end: number; // scanner match end
  redactStart: number;
  redactEnd: number;
  rule: string;
}

/** Parameter names that carry a secret in a URL query (beyond the reference's `token`). */
const SECRET_PARAM_NAMES = [
  "access_token",
  "refresh_token",
  "id_token",
  "auth_token",
  "session_token",
  "private_token",
  "client_secret",
  "api_key",
  "api-key",
  "apikey",
  "x-api-key",
  "x-amz-signature",
  "x-amz-security-token",
  "signature",
  "secret",
  "password",
  "passwd",
  "sig",
];

/** Key names whose value is a secret in `key=value` / `key: value` / JSON. Matched as identifier suffixes. */
const SECRET_KEY_SUFFIXES = [
  "password",
  "passwd",
  "passphrase",
  "secret",
  "secret_key",
  "secretkey",
  "api_key",
  "apikey",
  "api-key",
  "access_key",
  "accesskey",
  "private_key",
  "privatekey",
  "token",
];

/** Whether the identifier `s[a:b]` ends (ASCII case-insensitively) with a secret key name. */
function endsWithSecretKeyName(s: string, a: number, b: number): boolean {
  const last = s.charCodeAt(b - 1) | 0x20;
  // Every suffix ends in d, e, t, y or n: a cheap reject for most words.
  if (last !== 100 && last !== 101 && last !== 116 && last !== 121 && last !== 110) return false;
  outer: for (const suffix of SECRET_KEY_SUFFIXES) {
    const len = suffix.length;
    if (b - a < len) continue;
    for (let k = 0; k < len; k++) {
      const c = s.charCodeAt(b - len + k);
      const folded = c >= 65 && c <= 90 ? c | 0x20 : c;
      if (folded !== suffix.charCodeAt(k)) continue outer;
    }
    return true;
  }
  return false;
}

function containsDigit(s: string, a: number, b: number): boolean {
  for (let k = a; k < b; k++) {
    const c = s.charCodeAt(k);
    if (c >= 48 && c <= 57) return true;
  }
  return false;
}

function containsUpper(s: string, a: number, b: number): boolean {
  for (let k = a; k < b; k++) {
    const c = s.charCodeAt(k);
    if (c >= 65 && c <= 90) return true;
  }
  return false;
}

function containsLetter(s: string, a: number, b: number): boolean {
  for (let k = a; k < b; k++) if (has(s.charCodeAt(k), F_LETTER)) return true;
  return false;
}

/** A secret-bearing query parameter other than `token` (access_token, api_key, sig, …). */
function secretParamAt(src: Src, i: number): ParamHit | null {
  for (const sep of sepEnds(src, i)) {
    for (const name of SECRET_PARAM_NAMES) {
      if (!litAsciiCI(src, sep, name)) continue;
      const v = eqEnd(src, sep + name.length);
      if (v < 0) continue;
      const e = paramValueEnd(src, v);
      if (e < 0 || markerAt(src, v)) continue;
      return { start: i, valueStart: v, valueEnd: e };
    }
  }
  return null;
}

const PLACEHOLDER_WORDS = new Set([
  "null",
  "none",
  "nil",
  "true",
  "false",
  "undefined",
  "redacted",
  "your_password",
]);

/** Template placeholders and empty markers are not secrets (`${PASS}`, `<token>`, `****`, `null`). */
function isPlaceholderValue(v: string): boolean {
  if (v.length === 0) return true;
  const c0 = v.charCodeAt(0);
  if (c0 === 60 || c0 === 123) return true; // <token>, {token}
  if (c0 === 36 && v.length > 1) return true; // $VAR, ${VAR}, $(cmd)
  if (v.startsWith("%s") || v.startsWith("%(")) return true;
  if (/^(?:\*+|x{3,}|X{3,}|\.{3,}|…)$/.test(v)) return true;
  return PLACEHOLDER_WORDS.has(v.toLowerCase());
}

/** Unquoted generic value characters: stops at whitespace, quotes and structural delimiters. */
function isGenericValueChar(c: number): boolean {
  if (c < 0 || pyWs(c)) return false;
  return !(
    c === 34 ||
    c === 39 ||
    c === 96 ||
    c === 44 ||
    c === 59 ||
    c === 125 ||
    c === 41 ||
    c === 93 ||
    c === 38 ||
    c === 60 ||
    c === 62
  );
}

/** `password=…`, `DB_PASSWORD: …`, `"client_secret": "…"`: the value of a secret-named key. */
function genericSecretAt(src: Src, i: number): ExtraHit | null {
  const s = src.s;
  if (has(src.before(i), F_IDENT)) return null;
  const idEnd = src.run(i, F_IDENT);
  if (idEnd === i || !endsWithSecretKeyName(s, i, idEnd)) return null;
  let j = idEnd;
  let c = src.at(j);
  if (c === 34 || c === 39) c = src.at(++j);
  const sepStart = j;
  while (c === 32 || c === 9) c = src.at(++j);
  const spaceBefore = j > sepStart;
  let colon = false;
  if (c === 58) {
    colon = true;
    c = src.at(++j);
    if (c === 61) c = src.at(++j);
  } else if (c === 61) {
    c = src.at(++j);
    if (c === 61) return null; // `==` is a comparison
    if (c === 62) c = src.at(++j);
  } else return null;
  const spaced = spaceBefore || c === 32 || c === 9;
  while (c === 32 || c === 9) c = src.at(++j);
  if (c === 34 || c === 39 || c === 96) {
    // Quoted: the value runs to the closing quote (backslash escapes) or the line's end.
    const q = c;
    const v = j + 1;
    let k = v;
    let d = src.at(k);
    while (d >= 0 && d !== q && d !== 10 && d !== 13) {
      if (d === 92) {
        if (src.at(k + 1) < 0) break;
        k++;
      }
      d = src.at(++k);
    }
    k = Math.min(k, src.n);
    const value = s.slice(v, k);
    if (markerAt(src, v) || isPlaceholderValue(value)) return null;
    return { start: i, end: d === q ? k + 1 : k, redactStart: v, redactEnd: k, rule: "secret value" };
  }
  const v = j;
  while (isGenericValueChar(c)) c = src.at(++j);
  const value = s.slice(v, j);
  if (markerAt(src, v) || isPlaceholderValue(value)) return null;
  const len = j - v;
  // `process.env.API_KEY`, `config.password`: a reference in code, not the secret.
  if (/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(value) && !containsDigit(s, v, j)) return null;
  if (colon) {
    // `key: value` is also prose and type annotations: demand something secret-shaped.
    if (len < 6) return null;
    if (!containsDigit(s, v, j) && /^[A-Za-z]+$/.test(value)) return null;
  } else {
    if (len < 3) return null;
    // `password = password` / `token = get_token()` is code, not a secret.
    if (spaced && /^[A-Za-z_][A-Za-z0-9_]*$/.test(value) && !containsDigit(s, v, j)) return null;
    if (value.includes("(")) return null;
  }
  return { start: i, end: j, redactStart: v, redactEnd: j, rule: "secret value" };
}

/** A header `Authorization: <scheme> <credential>` other than Bearer (Basic, Token, Bot, bare keys). */
function authorizationOtherAt(src: Src, i: number): number {
  if (has(src.before(i), F_WORD) || !litFold(src, i, "authorization")) return -1;
  let j = i + 13;
  let c = src.at(j);
  if (c === 34 || c === 39) c = src.at(++j);
  while (c === 32 || c === 9) c = src.at(++j);
  if (c !== 58 && c !== 61) return -1;
  c = src.at(++j);
  while (c === 32 || c === 9) c = src.at(++j);
  if (c === 34 || c === 39) c = src.at(++j);
  const w = j;
  while (has(c, F_LETTER)) c = src.at(++j);
  if (j > w && (c === 32 || c === 9)) {
    let k = j;
    let d = c;
    while (d === 32 || d === 9) d = src.at(++k);
    const t = k;
    while (has(d, F_BEARER) || d === 61 || d === 58) d = src.at(++k);
    // A credential after a scheme word: has a digit, mixed case or base64 padding (not a prose word).
    const credLike =
      containsDigit(src.s, t, k) ||
      (containsUpper(src.s, t, k) && /[a-z]/.test(src.s.slice(t, k))) ||
      src.s.charCodeAt(k - 1) === 61;
    if (k - t >= 8 && credLike) return k;
  }
  let k = w;
  let d = src.at(k);
  while (has(d, F_BEARER) || d === 61 || d === 58) d = src.at(++k);
  if (k - w >= 12 && containsDigit(src.s, w, k)) return k;
  return -1;
}

/** A free-standing `Bearer <token>` (no header name): the token must look like one. */
function bareBearerAt(src: Src, i: number): number {
  if (has(src.before(i), F_WORD)) return -1;
  if (!litAsciiCI(src, i, "bearer")) return -1;
  let j = i + 6;
  let c = src.at(j);
  if (c !== 32 && c !== 9) return -1;
  while (c === 32 || c === 9) c = src.at(++j);
  const t = j;
  while (has(c, F_BEARER)) c = src.at(++j);
  const tokenEnd = j;
  while (c === 61) c = src.at(++j);
  if (tokenEnd - t < 16 || !containsDigit(src.s, t, tokenEnd) || !containsLetter(src.s, t, tokenEnd))
    return -1;
  return j;
}

/** `any+scheme://user:password@`: the reference lists only a few schemes. */
function anySchemeUserinfoAt(src: Src, i: number): number {
  if (has(src.before(i), F_SCHEME)) return -1;
  if (!has(src.at(i), F_LETTER)) return -1;
  const e = src.run(i + 1, F_SCHEME);
  return userinfoEnd(src, e);
}

function wholeHit(i: number, end: number, rule: string): ExtraHit | null {
  return end < 0 ? null : { start: i, end, redactStart: i, redactEnd: end, rule };
}

/** Google API key (`AIza` + 35). */
function googleKeyAt(src: Src, i: number): ExtraHit | null {
  return wholeHit(i, mFixed(src, i, "AIza", F_URLSAFE, 35), "Google API key");
}

/** AWS key ids with the bearer (ABIA) and context (ACCA) prefixes the reference does not list. */
function awsExtraKeyIdAt(src: Src, i: number): ExtraHit | null {
  let e = mFixed(src, i, "ABIA", F_UPDIG, 16);
  if (e < 0) e = mFixed(src, i, "ACCA", F_UPDIG, 16);
  return wholeHit(i, e, "AWS key id");
}

/** OpenAI-style `sk-` keys: mixed case plus a digit, so kebab-case words (`disk-…`) never match. */
function skKeyAt(src: Src, i: number): ExtraHit | null {
  if (has(src.before(i), F_ALNUM) || !src.lit(i, "sk-")) return null;
  const e = src.run(i + 3, F_URLSAFE);
  if (e - (i + 3) < 20 || !containsDigit(src.s, i + 3, e) || !containsUpper(src.s, i + 3, e)) return null;
  return wholeHit(i, e, "API key");
}

/** Slack refresh/config tokens and app-level tokens (`xoxr-`, `xoxe-`, `xapp-`). */
function slackExtraAt(src: Src, i: number): ExtraHit | null {
  if (!src.lit(i, "xoxr-") && !src.lit(i, "xoxe-") && !src.lit(i, "xapp-")) return null;
  const e = src.run(i + 5, F_SLACK);
  return e - (i + 5) >= 10 ? wholeHit(i, e, "Slack token") : null;
}

function authorizationOtherHit(src: Src, i: number): ExtraHit | null {
  return wholeHit(i, authorizationOtherAt(src, i), "authorization header");
}

function bareBearerHit(src: Src, i: number): ExtraHit | null {
  return wholeHit(i, bareBearerAt(src, i), "bearer token");
}

function anySchemeUserinfoHit(src: Src, i: number): ExtraHit | null {
  return wholeHit(i, anySchemeUserinfoAt(src, i), "URL userinfo");
}

function secretParamHit(src: Src, i: number): ExtraHit | null {
  const p = secretParamAt(src, i);
  return p === null
    ? null
    : {
        start: i,
        end: p.valueEnd,
        redactStart: p.valueStart,
        redactEnd: p.valueEnd,
        rule: "secret parameter",
      };
}

type ExtraMatcher = (src: Src, i: number) => ExtraHit | null;

/**
 * This port's rules beyond the reference, indexed by the characters they can start
 * with (each matcher checks its own left boundary). Each rule scans independently (a
 * match consumes text only for its own rule), so one rule's hit never hides another's
 * overlapping hit; overlaps are merged when the spans are combined.
 */
const EXTRA_RULES: readonly ExtraMatcher[] = [
  googleKeyAt,
  awsExtraKeyIdAt,
  skKeyAt,
  slackExtraAt,
  authorizationOtherHit,
  bareBearerHit,
  anySchemeUserinfoHit,
  secretParamHit,
  genericSecretAt,
];
const EXTRA_BY_CHAR: readonly (readonly number[])[] = (() => {
  const table: number[][] = [];
  for (let c = 0; c < 128; c++) {
    const rules: number[] = [];
    if (c === 65) rules.push(0, 1);
    if (c === 115) rules.push(2);
    if (c === 120) rules.push(3);
    if (c === 65 || c === 97) rules.push(4);
    if (c === 66 || c === 98) rules.push(5);
    if (has(c, F_LETTER)) rules.push(6);
    if (c === 63 || c === 38) rules.push(7);
    if (has(c, F_IDENT)) rules.push(8);
    table.push(rules);
  }
  return table;
})();

/** `prefix` then exactly `count` characters of `flag`. */
function mFixed(src: Src, i: number, prefix: string, flag: number, count: number): number {
  if (!src.lit(i, prefix)) return -1;
  const b = i + prefix.length;
  for (let k = 0; k < count; k++) if (!has(src.at(b + k), flag)) return -1;
  return b + count;
}

/**
 * Offsets where an extra rule can begin: `?`/`&`, any `A`/`x` (the unbounded
 * AIza/ABIA/ACCA and Slack rules), and otherwise only the start of a word (the
 * other rules all require a left boundary).
 */
const EXTRA_CANDIDATE_RE = /[?&Ax]|(?<![A-Za-z0-9])[A-Za-z0-9_.-]/g;

/** Runs every extra rule in one pass over the text, each rule skipping only past its own matches. */
function scanExtra(src: Src, start: number, out: ExtraHit[]): number {
  const s = src.s;
  const blockedUntil: number[] = [];
  for (let r = 0; r < EXTRA_RULES.length; r++) blockedUntil.push(start);
  const re = EXTRA_CANDIDATE_RE;
  let i = start;
  try {
    for (;;) {
      re.lastIndex = i;
      const m = re.exec(s);
      if (m === null) return src.n;
      i = m.index;
      for (const r of EXTRA_BY_CHAR[s.charCodeAt(i)] as readonly number[]) {
        if (i < (blockedUntil[r] as number)) continue;
        const hit = (EXTRA_RULES[r] as ExtraMatcher)(src, i);
        if (hit === null) continue;
        out.push(hit);
        blockedUntil[r] = hit.end;
      }
      i++;
    }
  } catch (err) {
    if (isNeedMore(err)) return i;
    throw err;
  }
}

// ───────────────────────── quiet-text fast paths ─────────────────────────

/*
 * Most streamed chunks are ordinary prose ("the ", "**bold** "), and the full planners'
 * fixed cost dwarfs the work such text needs. These checks PROVE what the planner would
 * return for a text without running it, and answer -1 (run the planner) otherwise.
 *
 * Credential stage, over `text[start:]` made only of the characters below, with no
 * [A-Za-z0-9-] run over 15 characters, no `eyJ`, no dash prefix (`--`, `sk-`, `xox`, …)
 * and no key name: no rule can match (every fixed shape needs a longer run, a prefix,
 * `_`, `+`, `/`, `?`, `&`, `://` or a key name), and a rule reads past a character only
 * while it stays in [A-Za-z0-9.-] (spaces, quotes and `:`/`=` are crossed only after a
 * key name). So the earliest undecided offset is the start of the trailing
 * [A-Za-z0-9.-] run, where the generic key/value rule's identifier reaches the end; the
 * base64 tail and partial prefixes start at or after it. Pinned against the planner by
 * test/messaging/security/quiet-path.test.ts.
 */

// 0: anything else (the fast path declines)
const Q_ALNUM = 1;
const Q_DOT = 2;
const Q_INERT = 3; // no rule treats it specially outside a keyword's value
const Q_COLON = 4; // safe only as `: ` / `:\n` after a non-digit (no `://`, no Telegram id)
const Q_DASH = 5; // part of runs like an alnum (`well-known`, `-la`); prefixes and `--` checked after

const QUIET = new Uint8Array(128);
(() => {
  for (let c = 0; c < 128; c++) if (has(c, F_ALNUM)) QUIET[c] = Q_ALNUM;
  QUIET[46] = Q_DOT;
  for (const ch of " \t\n\r,;!*`()[]#\"'|<>{}~^$@%=\\") QUIET[ch.charCodeAt(0)] = Q_INERT;
  QUIET[58] = Q_COLON;
  QUIET[45] = Q_DASH;
})();

/** Longest alnum run that cannot be any fixed-shape token (SendGrid's 16 is the shortest). */
const QUIET_MAX_RUN = 15;

/**
 * Key names after which a rule reads on across spaces and quotes (`password = …`,
 * `Authorization: …`, `Bearer …`, `SessionToken: …`): a secret-suffixed identifier
 * that ends there, or one of the header/label words anywhere.
 */
const QUIET_KEYWORD_RE =
  /(?:token|secret|secretkey|password|passwd|passphrase|apikey|api-key|accesskey|privatekey)(?![A-Za-z0-9.-])|accesskeyid|authorization|bearer/gi;

/** Dash-bearing prefixes whose token may follow (PEM, Slack, OpenAI/Anthropic, PyPI, GitLab, Google OAuth). */
const QUIET_DASH_RE = /--|sk-|xox|xapp-|pypi-|glpat-|GOCSPX-/;

function isAsciiWs(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

/** The credential plan's cut for a quiet `text[start:]` (no spans), or -1 when not provably quiet. */
export function quietCredentialCut(s: string, start: number, eof: boolean): number {
  const n = s.length;
  // A run straddling `start` would be judged from its middle: only accept a clean boundary.
  if (start > 0 && has(s.charCodeAt(start - 1), F_IDENT | F_B64)) return -1;
  let run = 0;
  let tail = start; // start of the trailing [A-Za-z0-9.-] run
  let letters = false;
  let dashes = false;
  for (let i = start; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128) {
      // Python folds these onto ASCII letters of `authorization`/`sk`/`key`.
      if (c === 0x130 || c === 0x131 || c === 0x17f || c === 0x212a) return -1;
      run = 0;
      tail = i + 1;
      continue;
    }
    const k = QUIET[c] as number;
    if (k === Q_ALNUM || k === Q_DASH) {
      // One counter for the [A-Za-z0-9-] run: it bounds the base64, Discord and prefixed shapes alike.
      if (++run > QUIET_MAX_RUN) return -1;
      if (c >= 65) letters = true;
      else if (c === 45) dashes = true;
      continue;
    }
    run = 0;
    if (k === Q_DOT) continue;
    tail = i + 1;
    if (k === Q_INERT) continue;
    if (k === Q_COLON) {
      const prev = i > 0 ? s.charCodeAt(i - 1) : 32;
      if (prev >= 48 && prev <= 57) return -1;
      if (i + 1 < n ? !isAsciiWs(s.charCodeAt(i + 1)) : !eof) return -1;
      continue;
    }
    return -1;
  }
  if (dashes && QUIET_DASH_RE.test(s.slice(start))) return -1;
  if (letters) {
    if (s.indexOf("eyJ", start) >= 0) return -1;
    QUIET_KEYWORD_RE.lastIndex = start;
    if (QUIET_KEYWORD_RE.test(s)) return -1;
  }
  return eof ? n : notInsidePair(s, tail);
}

/**
 * The exfiltration plan's cut when `text[start:]` holds no `http` and no `](` (one
 * character of context may hold the `]`): no URL or markdown target can start, and
 * only a trailing proper prefix of `http` is undecided. -1 otherwise.
 */
export function quietExfiltrationCut(s: string, start: number, eof: boolean): number {
  if (s.indexOf("http", start) >= 0 || s.indexOf("](", start > 0 ? start - 1 : 0) >= 0) return -1;
  const n = s.length;
  if (eof) return n;
  let cut = n;
  for (let i = Math.max(start, n - 3); i < n && cut === n; i++) {
    let k = i;
    while (k < n && s.charCodeAt(k) === "http".charCodeAt(k - i)) k++;
    if (k === n) cut = i;
  }
  return notInsidePair(s, cut);
}

function quietPlan(cut: number): StagePlan {
  return { spans: [], warnings: [], cut };
}

// ───────────────────────── the credential stage ─────────────────────────

/**
 * Adds pass-5 hits (sorted by start) to the reference spans. A hit that leaves
 * something in plaintext is merged with every span it overlaps (and whatever those
 * reach) into one credential span, so no reference span is ever cut in two; a hit
 * already fully covered adds nothing. One sweep: spans left of a hit are final.
 */
function mergeExtras(
  taken: readonly RedactionSpan[],
  extras: readonly ExtraHit[],
): { spans: RedactionSpan[]; accepted: ExtraHit[] } {
  const res: RedactionSpan[] = [];
  const accepted: ExtraHit[] = [];
  let p = 0;
  for (const x of extras) {
    const xs = x.redactStart;
    const xe = x.redactEnd;
    if (xe <= xs) continue;
    while (p < taken.length && (taken[p] as RedactionSpan).end <= xs) res.push(taken[p++] as RedactionSpan);
    // Covered? Only the last emitted span and the pending reference spans can overlap [xs, xe).
    let cursor = xs;
    const last = res[res.length - 1];
    if (last !== undefined && last.start <= cursor && last.end > cursor) cursor = last.end;
    for (let q = p; q < taken.length && cursor < xe; q++) {
      const t = taken[q] as RedactionSpan;
      if (t.start > cursor) break;
      cursor = Math.max(cursor, t.end);
    }
    if (cursor >= xe) continue;
    accepted.push(x);
    let lo = xs;
    let hi = xe;
    if (last !== undefined && last.end > lo && last.start < hi) {
      res.pop();
      lo = Math.min(lo, last.start);
      hi = Math.max(hi, last.end);
    }
    while (p < taken.length && (taken[p] as RedactionSpan).start < hi) {
      const t = taken[p++] as RedactionSpan;
      lo = Math.min(lo, t.start);
      hi = Math.max(hi, t.end);
    }
    res.push({ start: lo, end: hi, replacement: REDACTION_MARKER });
  }
  while (p < taken.length) res.push(taken[p++] as RedactionSpan);
  return { spans: res, accepted };
}

/**
 * Plans credential redaction for `text[start:]` (`text[:start]` is context only).
 * Passes are ranked: 1 (patterns) > 2 (base64-encoded) > 3 (bare secrets) > 4
 * (`token=` values), as in the reference; a later pass redacts only what earlier
 * passes left in plaintext. Pass 5 (this port's wider rules) runs last and merges
 * with whatever it overlaps, so the reference's spans are never split.
 */
export function planCredentials(text: string, start = 0, eof = true): StagePlan {
  const quiet = quietCredentialCut(text, start, eof);
  return quiet >= 0 ? quietPlan(quiet) : planCredentialsFull(text, start, eof);
}

/** {@link planCredentials} without the quiet-text fast path (exported for the tests that pin the two equal). */
export function planCredentialsFull(text: string, start: number, eof: boolean): StagePlan {
  const src = new Src(text, eof);
  const warnings: string[] = [];
  // Regions (scanner extents a restart must not split) matter only to a stream.
  const regions: Range[] | null = eof ? null : [];

  let taken: RedactionSpan[] = [];
  const u1 = scanPass1(src, start, true, taken);
  for (const h of taken)
    warnings.push(`Redacted credential pattern (${codePointLength(text, h.start, h.end)} chars)`);

  const chunks: B64Chunk[] = [];
  const u23 = scanB64Chunks(src, start, chunks);
  const pass2: RedactionSpan[] = [];
  for (const ch of chunks) {
    regions?.push({ start: ch.start, end: ch.end });
    if (!chunkDecodesToCredential(text, ch.start, ch.dataEnd, ch.end)) continue;
    warnings.push(`Redacted base64-encoded credential (${ch.end - ch.start} chars)`);
    for (const g of uncovered(ch.start, ch.end, taken))
      pass2.push({ start: g.start, end: g.end, replacement: ENCODED_REDACTION_MARKER });
  }
  taken = sortSpans(taken.concat(pass2));

  const pass3: RedactionSpan[] = [];
  for (const ch of chunks) {
    if (!containsBareSecret(text, ch.start, ch.dataEnd)) continue;
    const gaps = uncovered(ch.start, ch.dataEnd, taken);
    if (gaps.length === 0) continue;
    for (const g of gaps) pass3.push({ start: g.start, end: g.end, replacement: REDACTION_MARKER });
    warnings.push(`Redacted bare secret key (${ch.dataEnd - ch.start} chars)`);
  }
  taken = sortSpans(taken.concat(pass3));

  const params: ParamHit[] = [];
  const u4 = scanParams(src, start, params, tokenParamAt);
  const pass4: RedactionSpan[] = [];
  for (const p of params) {
    regions?.push({ start: p.start, end: p.valueEnd });
    if (markerAt(src, p.valueStart)) continue;
    const gaps = uncovered(p.valueStart, p.valueEnd, taken);
    if (gaps.length === 0) continue;
    for (const g of gaps) pass4.push({ start: g.start, end: g.end, replacement: REDACTION_MARKER });
    warnings.push(
      `Redacted token parameter value (${codePointLength(text, p.valueStart, p.valueEnd)} chars)`,
    );
  }
  taken = sortSpans(taken.concat(pass4));

  const extras: ExtraHit[] = [];
  const u5 = scanExtra(src, start, extras);
  extras.sort(byStartThenEnd);
  for (const x of extras) regions?.push({ start: x.start, end: x.end });
  const merged = mergeExtras(taken, extras);
  taken = merged.spans;
  for (const x of merged.accepted)
    warnings.push(`Redacted ${x.rule} (${codePointLength(text, x.redactStart, x.redactEnd)} chars)`);

  if (regions === null) return { spans: taken, warnings, cut: text.length };
  for (const t of taken) regions.push(t);
  const cut = notInsidePair(text, settleCut(Math.min(u1, u23, u4, u5), regions));
  return { spans: spansBefore(taken, cut), warnings, cut };
}

// ───────────────────────── the exfiltration stage ─────────────────────────

const EXFIL_QUERY_MIN_LEN = 200;
const MAX_URL_DECODE_PASSES = 3;

/** Python re.IGNORECASE class for [A-Za-z] (adds ſ, K, ı, İ, which fold onto ASCII letters). */
const PY_CI_LETTERS = "A-Za-z\\u017F\\u212A\\u0131\\u0130";
const PY_WS_CLASS =
  "\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";

/** Builds a case-insensitive literal as explicit classes with Python's folding (no JS `i` flag). */
function pyCiLiteral(lit: string): string {
  let out = "";
  for (const ch of lit) {
    const l = ch.toLowerCase();
    if (l >= "a" && l <= "z") {
      let cls = `${l}${l.toUpperCase()}`;
      if (l === "i") cls += "\\u0131\\u0130";
      if (l === "s") cls += "\\u017F";
      if (l === "k") cls += "\\u212A";
      out += `[${cls}]`;
    } else out += ch.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  return out;
}

const AWS_KEY_ID_CI = `(?:${pyCiLiteral("AKIA")}|${pyCiLiteral("ASIA")})[${PY_CI_LETTERS}0-9]{16}`;
const LABEL_VALUE_CI = `["']?[${PY_WS_CLASS}]*[:=][${PY_WS_CLASS}]*["']?[^${PY_WS_CLASS}"',}]`;

/** Unambiguous credential markers anywhere in a URL's path or query (case-insensitive, like the reference). */
const HARD_CREDENTIAL_RE = new RegExp(
  [
    AWS_KEY_ID_CI,
    `(?:${pyCiLiteral("SecretAccessKey")}|${pyCiLiteral("aws_secret_access_key")})${LABEL_VALUE_CI}`,
    `(?:${pyCiLiteral("SessionToken")}|${pyCiLiteral("aws_session_token")})${LABEL_VALUE_CI}`,
    `(?:${pyCiLiteral("AccessKeyId")}|${pyCiLiteral("aws_access_key_id")})${LABEL_VALUE_CI}`,
    `(?:${pyCiLiteral("ssh-rsa")}|${pyCiLiteral("ssh-ed25519")})[${PY_WS_CLASS}+%]`,
    `${pyCiLiteral("BEGIN")}[${PY_WS_CLASS}+%](?:${pyCiLiteral("RSA")}|${pyCiLiteral("DSA")}|${pyCiLiteral("EC")}|${pyCiLiteral("OPENSSH")})[${PY_WS_CLASS}+%]${pyCiLiteral("PRIVATE")}[${PY_WS_CLASS}+%]${pyCiLiteral("KEY")}`,
    `${pyCiLiteral("xox")}[bpasBPAS\\u017F]-[0-9${PY_CI_LETTERS}-]`,
  ].join("|"),
);

/** Heavy percent-encoding: 21+ consecutive `%XX` octets (kept apart: it is never exempted). */
function hasHeavyPercent(s: string): boolean {
  let i = 0;
  while (i + 2 < s.length) {
    let j = i;
    let count = 0;
    while (
      j + 2 < s.length &&
      s.charCodeAt(j) === 37 &&
      has(s.charCodeAt(j + 1), F_HEX) &&
      has(s.charCodeAt(j + 2), F_HEX)
    ) {
      j += 3;
      if (++count >= 21) return true;
    }
    i = count > 0 ? j : i + 1;
  }
  return false;
}

/** Query-data heuristics: base64-like blob, an AWS key id, SSH/PEM headers, Slack tokens (case-insensitive). */
const EXFIL_PATTERNS_RE = new RegExp(
  [
    `[${PY_CI_LETTERS}0-9+/=]{40}`,
    AWS_KEY_ID_CI,
    `(?:${pyCiLiteral("ssh-rsa")}|${pyCiLiteral("ssh-ed25519")})[${PY_WS_CLASS}+%]`,
    `${pyCiLiteral("BEGIN")}[${PY_WS_CLASS}+%](?:${pyCiLiteral("RSA")}|${pyCiLiteral("DSA")}|${pyCiLiteral("EC")}|${pyCiLiteral("OPENSSH")})[${PY_WS_CLASS}+%]${pyCiLiteral("PRIVATE")}[${PY_WS_CLASS}+%]${pyCiLiteral("KEY")}`,
    `${pyCiLiteral("xox")}[bpasBPAS\\u017F]-[0-9${PY_CI_LETTERS}-]`,
  ].join("|"),
);

function exfilPatterns(s: string): boolean {
  return EXFIL_PATTERNS_RE.test(s) || hasHeavyPercent(s);
}

/** A canonical credential, literally or base64-encoded, anywhere in a URL payload (not the entropy heuristic). */
function containsFixedCredential(payload: string): boolean {
  if (containsCredentialPattern(payload)) return true;
  const chunks: B64Chunk[] = [];
  scanB64Chunks(new Src(payload, true), 0, chunks);
  for (const ch of chunks) if (chunkDecodesToCredential(payload, ch.start, ch.dataEnd, ch.end)) return true;
  return false;
}

// Valid S3 presigned URLs legitimately carry an AKIA id and a hex signature; every value is validated.
const PRESIGNED_PARTS = [
  new RegExp(`${pyCiLiteral("X-Amz-Algorithm=AWS4-HMAC-SHA256")}`, "g"),
  new RegExp(`${pyCiLiteral("X-Amz-Credential=")}${AWS_KEY_ID_CI}(?:%2[Ff]|/)`, "g"),
  new RegExp(`${pyCiLiteral("X-Amz-Expires=")}\\p{Nd}`, "gu"),
  new RegExp(`${pyCiLiteral("X-Amz-Signature=")}[0-9a-fA-F]{64}`, "g"),
];
const PRESIGNED_PARAMS = new Set([
  "X-Amz-Algorithm",
  "X-Amz-Credential",
  "X-Amz-Date",
  "X-Amz-Expires",
  "X-Amz-SignedHeaders",
  "X-Amz-Signature",
  "X-Amz-Security-Token",
]);
const PRESIGNED_VALIDATORS: Record<string, RegExp> = {
  "X-Amz-Credential":
    /^(?:AKIA|ASIA)[A-Z0-9]{16}(?:%2F|\/)[0-9]{8}(?:%2F|\/)[a-z0-9-]+(?:%2F|\/)s3(?:%2F|\/)aws4_request\n?$/,
  "X-Amz-Signature": /^[0-9a-f]{64}\n?$/,
  "X-Amz-Security-Token": /^(?:FwoGZX|IQoJb3JpZ2lu)[A-Za-z0-9+/=%]{1,2000}\n?$/,
};

function isSafePresigned(domain: string, query: string): boolean {
  if (!domain.endsWith(".amazonaws.com")) return false;
  let from = 0;
  for (const part of PRESIGNED_PARTS) {
    part.lastIndex = from;
    const m = part.exec(query);
    if (m === null) return false;
    from = m.index + m[0].length;
  }
  const params = new Map<string, string[]>();
  for (const piece of query.split("&")) {
    if (piece === "") continue;
    const eq = piece.indexOf("=");
    const name = unquote((eq < 0 ? piece : piece.slice(0, eq)).replace(/\+/g, " "));
    const value = eq < 0 ? "" : unquote(piece.slice(eq + 1).replace(/\+/g, " "));
    const list = params.get(name) ?? [];
    list.push(value);
    params.set(name, list);
  }
  for (const [name, values] of params) {
    if (!PRESIGNED_PARAMS.has(name)) return false;
    const validator = PRESIGNED_VALIDATORS[name];
    for (const v of values) {
      if (validator !== undefined ? !validator.test(v) : exfilPatterns(v)) return false;
    }
  }
  return true;
}

function hostAllowed(host: string, allowed: ReadonlySet<string>): boolean {
  const h = host.toLowerCase();
  if (allowed.has(h)) return true;
  for (const entry of allowed)
    if (entry.startsWith(".") && (h.endsWith(entry) || h === entry.slice(1))) return true;
  return false;
}

/** The per-URL verdict (reference `_exfil_url_warning`): a warning, or null when the URL is clean. */
function exfilUrlWarning(
  domain: string,
  pathAndQuery: string,
  port: string,
  allowed: ReadonlySet<string>,
): string | null {
  const qmark = pathAndQuery.indexOf("?");
  const query = qmark >= 0 ? pathAndQuery.slice(qmark + 1) : "";
  if (query !== "" && isSafePresigned(domain, query)) return null;
  // Hard markers and canonical tokens are unconditional, whatever the host.
  if (HARD_CREDENTIAL_RE.test(pathAndQuery)) return `Suspicious URL with credential in path/query: ${domain}`;
  const full = `${domain}${port}${pathAndQuery}`;
  if (containsFixedCredential(full)) return `Suspicious URL with credential in path/query: ${domain}`;
  // Decode until stable (bounded): a double-encoded credential survives one pass.
  let decoded = full;
  for (let k = 0; k < MAX_URL_DECODE_PASSES; k++) {
    const next = unquotePlus(decoded);
    if (next === decoded) break;
    decoded = next;
    if (HARD_CREDENTIAL_RE.test(decoded) || containsFixedCredential(decoded))
      return `Suspicious URL with encoded credential in path/query: ${domain}`;
  }
  // Still decodable after the budget: never seen in plaintext, so fail closed.
  if (unquotePlus(decoded) !== decoded)
    return `Suspicious URL with encoded credential in path/query: ${domain}`;
  if (hasHeavyPercent(pathAndQuery)) return `Suspicious URL with credential-like query data: ${domain}`;
  if (qmark < 0) return null;
  const heuristicQuery = hostAllowed(domain, allowed) ? "" : query;
  if (heuristicQuery !== "") {
    const qlen = codePointLength(heuristicQuery);
    if (qlen >= EXFIL_QUERY_MIN_LEN) {
      const head = Array.from(pathAndQuery).slice(0, 60).join("");
      return `Suspicious URL with long query params (${qlen} chars): ${domain}${head}...`;
    }
    if (exfilPatterns(heuristicQuery) || exfilPatterns(unquotePlus(heuristicQuery)))
      return `Suspicious URL with credential-like query data: ${domain}`;
  }
  return null;
}

interface UrlMatch {
  start: number;
  end: number;
  domain: string;
  port: string;
  pathAndQuery: string;
}

/** The reference URL grammar: `https?://` + DNS name | IPv4 | [IPv6], optional `:port`, optional path/query. */
function urlAt(src: Src, i: number): UrlMatch | null {
  if (!src.lit(i, "http")) return null;
  let h: number;
  if (src.at(i + 4) === 115 && src.lit(i + 5, "://")) h = i + 8;
  else if (src.lit(i + 4, "://")) h = i + 7;
  else return null;
  const s = src.s;
  let he = -1;
  // DNS name: the longest prefix of the host run followed by `.` and 2+ letters.
  const r = src.run(h, F_HOST);
  for (let j = r - 3; j > h; j--) {
    if (s.charCodeAt(j) === 46 && has(s.charCodeAt(j + 1), F_LETTER) && has(s.charCodeAt(j + 2), F_LETTER)) {
      let k = j + 1;
      while (k < r && has(s.charCodeAt(k), F_LETTER)) k++;
      he = k;
      break;
    }
  }
  if (he < 0) he = ipv4End(src, h);
  if (he < 0 && src.at(h) === 91) {
    const e = src.run(h + 1, F_IPV6);
    if (e > h + 1 && src.at(e) === 93) he = e + 1;
  }
  if (he < 0) return null;
  let p = he;
  let port = "";
  if (src.at(p) === 58) {
    let k = p + 1;
    let w = pyDigitAt(src, k);
    while (w > 0) {
      k += w;
      w = pyDigitAt(src, k);
    }
    if (k > p + 1) {
      port = s.slice(p, k);
      p = k;
    }
  }
  let pq = "";
  const c = src.at(p);
  if (c === 47 || c === 63) {
    let k = p + 1;
    let d = src.at(k);
    while (d >= 0 && !pyWs(d) && d !== 41 && d !== 34 && d !== 39 && d !== 62) d = src.at(++k);
    pq = s.slice(p, k);
    p = k;
  }
  return { start: i, end: p, domain: s.slice(h, he), port, pathAndQuery: pq };
}

/** Dotted-quad with Python's Unicode `\d`: three `\d{1,3}.` groups then `\d{1,3}` (greedy). */
function ipv4End(src: Src, h: number): number {
  let p = h;
  for (let g = 0; g < 4; g++) {
    let digits = 0;
    let w = pyDigitAt(src, p);
    while (w > 0 && digits < 3) {
      p += w;
      digits++;
      w = pyDigitAt(src, p);
    }
    if (digits === 0) return -1;
    if (g < 3) {
      if (src.at(p) !== 46) return -1;
      p++;
    }
  }
  return p;
}

interface MarkdownTarget {
  start: number;
  end: number;
  /** Empty when the target is not flagged. */
  host: string;
  reason: string;
}

/** A path segment that reads as data rather than a slug or a commit id. */
function isPayloadSegment(seg: string): boolean {
  if (seg.length < 32) return false;
  if (!/^[A-Za-z0-9+=_%.~-]+$/.test(seg)) return false;
  if (/[%=+]/.test(seg)) return true;
  if (/^[0-9a-fA-F]+$/.test(seg) && seg.length <= 64) return false;
  return /[0-9]/.test(seg) && /[A-Za-z]/.test(seg) && !/[a-z]{6}/.test(seg);
}

/**
 * A markdown link or image target `](url)`: chat apps fetch these without a click
 * (previews, unfurls, inline images), so ANY query string or a long path payload to a
 * host that is not allow-listed is treated as data leaving.
 */
function markdownTargetAt(src: Src, i: number, allowed: ReadonlySet<string>): MarkdownTarget | null {
  if (src.before(i) !== 93) return null;
  let t = i + 1;
  let c = src.at(t);
  while (c === 32 || c === 9) c = src.at(++t);
  if (c === 60) c = src.at(++t);
  let e = t;
  while (c >= 0 && !pyWs(c) && c !== 41 && c !== 62 && c !== 60 && c !== 34 && c !== 39) c = src.at(++e);
  if (e === t) return null;
  const none: MarkdownTarget = { start: t, end: e, host: "", reason: "" };
  const c0 = src.s.charCodeAt(t);
  if (c0 !== 47 && c0 !== 104 && c0 !== 72) return none; // only http(s):// and //host targets are fetched
  const target = src.s.slice(t, e);
  const m = /^(?:[hH][tT][tT][pP][sS]?:)?\/\/([^/?#]*)([^?#]*)(?:\?([^#]*))?/.exec(target);
  if (m === null) return none;
  const authority = m[1] ?? "";
  const at = authority.lastIndexOf("@");
  let host = at >= 0 ? authority.slice(at + 1) : authority;
  if (host.startsWith("[")) {
    const close = host.indexOf("]");
    host = close >= 0 ? host.slice(0, close + 1) : host;
  } else {
    const colon = host.indexOf(":");
    if (colon >= 0) host = host.slice(0, colon);
  }
  if (host === "" || hostAllowed(host, allowed)) return none;
  const query = m[3] ?? "";
  const path = m[2] ?? "";
  let reason = "";
  if (query.length > 0) reason = "query data";
  else if (path.length >= EXFIL_QUERY_MIN_LEN || path.split("/").some(isPayloadSegment))
    reason = "path payload";
  if (reason === "") return none;
  return { start: t, end: e, host, reason };
}

/**
 * Plans exfiltration redaction for `text[start:]` (`text[:start]` is context only).
 * Each flagged URL is replaced where it matched (the reference replaced every copy of
 * the URL string; positional replacement keeps the decision local, which is what makes
 * exact streaming possible).
 */
export function planExfiltration(
  text: string,
  start = 0,
  eof = true,
  opts: ExfiltrationOptions = {},
): StagePlan {
  return planExfiltrationWith(text, start, eof, allowedHostSet(opts));
}

const NO_ALLOWED_HOSTS: ReadonlySet<string> = new Set<string>();

/** Normalised allow-list (lower case), built once per options object by callers that plan repeatedly. */
export function allowedHostSet(opts: ExfiltrationOptions): ReadonlySet<string> {
  if (opts.allowedHosts === undefined || opts.allowedHosts.length === 0) return NO_ALLOWED_HOSTS;
  const set = new Set<string>();
  for (const h of opts.allowedHosts ?? []) set.add(h.toLowerCase());
  return set;
}

interface Flagged {
  span: RedactionSpan;
  warning: string;
}

export function planExfiltrationWith(
  text: string,
  start: number,
  eof: boolean,
  allowed: ReadonlySet<string>,
): StagePlan {
  const quiet = quietExfiltrationCut(text, start, eof);
  return quiet >= 0 ? quietPlan(quiet) : planExfiltrationFull(text, start, eof, allowed);
}

/** {@link planExfiltrationWith} without the quiet-text fast path (exported for the tests that pin the two equal). */
export function planExfiltrationFull(
  text: string,
  start: number,
  eof: boolean,
  allowed: ReadonlySet<string>,
): StagePlan {
  const src = new Src(text, eof);
  const s = text;
  const flagged: Flagged[] = [];
  const regions: Range[] = [];
  let uUrl = src.n;
  let i = start;
  try {
    for (;;) {
      let at = s.indexOf("http", i);
      if (at < 0) {
        // A partial `http` at the end of a partial text may still become a URL.
        if (src.eof) break;
        at = Math.max(i, src.n - 3);
        if (at >= src.n) break;
      }
      i = at;
      const m = urlAt(src, i);
      if (m === null) {
        i++;
        continue;
      }
      regions.push({ start: m.start, end: m.end });
      const w = exfilUrlWarning(m.domain, m.pathAndQuery, m.port, allowed);
      if (w !== null)
        flagged.push({
          span: { start: m.start, end: m.end, replacement: `${EXFILTRATION_MARKER_PREFIX}${m.domain}]` },
          warning: w,
        });
      i = m.end;
    }
  } catch (err) {
    if (!isNeedMore(err)) throw err;
    uUrl = i;
  }
  let uMd = src.n;
  const md: Flagged[] = [];
  i = start;
  try {
    for (;;) {
      const at = s.indexOf("](", Math.max(0, i - 1));
      if (at < 0) break;
      i = at + 1; // the `(`
      const t = markdownTargetAt(src, i, allowed);
      if (t === null) {
        i++;
        continue;
      }
      // The target consumes its run: a `](` inside it belongs to this destination.
      regions.push({ start: i, end: t.end });
      if (t.host !== "")
        md.push({
          span: { start: t.start, end: t.end, replacement: `${EXFILTRATION_MARKER_PREFIX}${t.host}]` },
          warning: `Suspicious markdown link target with ${t.reason}: ${t.host}`,
        });
      i = t.end;
    }
  } catch (err) {
    if (!isNeedMore(err)) throw err;
    uMd = i;
  }
  const { spans, warnings } = mergeFlagged(flagged, md);
  for (const sp of spans) regions.push({ start: sp.start, end: sp.end });
  if (eof) return { spans, warnings, cut: text.length };
  const cut = notInsidePair(text, settleCut(Math.min(uUrl, uMd), regions));
  return { spans: spansBefore(spans, cut), warnings, cut };
}

/**
 * Combines URL verdicts (sorted, disjoint) with flagged markdown targets (sorted,
 * disjoint). Overlapping items become one span; a cluster holding a reference-rule
 * URL keeps that URL's tag and warnings, otherwise the markdown target's.
 */
function mergeFlagged(urls: Flagged[], md: Flagged[]): { spans: RedactionSpan[]; warnings: string[] } {
  const all = urls.concat(md).sort(flaggedByStart);
  const spans: RedactionSpan[] = [];
  const warnings: string[] = [];
  let k = 0;
  while (k < all.length) {
    const first = all[k] as Flagged;
    let end = first.span.end;
    let j = k + 1;
    while (j < all.length && (all[j] as Flagged).span.start < end)
      end = Math.max(end, (all[j++] as Flagged).span.end);
    const cluster = all.slice(k, j);
    const refs = cluster.filter(isUrlVerdict);
    const lead = refs[0] ?? first;
    spans.push({ start: first.span.start, end, replacement: lead.span.replacement });
    for (const f of refs.length > 0 ? refs : cluster) warnings.push(f.warning);
    k = j;
  }
  return { spans, warnings };
}

function isUrlVerdict(f: Flagged): boolean {
  return !f.warning.startsWith("Suspicious markdown");
}

function flaggedByStart(a: Flagged, b: Flagged): number {
  return a.span.start - b.span.start;
}

// ───────────────────────── public API ─────────────────────────

/** Redacts credentials: provider tokens, key/value secrets, PEM keys, bare AWS secrets, encoded credentials, secret URL parameters. */
export function redactCredentials(text: string): RedactionResult {
  const plan = planCredentials(text, 0, true);
  return { text: plan.spans.length === 0 ? text : spliceSpans(text, plan.spans), warnings: plan.warnings };
}

/** Redacts URLs that carry data out: credentials or encoded payloads in the URL, long or blob-like queries, markdown targets with data. */
export function redactExfiltrationUrls(text: string, opts: ExfiltrationOptions = {}): RedactionResult {
  const plan = planExfiltration(text, 0, true, opts);
  return { text: plan.spans.length === 0 ? text : spliceSpans(text, plan.spans), warnings: plan.warnings };
}

/** Warnings {@link redactExfiltrationUrls} would report, without rewriting anything. */
export function scanExfiltrationUrls(text: string, opts: ExfiltrationOptions = {}): string[] {
  return planExfiltration(text, 0, true, opts).warnings;
}

/** Exfiltration first, then credentials: the contract every outbound path relies on. */
export function redactAll(text: string): string {
  // Ordinary prose (titles, labels, thinking): neither stage can plan a span.
  if (quietExfiltrationCut(text, 0, true) >= 0 && quietCredentialCut(text, 0, true) >= 0) return text;
  return redactCredentials(redactExfiltrationUrls(text).text).text;
}
