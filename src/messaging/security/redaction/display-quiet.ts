import {
  isAsciiWs,
  Q_ALNUM,
  Q_COLON,
  Q_DASH,
  Q_DOT,
  Q_INERT,
  Q_RUN_SYMBOL,
  QUIET,
  QUIET_DASH_EOF_RE,
  QUIET_MAX_RUN,
} from "./quiet.js";

/*
 * The display pass (display-safety.ts) redacts a message under several READINGS: the literal, and
 * renderings that delete emphasis/code/strike/spoiler delimiters (`*`, `_`, `~`, `` ` ``, `||`) and
 * format characters. Most messages are prose in which no reading can hold anything, yet each reading
 * costs a scan. This check proves, in one pass over the literal, that `redactAll` leaves EVERY
 * reading unchanged, by the same argument as quietCredentialCut / quietExfiltrationCut (quiet.ts),
 * made robust to deletions:
 *
 * - It declines (false) whenever a reading could differ otherwise: link or Slack-link syntax
 *   (`[`, `]`, `<`), a `\` or `&` (decoded readings), format characters, ANSI escapes, and any
 *   character either quiet check declines.
 * - Every reading is the literal minus some delimiters. So a run of key characters is measured
 *   with those TRANSPARENT (they neither end nor count in a run, except `_`, which counts): no
 *   reading can join a longer run than that.
 * - A colon is judged against both neighbours it can have in a reading: the adjacent character
 *   and the nearest one that is not deletable.
 * - Substring rules (dash prefixes, `eyJ`, `http`, key names) are tested on the literal with every
 *   deletable character removed: a pattern without such characters that occurs in any reading
 *   occurs there too. When no deleted run has a pattern character ([A-Za-z0-9-]) on both sides,
 *   deleting cannot join one, and the literal itself is tested. Key names are tested without the
 *   boundary the quiet check demands after them, which only widens the test (`api_key` is tested
 *   as `apikey`, also a listed name).
 *
 * Pinned by test/messaging/security/display-quiet.test.ts: wherever this answers true, the full
 * display pass returns the text unchanged, and every rendering passes quiet.ts's own checks.
 */

// What one ASCII character is to this check (0: decline).
const D_RUN = 1; // [A-Za-z-/+]: counts in a run
const D_DIGIT = 2; // [0-9]: counts in a run and in the digits before a colon
const D_MARKER = 3; // `*` `~` `` ` ``: deleted by every rendering
const D_UNDERSCORE = 4; // `_`: deleted by one rendering, kept (and counted in a run) by another
const D_PIPE = 5; // `|`: a spoiler delimiter next to another `|`, else table text
const D_DOT = 6; // ends a run, not a digit run's neighbour for a colon
const D_COLON = 7;
const D_INERT = 8; // ends runs, shown by every reading

const D_CLASS = new Uint8Array(128);
(() => {
  for (let c = 0; c < 128; c++) {
    const q = QUIET[c] as number;
    if (q === Q_ALNUM) D_CLASS[c] = c >= 48 && c <= 57 ? D_DIGIT : D_RUN;
    else if (q === Q_DASH || q === Q_RUN_SYMBOL) D_CLASS[c] = D_RUN;
    else if (q === Q_DOT) D_CLASS[c] = D_DOT;
    else if (q === Q_COLON) D_CLASS[c] = D_COLON;
    else if (q === Q_INERT) D_CLASS[c] = D_INERT;
  }
  for (const ch of "*~`") D_CLASS[ch.charCodeAt(0)] = D_MARKER;
  D_CLASS[95] = D_UNDERSCORE;
  D_CLASS[124] = D_PIPE;
  // Links, decoded readings and escapes make readings this check does not model.
  for (const ch of "[]<\\&") D_CLASS[ch.charCodeAt(0)] = 0;
})();

function isMarker(c: number): boolean {
  return c === 42 || c === 95 || c === 126 || c === 96;
}

/** A character some pattern of the substring rules holds: [A-Za-z0-9-]. */
function isPatternChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 45;
}

/** Key names as substrings, underscores removed (every `_` form has its underscore-free twin listed). */
const KEY_NAMES = "token|secret|pass(?:word|wd|phrase)|api-?key|accesskey|privatekey|authorization|bearer";
/**
 * Every substring that declines, in one pass: QUIET_DASH_EOF_RE's prefixes, a JWT's `eyJ` and a URL's
 * `http` as written, and the key names in any ASCII case (spelled out, since the others are case-exact).
 */
const LOUD_SUBSTRING_RE = new RegExp(`${QUIET_DASH_EOF_RE.source}|eyJ|http|${anyAsciiCase(KEY_NAMES)}`);

