import { F_DIGIT, has } from "./chars.js";
import {
  isAsciiWs,
  Q_ALNUM,
  Q_COLON,
  Q_DASH,
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
 *   (`[`, `]`, `<`), a `\` or `&` (decoded readings), ANSI escapes, and any character either quiet
 *   check declines.
 * - Every reading is the literal minus some delimiters and format characters. So a run of
 *   key characters is measured with those TRANSPARENT (they neither end nor count in a run, except
 *   `_`, which counts): no reading can join a longer run than that.
 * - A colon is judged against both neighbours it can have in a reading: the adjacent character
 *   and the nearest one that is not deletable.
 * - Substring rules (dash prefixes, `eyJ`, `http`, key names) are tested on the literal with every
 *   deletable character removed: a pattern without such characters that occurs in any reading
 *   occurs there too. Key names are tested without the boundary the quiet check demands after
 *   them, which only widens the test (`api_key` is tested as `apikey`, also a listed name).
 *
 * Pinned by test/messaging/security/display-quiet.test.ts: wherever this answers true, the full
 * display pass returns the text unchanged.
 */

/** Emphasis, code and strike markers: every rendering deletes them. */
function isMarker(c: number): boolean {
  return c === 42 || c === 95 || c === 126 || c === 96;
}

/** Key names as substrings, underscores removed (every `_` form has its underscore-free twin listed). */
const KEY_NAME_ANYWHERE_RE =
  /token|secret|pass(?:word|wd|phrase)|api-?key|accesskey|privatekey|authorization|bearer/i;
const HAS_FORMAT_CHAR = /\p{Cf}/u;
const MARKERS_RE = /[*_~`]+/g;
/** Once markers are gone, a `|` next to another `|` is a spoiler delimiter some rendering deletes. */
const SPOILER_PIPES_RE = /\|{2,}/g;

/** Whether `redactAll` provably leaves `text` and every rendering of it unchanged (see above). */
export function quietInEveryReading(text: string): boolean {
  const n = text.length;
  let run = 0;
  let digits = 0; // digits just before the current offset, deletable characters skipped
  let prevKept = 32; // nearest preceding character that no reading deletes
  let prevNonMarker = 32; // nearest preceding character that is not a marker (pipes included)
  let bareColon = false;
  let nonAscii = false;
  let deletable = false;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c >= 128) {
      // Python folds these onto ASCII letters of key names (quiet.ts declines them too).
      if (c === 0x130 || c === 0x131 || c === 0x17f || c === 0x212a) return false;
      nonAscii = true;
      run = 0;
      digits = 0;
      prevKept = c;
      prevNonMarker = c;
      continue;
    }
    if (isMarker(c)) {
      deletable = true;
      if (c === 95 && ++run > QUIET_MAX_RUN) return false; // `_` counts in a run where a reading keeps it
      continue;
    }
    if (c === 124) {
      let j = i + 1;
      while (j < n && isMarker(text.charCodeAt(j))) j++;
      const spoiler = prevNonMarker === 124 || (j < n && text.charCodeAt(j) === 124);
      prevNonMarker = 124;
      if (spoiler) {
        deletable = true;
        continue;
      }
      // A lone `|` (a table's) shows in every reading: an ordinary inert character below.
    } else prevNonMarker = c;
    // Links, decoded readings and escapes make readings this check does not model.
    if (c === 91 || c === 93 || c === 60 || c === 92 || c === 38) return false;
    const k = QUIET[c] as number;
    if (k === 0) return false;
    if (k === Q_ALNUM || k === Q_DASH || k === Q_RUN_SYMBOL) {
      if (++run > QUIET_MAX_RUN) return false;
      digits = has(c, F_DIGIT) ? digits + 1 : 0;
      prevKept = c;
      continue;
    }
    run = 0;
    if (k === Q_COLON) {
      const prevAdjacent = i > 0 ? text.charCodeAt(i - 1) : 32;
      const nextAdjacent = i + 1 < n ? text.charCodeAt(i + 1) : -1;
      // Past markers and every pipe: a superset of the neighbours a reading can give the colon.
      let j = i + 1;
      while (j < n && (isMarker(text.charCodeAt(j)) || text.charCodeAt(j) === 124)) j++;
      const nextKept = j < n ? text.charCodeAt(j) : -1;
      if (isAsciiWs(nextAdjacent) || isAsciiWs(nextKept)) {
        // `1: ` may start a Telegram token in quiet.ts's terms: both possible left neighbours must be non-digits.
        if (has(prevAdjacent, F_DIGIT) || has(prevKept, F_DIGIT)) return false;
      }
      if (!isAsciiWs(nextAdjacent) || !isAsciiWs(nextKept)) {
        // A colon that may end a reading, or follow six digits, is for the full scan to judge.
        if (nextAdjacent < 0 || nextKept < 0 || digits >= 6) return false;
        bareColon = true;
      }
    }
    digits = 0;
    prevKept = c;
  }
  if (nonAscii && HAS_FORMAT_CHAR.test(text)) return false;
  if (bareColon && text.indexOf("@") >= 0) return false;
  const kept = deletable ? text.replace(MARKERS_RE, "").replace(SPOILER_PIPES_RE, "") : text;
  if (QUIET_DASH_EOF_RE.test(kept)) return false;
  if (kept.indexOf("eyJ") >= 0 || kept.indexOf("http") >= 0) return false;
  return !KEY_NAME_ANYWHERE_RE.test(kept);
}
