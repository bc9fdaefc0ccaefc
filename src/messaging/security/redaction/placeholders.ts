/**
 * What looks like a secret but is not one: documentation placeholders, template references and
 * published digests. Each judgement is narrow on purpose (an attacker picks the text): a value only
 * passes when it reads as a placeholder a human wrote, or a digest has exactly its algorithm's length
 * behind its algorithm's name.
 */

export const PLACEHOLDER_WORDS = new Set([
  "null",
  "none",
  "nil",
  "true",
  "false",
  "undefined",
  "redacted",
  "your_password",
  "changeme",
  "change_me",
  "change-me",
  "replaceme",
  "replace_me",
  "replace-me",
  "placeholder",
  "example",
  "dummy",
  "secret",
  "password",
]);

/**
 * `your-…` / `…_here` / `my_…` spellings docs use for "put yours here" (`YOUR_API_KEY_HERE`,
 * `your-token`, `xoxb-your-bot-token`): `your` leading the value or standing as a word, and only
 * when the whole value is letters between separators. Random key characters spell `YOUR` or start
 * with `My-` often enough (`AKIAAAAAAAAAAAAYOURA`, `My-f4uGB3o0f…`) that a substring test lets real
 * keys through.
 */
const YOURS = /^your|[^A-Za-z0-9]your[-_. ]|[_-]here$|^my[_-]/i;
const WORDS_ONLY = /^[A-Za-z]+(?:[-_. ][A-Za-z]+)*$/;

function isYoursPlaceholder(v: string): boolean {
  return mayBeYours(v, 0, v.length) && WORDS_ONLY.test(v) && YOURS.test(v);
}

/** Cheap necessary condition for YOURS on `s[a:b]`: a `y`, a trailing `here`, or a leading `my`. */
function mayBeYours(s: string, a: number, b: number): boolean {
  if (b - a >= 2 && (s.charCodeAt(a) | 0x20) === 109 && (s.charCodeAt(a + 1) | 0x20) === 121) return true;
  if (b - a >= 4 && (s.charCodeAt(b - 1) | 0x20) === 101 && (s.charCodeAt(b - 4) | 0x20) === 104) return true;
  for (let k = a; k < b; k++) if ((s.charCodeAt(k) | 0x20) === 121) return true;
  return false;
}
/** An environment-variable name used as a value (`REPLACE_ME`, `API_TOKEN`): capitals and `_` only. */
const ENV_NAME = /^[A-Z][A-Z_]*_[A-Z_]*$/;

/** A whole printf-style format slot, optionally followed by the quote or separator that ends it. */
const PRINTF_SLOT = /^%(?:\([\w.-]*\))?[sdr](?:$|["'`,;)\s])/;

/** Template placeholders and empty markers are not secrets (`${PASS}`, `<token>`, `****`, `null`, `YOUR_KEY`). */
export function isPlaceholderValue(v: string): boolean {
  if (v.length === 0) return true;
  const c0 = v.charCodeAt(0);
  if (c0 === 60 || c0 === 123) return true; // <token>, {token}
  if (c0 === 36 && v.length > 1) return true; // $VAR, ${VAR}, $(cmd)
  // A printf-style slot (`%s`, `%(password)s`), not a value that merely starts with `%s` (a real
  // password may: `%sqC#…` is one, and it must not pass as a format string).
  if (PRINTF_SLOT.test(v)) return true;
  if (/^(?:\*+|x{3,}|X{3,}|\.{3,}|…)$/.test(v)) return true;
  // An elided example (`sk_test_...`, `sk-...your-key...`) shows where a value goes, not the value.
  if (v.includes("...") || v.includes("…")) return true;
  if (isYoursPlaceholder(v) || ENV_NAME.test(v) || isRepeatedCharToken(v, 0, v.length)) return true;
  return PLACEHOLDER_WORDS.has(v.toLowerCase());
}

/** A provider-token match that is a doc's placeholder: mostly one filler character, or a `your-` word inside. */
export function isPlaceholderToken(s: string, a: number, b: number): boolean {
  return isRepeatedCharToken(s, a, b, 16) || (mayBeYours(s, a, b) && isYoursPlaceholder(s.slice(a, b)));
}

/**
 * A token-shaped match that is mostly one filler character (the characters docs fill a placeholder
 * with: `xxxx`, `XXXX`, `****`, `0000`, `....`, `####`) (`ghp_xxxx…`, `AKIAXXXXXXXXXXXXXXXX`): a
 * placeholder a doc wrote, not a key (no real key is 60% `x`). Only the conventional fillers count:
 * a run of another letter (`ghp_bbbb…`) is how tests stand in for a real key, and stays redacted.
 */
export function isRepeatedCharToken(s: string, a: number, b: number, minLength = 8): boolean {
  const len = b - a;
  if (len < minLength) return false;
  // One pass, one counter per filler (x X * 0 . #).
  let x = 0;
  let upperX = 0;
  let star = 0;
  let zero = 0;
  let dot = 0;
  let hash = 0;
  for (let k = a; k < b; k++) {
    const c = s.charCodeAt(k);
    if (c === 0x78) x++;
    else if (c === 0x58) upperX++;
    else if (c === 0x2a) star++;
    else if (c === 0x30) zero++;
    else if (c === 0x2e) dot++;
    else if (c === 0x23) hash++;
  }
  const top = Math.max(x, upperX, star, zero, dot, hash);
  return top * 5 >= len * 3;
}

/** Base64 data length (without padding) of each SRI / npm integrity digest, by its algorithm prefix. */
const DIGEST_DATA_LENGTH: ReadonlyArray<readonly [string, number]> = [
  ["sha512-", 86],
  ["sha384-", 64],
  ["sha256-", 43],
  ["sha1-", 27],
];

/**
 * An integrity digest (`sha512-<86 base64>==`): the run right after its algorithm's prefix, exactly
 * that algorithm's length. Published hashes of public packages, not secrets.
 */
export function isIntegrityDigest(s: string, start: number, dataEnd: number): boolean {
  for (const [prefix, length] of DIGEST_DATA_LENGTH) {
    if (dataEnd - start === length && start >= prefix.length && s.startsWith(prefix, start - prefix.length))
      return true;
  }
  return false;
}
