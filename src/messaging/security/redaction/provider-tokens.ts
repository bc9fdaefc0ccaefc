/** Pass 1: the reference credential alternation (provider tokens with fixed prefixes or shapes). */

import {
  F_ALNUM,
  F_B64EQ,
  F_BEARER,
  F_DIGIT,
  F_SLACK,
  F_UPDIG,
  F_URLSAFE,
  F_WORD,
  has,
  pyWs,
} from "./chars.js";
import { isJsonObjectSegment } from "./codecs.js";
import { REDACTION_MARKER } from "./markers.js";
import { isPlaceholderToken } from "./placeholders.js";
import { isNeedMore, litFold, NEED_MORE, Src } from "./source.js";
import type { RedactionSpan } from "./spans.js";

/** Per-scan memo so runs shared by many candidate starts are read once (keeps every scan linear). */
export class Pass1Memo {
  telegramFailUntil = -1;
  urlsafeFrom = -1;
  urlsafeEnd = -1;
  segFrom = -1;
  segEnd = -1;
  segCount = 0;
}

/** AWS access key id: long-term (AKIA) and STS (ASIA), 16 uppercase alphanumerics. */
export function mAwsKeyId(src: Src, i: number): number {
  if (src.at(i) !== 65) return -1;
  const c1 = src.at(i + 1);
  if ((c1 !== 75 && c1 !== 83) || src.at(i + 2) !== 73 || src.at(i + 3) !== 65) return -1;
  for (let k = 4; k < 20; k++) if (!has(src.at(i + k), F_UPDIG)) return -1;
  return i + 20;
}