/** `words` (lower-case letters, no classes) in any ASCII case, as the `i` flag matches them. */
function anyAsciiCase(words: string): string {
  return words.replace(/[a-z]/g, (l) => `[${l}${l.toUpperCase()}]`);
}
const FORMAT_CHAR = /\p{Cf}/u;
const MARKERS_RE = /[*_~`]+/g;
/** Once markers are gone, a `|` next to another `|` is a spoiler delimiter some rendering deletes. */
const SPOILER_PIPES_RE = /\|{2,}/g;

/** Whether `redactAll` provably leaves `text` and every rendering of it unchanged (see above). */
export function quietInEveryReading(text: string): boolean {
  const n = text.length;
  let run = 0;
  let digits = 0; // digits just before the current offset, deletable characters skipped
  let deletedSinceKept = false;
  let joins = false; // some deleted run has a pattern character on both sides
  let bareColon = false;
  let nonAscii = false;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    // ASCII letters first, by range: most of any text (a digit or `-` takes the table below).
    if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90)) {
      if (++run > QUIET_MAX_RUN) return false;
      digits = 0;
      if (deletedSinceKept) {
        if (isPatternChar(keptBefore(text, i))) joins = true;
        deletedSinceKept = false;
      }
      continue;
    }
    if (c === 32) {
      // A space (the next most common) is inert: it ends runs, and every reading shows it.
      run = 0;
      digits = 0;
      deletedSinceKept = false;
      continue;
    }
    if (c >= 128) {
      // Python folds these onto ASCII letters of key names (quiet.ts declines them too).
      if (c === 0x130 || c === 0x131 || c === 0x17f || c === 0x212a) return false;
      nonAscii = true;
      run = 0;
      digits = 0;
      deletedSinceKept = false;
      continue;
    }
    const k = D_CLASS[c] as number;
    // Digits and the other run characters (`-`, `/`, `+`).
    if (k === D_RUN || k === D_DIGIT) {
      if (++run > QUIET_MAX_RUN) return false;
      digits = k === D_DIGIT ? digits + 1 : 0;
      if (deletedSinceKept) {
        if (isPatternChar(c) && isPatternChar(keptBefore(text, i))) joins = true;
        deletedSinceKept = false;
      }
      continue;
    }
    if (k === D_INERT || k === D_DOT) {
      run = 0;
      digits = 0;
      deletedSinceKept = false;
      continue;
    }
    if (k === D_MARKER || k === D_UNDERSCORE) {
      // `_` counts in a run where a reading keeps it.
      if (k === D_UNDERSCORE && ++run > QUIET_MAX_RUN) return false;
      deletedSinceKept = true;
      continue;
    }
    if (k === D_PIPE) {
      let j = i + 1;
      while (j < n && isMarker(text.charCodeAt(j))) j++;
      let h = i - 1;
      while (h >= 0 && isMarker(text.charCodeAt(h))) h--;
      if ((h >= 0 && text.charCodeAt(h) === 124) || (j < n && text.charCodeAt(j) === 124)) {
        deletedSinceKept = true; // a spoiler delimiter
        continue;
      }
      // A lone `|` (a table's) shows in every reading: an inert character.
      run = 0;
      digits = 0;
      deletedSinceKept = false;
      continue;
    }
    if (k !== D_COLON) return false;
    run = 0;
    const prevAdjacent = i > 0 ? text.charCodeAt(i - 1) : 32;
    const nextAdjacent = i + 1 < n ? text.charCodeAt(i + 1) : -1;
    // Past markers and every pipe, both ways: a superset of the neighbours a reading can give it.
    let j = i + 1;
    while (j < n && isMarkerOrPipe(text.charCodeAt(j))) j++;
    const nextKept = j < n ? text.charCodeAt(j) : -1;
    if (isAsciiWs(nextAdjacent) || isAsciiWs(nextKept)) {
      // `1: ` may start a Telegram token in quiet.ts's terms: both possible left neighbours must be non-digits.
      if (isDigit(prevAdjacent) || isDigit(keptBefore(text, i))) return false;
    }
    if (!isAsciiWs(nextAdjacent) || !isAsciiWs(nextKept)) {
      // A colon that may end a reading, or follow six digits, is for the full scan to judge.
      if (nextAdjacent < 0 || nextKept < 0 || digits >= 6) return false;
      bareColon = true;
    }
    digits = 0;
    deletedSinceKept = false;
  }
  if (nonAscii && FORMAT_CHAR.test(text)) return false;
  if (bareColon && text.indexOf("@") >= 0) return false;
  const kept = joins ? text.replace(MARKERS_RE, "").replace(SPOILER_PIPES_RE, "") : text;
  return !LOUD_SUBSTRING_RE.test(kept);
}

/**
 * The nearest character before `i` that is neither a marker nor a pipe (32 at the start): a
 * superset, for the checks that use it, of the left neighbours a reading can give offset `i`.
 * Only called after a run of such characters or at a colon, so each run is read back once.
 */
function keptBefore(text: string, i: number): number {
  let h = i - 1;
  while (h >= 0 && isMarkerOrPipe(text.charCodeAt(h))) h--;
  return h >= 0 ? text.charCodeAt(h) : 32;
}

function isMarkerOrPipe(c: number): boolean {
  return isMarker(c) || c === 124;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
