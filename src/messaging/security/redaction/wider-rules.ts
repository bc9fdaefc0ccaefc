/** Pass 5: this port's wider coverage beyond the reference (key/value secrets, other headers, more providers). */

import {
  F_ALNUM,
  F_BEARER,
  F_IDENT,
  F_LETTER,
  F_SCHEME,
  F_SLACK,
  F_UPDIG,
  F_URLSAFE,
  F_WORD,
  has,
  pyWs,
} from "./chars.js";
import { isPlaceholderValue } from "./placeholders.js";
import { userinfoEnd } from "./provider-tokens.js";
import { isNeedMore, litAsciiCI, litFold, type Src } from "./source.js";
import { eqEnd, markerAt, type ParamHit, paramValueEnd, sepEnds } from "./url-params.js";

export interface ExtraHit {
  start: number; // scanner match start (for streaming regions)
  end: number; // scanner match end
  redactStart: number;
  redactEnd: number;
  rule: string;
}

/** Parameter names that carry a secret in a URL query (beyond the reference's `token`). */
export const SECRET_PARAM_NAMES = [
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
export const SECRET_KEY_SUFFIXES = [
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
export function endsWithSecretKeyName(s: string, a: number, b: number): boolean {
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

export function containsDigit(s: string, a: number, b: number): boolean {
  for (let k = a; k < b; k++) {
    const c = s.charCodeAt(k);
    if (c >= 48 && c <= 57) return true;
  }
  return false;
}

export function containsUpper(s: string, a: number, b: number): boolean {
  for (let k = a; k < b; k++) {
    const c = s.charCodeAt(k);
    if (c >= 65 && c <= 90) return true;
  }
  return false;
}

export function containsLetter(s: string, a: number, b: number): boolean {
  for (let k = a; k < b; k++) if (has(s.charCodeAt(k), F_LETTER)) return true;
  return false;
}

/** A secret-bearing query parameter other than `token` (access_token, api_key, sig, …). */
export function secretParamAt(src: Src, i: number): ParamHit | null {
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

/** Unquoted generic value characters: stops at whitespace, quotes and structural delimiters. */
export function isGenericValueChar(c: number): boolean {
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
export function genericSecretAt(src: Src, i: number): ExtraHit | null {
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
    // `os.environ["X"]`, `config[key]`: an identifier indexed in code, not a secret.
    if (/^[A-Za-z_$][\w$.]*\[/.test(value)) return null;
  }
  return { start: i, end: j, redactStart: v, redactEnd: j, rule: "secret value" };
}

/** A header `Authorization: <scheme> <credential>` other than Bearer (Basic, Token, Bot, bare keys). */
export function authorizationOtherAt(src: Src, i: number): number {
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
export function bareBearerAt(src: Src, i: number): number {
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
export function anySchemeUserinfoAt(src: Src, i: number): number {
  if (has(src.before(i), F_SCHEME)) return -1;
  if (!has(src.at(i), F_LETTER)) return -1;
  const e = src.run(i + 1, F_SCHEME);
  return userinfoEnd(src, e);
}

export function wholeHit(i: number, end: number, rule: string): ExtraHit | null {
  return end < 0 ? null : { start: i, end, redactStart: i, redactEnd: end, rule };
}

/** Google API key (`AIza` + 35). */
export function googleKeyAt(src: Src, i: number): ExtraHit | null {
  return wholeHit(i, mFixed(src, i, "AIza", F_URLSAFE, 35), "Google API key");
}

/** AWS key ids with the bearer (ABIA) and context (ACCA) prefixes the reference does not list. */
export function awsExtraKeyIdAt(src: Src, i: number): ExtraHit | null {
  let e = mFixed(src, i, "ABIA", F_UPDIG, 16);
  if (e < 0) e = mFixed(src, i, "ACCA", F_UPDIG, 16);
  return wholeHit(i, e, "AWS key id");
}

/**
 * The [A-Za-z0-9_-] run containing offset j, read once per run: a run of `sk-sk-sk-…` offers a
 * candidate every third character, and reading the rest of the run for each was quadratic.
 */
class UrlsafeRun {
  from = -1;
  end = -1;
  /** Last digit / uppercase letter in [from, end), or -1. */
  lastDigit = -1;
  lastUpper = -1;
}

const URLSAFE_RUNS = new WeakMap<Src, UrlsafeRun>();

function urlsafeRunAt(src: Src, j: number): UrlsafeRun {
  let memo = URLSAFE_RUNS.get(src);
  if (memo === undefined) {
    memo = new UrlsafeRun();
    URLSAFE_RUNS.set(src, memo);
  }
  if (j >= memo.from && j < memo.end) return memo;
  const e = src.run(j, F_URLSAFE); // may throw NEED_MORE: the memo is only set once the run is known
  let lastDigit = -1;
  let lastUpper = -1;
  for (let k = j; k < e; k++) {
    const c = src.s.charCodeAt(k);
    if (c >= 48 && c <= 57) lastDigit = k;
    else if (c >= 65 && c <= 90) lastUpper = k;
  }
  memo.from = j;
  memo.end = e;
  memo.lastDigit = lastDigit;
  memo.lastUpper = lastUpper;
  return memo;
}

/** OpenAI-style `sk-` keys: mixed case plus a digit, so kebab-case words (`disk-…`) never match. */
export function skKeyAt(src: Src, i: number): ExtraHit | null {
  if (has(src.before(i), F_ALNUM) || !src.lit(i, "sk-")) return null;
  const run = urlsafeRunAt(src, i + 3);
  const e = run.end;
  if (e - (i + 3) < 20 || run.lastDigit < i + 3 || run.lastUpper < i + 3) return null;
  return wholeHit(i, e, "API key");
}

/** Slack refresh/config tokens and app-level tokens (`xoxr-`, `xoxe-`, `xapp-`). */
export function slackExtraAt(src: Src, i: number): ExtraHit | null {
  if (!src.lit(i, "xoxr-") && !src.lit(i, "xoxe-") && !src.lit(i, "xapp-")) return null;
  const e = src.run(i + 5, F_SLACK);
  return e - (i + 5) >= 10 ? wholeHit(i, e, "Slack token") : null;
}

export function authorizationOtherHit(src: Src, i: number): ExtraHit | null {
  return wholeHit(i, authorizationOtherAt(src, i), "authorization header");
}

export function bareBearerHit(src: Src, i: number): ExtraHit | null {
  return wholeHit(i, bareBearerAt(src, i), "bearer token");
}

export function anySchemeUserinfoHit(src: Src, i: number): ExtraHit | null {
  return wholeHit(i, anySchemeUserinfoAt(src, i), "URL userinfo");
}

export function secretParamHit(src: Src, i: number): ExtraHit | null {
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

export type ExtraMatcher = (src: Src, i: number) => ExtraHit | null;

/**
 * This port's rules beyond the reference, indexed by the characters they can start
 * with (each matcher checks its own left boundary). Each rule scans independently (a
 * match consumes text only for its own rule), so one rule's hit never hides another's
 * overlapping hit; overlaps are merged when the spans are combined.
 */
export const EXTRA_RULES: readonly ExtraMatcher[] = [
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
/**
 * What each rule of EXTRA_RULES needs literally at its start (its "ingredient"): a complete text
 * without it cannot match the rule anywhere, so scanExtra skips the rule instead of trying it at
 * every word. Same order as EXTRA_RULES. `authorization` may fold `i` onto ı/İ, as litFold does.
 */
const RULE_INGREDIENTS: readonly RegExp[] = [
  /AIza/,
  /ABIA|ACCA/,
  /sk-/,
  /xox[re]-|xapp-/,
  /[aA][uU][tT][hH][oO][rR][iIıİ][zZ][aA][tT][iIıİ][oO][nN]/,
  /[bB][eE][aA][rR][eE][rR]/,
  /:\/\//,
  /[?&]/,
];
/** Any of RULE_INGREDIENTS: prose usually has none, and one test is cheaper than eight. */
const ANY_INGREDIENT = new RegExp(RULE_INGREDIENTS.map((re) => re.source).join("|"));
/** Index in EXTRA_RULES of genericSecretAt, whose ingredient is SECRET_NAME_RE. */
const RULE_GENERIC_SECRET = 8;
/**
 * genericSecretAt's shape without the value: an identifier ending in a key name (ASCII
 * case-insensitively, as it compares), an optional quote, spaces or tabs, then `:` or `=`.
 * Built from SECRET_KEY_SUFFIXES itself: a hand-kept copy once lacked `secret_key`, so a
 * complete text skipped the rule that a stream (which cannot skip it) applied.
 */
const SECRET_NAME_RE = new RegExp(
  `(?:${SECRET_KEY_SUFFIXES.map((k) => k.replace(/[-_]/g, "\\$&")).join("|")})["']?[ \t]*[:=]`,
  "gi",
);

export const EXTRA_BY_CHAR: readonly (readonly number[])[] = (() => {
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
export function mFixed(src: Src, i: number, prefix: string, flag: number, count: number): number {
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
export const EXTRA_CANDIDATE_RE = /[?&Ax]|(?<![A-Za-z0-9])[A-Za-z0-9_.-]/g;

/** Runs every extra rule in one pass over the text, each rule skipping only past its own matches. */
export function scanExtra(src: Src, start: number, out: ExtraHit[]): number {
  const s = src.s;
  const blockedUntil: number[] = [];
  for (let r = 0; r < EXTRA_RULES.length; r++) blockedUntil.push(start);
  if (src.eof) {
    // A complete text without a rule's fixed ingredient cannot match it anywhere: skip the rule
    // instead of trying it at every word. (A stream keeps trying: the ingredient may still arrive,
    // and the rule's "need more" at the end is what holds the tail.)
    const tail = start === 0 ? s : s.slice(start);
    const any = ANY_INGREDIENT.test(tail);
    let open = 0;
    for (let r = 0; r < RULE_INGREDIENTS.length; r++) {
      if (any && (RULE_INGREDIENTS[r] as RegExp).test(tail)) open++;
      else blockedUntil[r] = src.n;
    }
    SECRET_NAME_RE.lastIndex = start;
    if (SECRET_NAME_RE.test(s)) open++;
    else blockedUntil[RULE_GENERIC_SECRET] = src.n;
    if (open === 0) return src.n;
  }
  const re = EXTRA_CANDIDATE_RE;
  let i = start;
  try {
    for (;;) {
      re.lastIndex = i;
      // test() leaves lastIndex just past the one-character match, without building a match array.
      if (!re.test(s)) return src.n;
      i = re.lastIndex - 1;
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