/** AWS labelled values: `key["']? \s* [:=] \s* ["']? value`, value stops at JSON delimiters. */
export function mAwsLabel(src: Src, i: number, key: string): number {
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
export function pemMarkerAt(src: Src, q: number, word: string): number {
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
export function mPem(src: Src, i: number, endMemo: { from: number; at: number; end: number }): number {
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
export function mSlack(src: Src, i: number): number {
  if (!src.lit(i, "xox")) return -1;
  const c = src.at(i + 3);
  if ((c !== 98 && c !== 112 && c !== 97 && c !== 115) || src.at(i + 4) !== 45) return -1;
  const e = src.run(i + 5, F_SLACK);
  return e - (i + 5) >= 10 ? e : -1;
}

/** Telegram bot token `<bot id>:<secret>`; every start inside a failing digit run fails the same way. */
export function mTelegram(src: Src, i: number, memo: Pass1Memo): number {
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
export function mDiscord(src: Src, i: number): number {
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
export function mPrefixed(src: Src, i: number, prefix: string, flag: number, min: number, max = 0): number {
  if (!src.lit(i, prefix)) return -1;
  const b = i + prefix.length;
  let k = b;
  while ((max === 0 || k - b < max) && has(src.at(k), flag)) k++;
  return k - b >= min ? k : -1;
}

export const URI_SCHEMES: Record<number, readonly string[]> = {
  112: ["postgresql", "postgres"],
  109: ["mysql", "mongodb+srv", "mongodb"],
  114: ["rediss", "redis"],
  97: ["amqps", "amqp"],
  104: ["https", "http"],
  102: ["ftps", "ftp"],
};

/** `://user:password@` after a scheme ending at j: the password may itself hold `@`, so the LAST one ends it. */
export function userinfoEnd(src: Src, j: number): number {
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
export function mUriUserinfo(src: Src, i: number): number {
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
export function urlsafeRunEnd(src: Src, j: number, memo: Pass1Memo): number {
  if (j > memo.urlsafeFrom && j < memo.urlsafeEnd) return memo.urlsafeEnd;
  const e = src.run(j, F_URLSAFE);
  memo.urlsafeFrom = j;
  memo.urlsafeEnd = e;
  return e;
}

/** JWS/JWE: `eyJ` header plus 2-4 dot segments (a segment may be empty: JWE with `dir`). */
export function mJwt(src: Src, i: number, memo: Pass1Memo): number {
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
export function mLinkToken(src: Src, i: number, memo: Pass1Memo): number {
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
export function mBearerHeader(src: Src, i: number): number {
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
export function pass1At(
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
export function mGithubClassic(src: Src, i: number): number {
  if (!src.lit(i, "gh")) return -1;
  const c = src.at(i + 2);
  if ((c !== 111 && c !== 112 && c !== 115 && c !== 117 && c !== 114) || src.at(i + 3) !== 95) return -1;
  let k = i + 4;
  while (k - (i + 4) < 255 && has(src.at(k), F_ALNUM)) k++;
  return k - (i + 4) >= 30 ? k : -1;
}

/** Stripe secret / restricted keys, live or test. */
export function mStripe(src: Src, i: number): number {
  if (src.at(i + 1) !== 107 || src.at(i + 2) !== 95) return -1;
  if (!src.lit(i + 3, "live_") && !src.lit(i + 3, "test_")) return -1;
  const e = src.run(i + 8, F_ALNUM);
  return e - (i + 8) >= 16 ? e : -1;
}

/** SendGrid `SG.<16+>.<16+>`. */
export function mSgTwoPart(src: Src, i: number): number {
  if (!src.lit(i, "SG.")) return -1;
  const a = src.run(i + 3, F_URLSAFE);
  if (a - (i + 3) < 16 || src.at(a) !== 46) return -1;
  const b = src.run(a + 1, F_URLSAFE);
  return b - (a + 1) >= 16 ? b : -1;
}

/** DigitalOcean personal/OAuth/refresh tokens. */
export function mDigitalOcean(src: Src, i: number): number {
  if (src.at(i + 1) !== 111) return -1;
  const c = src.at(i + 2);
  if (c !== 111 && c !== 112 && c !== 114) return -1;
  if (!src.lit(i + 3, "_v1_")) return -1;
  const e = src.run(i + 7, F_ALNUM);
  return e - (i + 7) >= 40 ? e : -1;
}

/**
 * Offsets where some pass-1 branch can begin: every branch's first two characters are fixed ASCII
 * (or, for Discord and Telegram, a class), so any other offset is skipped without trying branches.
 * Candidates overlap (`------BEGIN`): every offset is judged on its own two characters.
 * `CANDIDATE_PAIRS[c0 * 128 + c1]` is 1 when a branch can start with `c0 c1`.
 */
const CANDIDATE_PAIRS: Uint8Array = (() => {
  const table = new Uint8Array(128 * 128);
  const add = (firsts: string, seconds: string): void => {
    for (const f of firsts) for (const sc of seconds) table[f.charCodeAt(0) * 128 + sc.charCodeAt(0)] = 1;
  };
  const digits = "0123456789";
  const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  add("A", "KScuU"); // AKIA/ASIA, AccessKeyId, Authorization (folded)
  add("a", "wmuU"); // aws_…, amqp(s), authorization
  add("S", "eG"); // SecretAccessKey/SessionToken, SG.
  add("-", "-"); // PEM
  add("x", "o"); // xox…
  add("MNO", `${letters}${digits}_-`); // Discord
  add("g", "hil"); // gh…_, github_pat_, glpat-
  add("s", "k"); // sk_live_, sk-proj-, sk-ant-
  add("r", "ke"); // rk_live_, redis(s)
  add("n", "p"); // npm_
  add("p", "yo"); // pypi-, postgres(ql)
  add("d", "o"); // do(o|p|r)_v1_
  add("G", "O"); // GOCSPX-
  add("m", "yo"); // mysql, mongodb
  add("h", "t"); // http(s)
  add("f", "t"); // ftp(s)
  add("e", "y"); // eyJ
  add(digits, digits); // Telegram bot id
  return table;
})();

/** The first offset in [i, n - 1) where some pass-1 branch can start, or n - 1 when there is none. */
function nextPass1Candidate(s: string, i: number, n: number): number {
  let k = i;
  let c0 = s.charCodeAt(k);
  for (; k < n - 1; k++) {
    const c1 = s.charCodeAt(k + 1);
    if ((c0 | c1) < 128 && CANDIDATE_PAIRS[(c0 << 7) | c1] === 1) return k;
    c0 = c1;
  }
  return k;
}

/**
 * Scans pass 1 from `start`. Collects hits (unless `hits` is null, which only asks
 * whether one exists) and returns the first undecided offset (the text length when
 * all is decided). A JWS/JWE-shaped hit whose header is not a JSON object is not a
 * credential (`eyJnotjson.abc.def`); the scan then retries at the next offset.
 */
export function scanPass1(
  src: Src,
  start: number,
  validateJwt: boolean,
  hits: RedactionSpan[] | null,
): number {
  const memo = new Pass1Memo();
  const pemMemo = { from: -1, at: -1, end: -1 };
  const s = src.s;
  const n = src.n;
  let i = start;
  try {
    while (i < n) {
      i = nextPass1Candidate(s, i, n);
      // The last character lacks the second character the filter needs: a complete text ends here.
      if (i === n - 1 && src.eof) break;
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
      // `ghp_xxxx…`, `AKIAXXXX…`: a doc's placeholder in a key's shape (never a PEM block or a URL's userinfo).
      if (e >= 0 && c0IsTokenStart(s.charCodeAt(i)) && isPlaceholderToken(s, i, e)) e = -1;
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

/** Token rules start with a letter or digit; PEM blocks start with `-`. */
function c0IsTokenStart(c: number): boolean {
  return c !== 45;
}

export function countDots(s: string, a: number, b: number): number {
  let n = 0;
  for (let k = a; k < b; k++) if (s.charCodeAt(k) === 46) n++;
  return n;
}

/** Whether any pass-1 credential pattern occurs in a complete text (no JWT-header check: wider). */
export function containsCredentialPattern(text: string): boolean {
  return scanPass1(new Src(text, true), 0, false, null) === -2;
}
