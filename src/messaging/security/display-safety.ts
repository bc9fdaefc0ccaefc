/**
 * Credential redaction against what a chat platform DISPLAYS, not only the bytes it is sent.
 *
 * A literal scan is not enough wherever markup is rendered away: `AKIA**IOSFODNN7EXAMPLE**` and
 * `[AKIA](https://x)IOSFODNN7EXAMPLE` match no credential pattern as written, yet the reader sees an
 * intact key. The rendering happens AFTER the scan, so the scan has to anticipate it. Every renderer
 * that hides markup runs {@link redactForDisplay} at its own seal (spec: "Redaction is applied against
 * the form a channel RENDERS").
 *
 * The text is graded under several READINGS, each a form a reader can end up seeing: the literal
 * with invisible format characters (Cf: zero-width, bidi, BOM, soft hyphen) dropped; one rendering
 * pass (links collapsed to their label, emphasis/code/strike/spoiler delimiters deleted); the same
 * pass keeping `_`; the fully settled rendering; and each of those after CommonMark's character
 * decoding (backslash escapes and HTML entities, named, decimal and hex), because a Markdown renderer
 * shows `ghp\_…` as `ghp_…` and `AKIA&#73;OSF…` as `AKIAIOSF…`. The original graded only the first
 * two. The third closes a gap in them: deleting every `_` also destroys the `_` INSIDE `ghp_…`,
 * `sk_live_…` or `dop_v1_…`, so markup splitting such a key was invisible to every reading. Whatever
 * a reading reveals is redacted in that reading's form, so the message loses its markup; formatting
 * is worth less than a key, and only a message that actually holds one pays.
 */

import MarkdownIt from "markdown-it";
import { REDACTION_MARKER, redactAll } from "./index.js";
import { quietInEveryReading } from "./redaction/display-quiet.js";

/** Maps text to text with every credential it recognises replaced by a marker. Must be idempotent. */
export type Redactor = (text: string) => string;

/** Any CSI sequence, not only SGR colours as in the original: a cursor move or erase is noise too. */
const ANSI_CSI = /\x1b\[[0-?]*[ -/]*[@-~]/g;
const FORMAT_CHARS = /\p{Cf}/gu;
/**
 * `[label](url)` (one level of balanced parentheses in the url, as CommonMark allows) and the
 * reference form `[label][ref]`: only the label shows. `[` is excluded from the label and each
 * alternative starts with its own character, so `[[[[…` or `[a]([a](…` cannot go quadratic.
 */
const MD_LINK = /\[([^[\]\n]*)\](?:\((?:[^()\n]|\([^()\n]*\))*\)|\[[^[\]\n]*\])/g;
/** Slack's `<url|label>`: only the label shows. */
const SLACK_LINK = /<[^<>|\n]*\|([^<>\n]*)>/g;
/** Delimiters platforms consume: emphasis, code, strike, and Discord's `||` spoiler (a lone `|` is text). */
const DELIMITERS = /(?:[*_~`]|\|\|)+/g;
const DELIMITERS_BUT_UNDERSCORE = /(?:[*~`]|\|\|)+/g;

/** Remove ANSI CSI escapes. Callers that redact around a conversion must normalise with this first. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI_CSI, "");
}

/** Every format character is outside ASCII: pure-ASCII text (most of it) skips the Unicode scan. */
const NON_ASCII = /[^\x00-\x7f]/;
const HAS_FORMAT_CHAR = /\p{Cf}/u;

/** Drop Unicode format characters (category Cf): rendered as nothing, so a key split by one reads whole. */
export function dropFormatChars(text: string): string {
  if (!NON_ASCII.test(text) || !HAS_FORMAT_CHAR.test(text)) return text;
  return text.replace(FORMAT_CHARS, "");
}

/** Links collapsed to their labels: the first step of a rendering pass. */
function unlink(text: string): string {
  // The link patterns need `](`/`][` or a `<`; most text has none, and one test is cheaper than replacing.
  if (!mayLink(text)) return text;
  let unlinked = text;
  if (unlinked.includes("](") || unlinked.includes("][")) unlinked = unlinked.replace(MD_LINK, "$1");
  if (unlinked.includes("<") && unlinked.includes("|")) unlinked = unlinked.replace(SLACK_LINK, "$1");
  return unlinked;
}
/** `](`, `][` or `<`: three substring searches beat one alternation regex on every message. */
function mayLink(text: string): boolean {
  return text.includes("<") || text.includes("](") || text.includes("][");
}

/** One rendering pass. Links first (a url's own `_` or `~` must not move label edges), format chars last. */
function renderOnce(text: string, delimiters: RegExp): string {
  return deleteDelimiters(unlink(text), delimiters);
}

/** `mayHoldFormatChars` false: the caller knows the text has none (deleting characters adds none). */
function deleteDelimiters(unlinked: string, delimiters: RegExp, mayHoldFormatChars = true): string {
  const deleted = unlinked.replace(delimiters, "");
  return mayHoldFormatChars ? dropFormatChars(deleted) : deleted;
}

/** The original's canonical form: one pass, every delimiter deleted. */
function renderedOnce(text: string): string {
  return renderOnce(text, DELIMITERS);
}

/** One pass keeping `_`, which the canonical form deletes even inside `ghp_…`, `sk_live_…` or `dop_v1_…`. */
function renderedKeepingUnderscores(text: string): string {
  return renderOnce(text, DELIMITERS_BUT_UNDERSCORE);
}

/** Bounds the passes on adversarial nesting (`[[[a](b)](c)](d)` peels one level per pass). */
const MAX_PASSES = 16;
/** Everything a pass could still consume, for input nested deeper than {@link MAX_PASSES}. */
const RENDERABLE = /[[\]<|*_~`]|\p{Cf}/gu;

/**
 * Reduce `text` to what the platform SHOWS: links to their labels, delimiter runs deleted, format
 * characters dropped (last, so `*`+ZWSP+`*` still counts as delimiters). Idempotent: a pass can
 * create new syntax (`[a]*(b)` becomes a link once `*` is gone), so passes repeat until nothing
 * changes, and input nested past {@link MAX_PASSES} loses all remaining markup characters instead.
 */
export function canonicalizeDisplay(text: string): string {
  return settle(text, renderedOnce(text), MAX_PASSES - 1);
}

/** Continues {@link canonicalizeDisplay} from one pass already taken (`once` = one pass over `before`). */
function settle(before: string, once: string, passesLeft: number): string {
  let previous = before;
  let current = once;
  for (let pass = 0; pass < passesLeft && current !== previous; pass += 1) {
    previous = current;
    current = renderedOnce(current);
  }
  return current === previous ? current : current.replace(RENDERABLE, "");
}

/** CommonMark's own decoder (backslash escapes, then named/decimal/hex references): the web chat's renderer. */
const commonMarkUtils = new MarkdownIt().utils;

/** The text a CommonMark renderer shows for `text`'s escapes and character references, markup aside. */
export function decodeCharacterReferences(text: string): string {
  return commonMarkUtils.unescapeAll(text);
}

/** The literal with escapes and references decoded (and format characters dropped, as every reading). */
function decoded(text: string): string {
  return decodeCharacterReferences(dropFormatChars(text));
}

/**
 * Every form a reader may see: the original's two first (the literal with format characters
 * dropped, and one rendering pass), then the port's additions: keeping `_`, settled, and the decoded
 * forms. Decoding comes first in those because it is what makes `\_` an underscore the rendering
 * must keep. Redacting under all of them is what makes {@link redactForDisplay} a fixed point for
 * each, which the sever checks rely on.
 */
export const READINGS: readonly ((text: string) => string)[] = [
  dropFormatChars,
  renderedOnce,
  renderedKeepingUnderscores,
  canonicalizeDisplay,
  decoded,
  (text) => renderedKeepingUnderscores(decoded(text)),
  (text) => canonicalizeDisplay(decoded(text)),
];

/** Characters a rendering pass consumes (format characters are dropped by every reading anyway). */
const MARKUP = /[[\]<|*_~`]/;
/** Markup a rendering deletes by itself; brackets change a rendering only as link syntax (`](`, `][`). */
const DELETED_MARKUP = /[<|*_~`]/;

/** Whether some rendering of `literal` can differ from it (a redaction marker's brackets alone cannot). */
function renderingsMayDiffer(literal: string): boolean {
  return DELETED_MARKUP.test(literal) || literal.includes("](") || literal.includes("][");
}

/**
 * The distinct forms {@link READINGS} produce for `text`, computed lazily and sharing their
 * intermediate results: a reading that cannot differ from one already given is skipped (no markup:
 * every rendering is the literal; no `\` or `&` and no format character: every decoded form is its
 * undecoded twin). Pinned to READINGS by a property in test/messaging/security/display-safety.test.ts.
 *
 * The forms that keep `_` come first. Grading adopts the first reading that finds a key, and a form
 * deleting `_` also unmakes every other key's prefix (`ghs_…` reads `ghs…`): adopted while another
 * key still hid in a `_`-keeping form, it would show that key's body with nothing left to match it.
 */
export function displayReadings(text: string): Generator<string> {
  return readingsFor(text);
}

function* readingsFor(text: string): Generator<string> {
  const formatChars = NON_ASCII.test(text) && HAS_FORMAT_CHAR.test(text);
  const literal = formatChars ? text.replace(FORMAT_CHARS, "") : text;
  yield literal;
  const rendered = MARKUP.test(literal) && renderingsMayDiffer(literal);
  const unlinked = rendered ? unlink(text) : text;
  const hasUnderscore = text.includes("_");
  // Without `_` the one pass keeps every `_` there is, so it is given with the forms that keep it.
  let once = rendered && !hasUnderscore ? deleteDelimiters(unlinked, DELIMITERS, formatChars) : literal;
  if (rendered)
    yield hasUnderscore ? deleteDelimiters(unlinked, DELIMITERS_BUT_UNDERSCORE, formatChars) : once;
  const plain =
    literal.includes("\\") || literal.includes("&") ? decodeCharacterReferences(literal) : literal;
  const decodes = plain !== literal;
  // `plain` is rendered with its format characters already gone, so its renderings are new forms when
  // decoding changed something or format characters stood inside markup (`|`+ZWSP+`|` is a spoiler
  // there), and when decoding made markup or a format character (`&#8203;`) a rendering removes.
  const decodedRenders =
    (decodes || formatChars) &&
    (MARKUP.test(plain) || (NON_ASCII.test(plain) && HAS_FORMAT_CHAR.test(plain)));
  if (decodes) yield plain;
  if (decodedRenders) yield renderedKeepingUnderscores(plain);
  if (rendered) {
    if (hasUnderscore) {
      // Computed this late because a grader that adopts an earlier reading never asks for it.
      once = deleteDelimiters(unlinked, DELIMITERS, formatChars);
      yield once;
    }
    // A pass over text no rendering can change gives it back: `once` is then already settled (given above).
    if (renderingsMayDiffer(once)) yield settle(text, once, MAX_PASSES - 1);
  }
  if (decodedRenders) yield canonicalizeDisplay(plain);
}

/**
 * Whether `redactAll` provably leaves every reading of `text` unchanged, without computing them:
 * quietInEveryReading (redaction/display-quiet.ts) for text without links; for text with links, the
 * literal (urls included) is scanned for real and the renderings, which show each link as its label,
 * are proved quiet on the text with links collapsed (with no `[`, `]` or `<` left, renderings of
 * the collapsed text settle in a few passes and equal those of the original).
 */
const URL_EXTRAS = /[\x1b\\&\u0080-\uffff]/;

function unchangedInEveryReading(text: string): boolean {
  // Quiet text has no link syntax (the check declines `[`, `]` and `<`), so it needs no unlinking
  // first; and text with a `[` cannot be quiet before unlinking, so it skips that attempt.
  if (!text.includes("[") && quietInEveryReading(text)) return true;
  const unlinked = unlink(text);
  if (unlinked === text || !quietInEveryReading(unlinked)) return false;
  // What unlinking removed (the urls) may still hold what quietInEveryReading declines: an escape
  // sequence, a format character, or a `\` or `&` (a query's `&b=2` decodes to itself; only a real
  // escape or entity adds readings).
  if (URL_EXTRAS.test(text)) {
    if (text.includes("\x1b") || (NON_ASCII.test(text) && HAS_FORMAT_CHAR.test(text))) return false;
    if (decodeCharacterReferences(text) !== text) return false;
  }
  return redactAll(text) === text;
}

/**
 * Cannot be reached by a redactor that only replaces what it finds (each adoption then removes a
 * found span for good); it bounds a misbehaving one, and the answer then withholds everything.
 */
const MAX_ADOPTIONS = 64;

/**
 * Redact `text` against every reading a reader can see. ANSI escapes are stripped outright.
 *
 * The result is a fixed point: no reading of it reveals anything more, which is what lets
 * {@link joinsToACredential} attribute any finding to the join alone. `changed` is true when the
 * redactor changed anything (stripping ANSI alone does not count), so a caller that already
 * published the text knows to replace it.
 */
export function redactForDisplay(
  text: string,
  redactor: Redactor = redactAll,
): { text: string; changed: boolean } {
  // Prose in which no reading can hold anything (the common case) skips the readings altogether.
  if (redactor === redactAll && unchangedInEveryReading(text)) return { text, changed: false };
  const stripped = text.includes("\x1b") ? stripAnsi(text) : text;
  let safe = redactor(stripped);
  let changed = safe !== stripped;
  if (changed) {
    // A literal match can stop at markup, an escape or a format character (`ghs_…**tail**`,
    // `xoxe-…&#x50;tail`, `…\u200btail`) while the key runs on behind it, and no later reading of the
    // redacted text sees that tail as part of a key. So read the message deeply (decoded, rendered
    // keeping `_`, neither of which can break a key) both ways: when the redacted literal shows the
    // same as the redacted deep reading, the formatting stays; otherwise the deep reading is sent.
    const deep = renderedKeepingUnderscores(decoded(stripped));
    const deepSafe = redactor(deep);
    if (deepSafe !== deep && renderedKeepingUnderscores(decoded(safe)) !== deepSafe) safe = deepSafe;
  }
  // At most a handful of readings: a list compared by value is cheaper than hashing each into a Set.
  let clean: string[] = [safe];
  let adoptions = 0;
  grading: for (;;) {
    for (const view of readingsFor(safe)) {
      if (clean.includes(view)) continue;
      const redacted = redactor(view);
      if (redacted === view) {
        clean.push(view);
        continue;
      }
      // The reading hid a credential from the scan: emit that reading, redacted, and grade it afresh.
      adoptions += 1;
      if (adoptions > MAX_ADOPTIONS) return { text: REDACTION_MARKER, changed: true };
      safe = redacted;
      changed = true;
      clean = [safe];
      continue grading;
    }
    return { text: safe, changed };
  }
}

/** Contiguous runs longer than this are not read for interior credentials (see {@link readingsOf}). */
const INTERIOR_RUN_PIECES = 4;

/**
 * Every text a reader can assemble from `safe` (pieces already redacted alone), for one reading.
 * Lazy, so a sever exits on the first finding.
 *
 * - the whole sequence read as one (a copy; markup spanning pieces collapses) and each piece read
 *   alone then joined (the screen; a half-finished link keeps its url visible);
 * - each boundary read both ways, prefix and suffix: patterns anchor at both ends, so text beyond
 *   either end can spoil a match the reader still sees across the message break;
 * - interior runs of up to {@link INTERIOR_RUN_PIECES} pieces, for a key framed by a spoiling piece
 *   on each side; capped because every run would be quadratic in an author-controlled piece count.
 */
function* readingsOf(safe: readonly string[], read: (text: string) => string): Generator<string> {
  const alone = safe.map(read);
  const joined = (from: number, to: number): string => safe.slice(from, to).join("");
  const shown = (from: number, to: number): string => alone.slice(from, to).join("");
  const n = safe.length;
  yield read(joined(0, n));
  yield shown(0, n);
  for (let cut = 1; cut < n; cut += 1) {
    const rest = read(joined(cut, n));
    yield read(joined(0, cut));
    yield rest;
    yield shown(0, cut);
    yield shown(cut, n);
    // The head against the remainder as one lump, which collapses markup spanning later pieces.
    yield alone[cut - 1] + rest;
  }
  for (let start = 1; start < n - 1; start += 1) {
    for (let stop = start + 2; stop <= Math.min(start + INTERIOR_RUN_PIECES, n - 1); stop += 1) {
      yield read(joined(start, stop));
      yield shown(start, stop);
    }
  }
}

function sequenceSevers(pieces: readonly string[], redactor: Redactor): boolean {
  const safe = pieces.map((piece) => redactForDisplay(piece, redactor).text);
  const seen = new Set<string>();
  for (const read of READINGS) {
    for (const reading of readingsOf(safe, read)) {
      if (seen.has(reading)) continue;
      seen.add(reading);
      if (redactor(reading) !== reading) return true;
    }
  }
  return false;
}

/**
 * Would a reader shown `pieces` in order (each message redacted ALONE) see a key none of them holds?
 *
 * Sound because {@link redactForDisplay} is a fixed point for one string: whatever a reading of the
 * redacted pieces finds was made by putting pieces together. One piece therefore answers false.
 * `present` maps a piece to the form the sink DELIVERS (trimmed, say); both forms are graded because
 * neither dominates: trimming can join `AKIAIOSF\n` to `  ODNN7EXAMPLE`, and can also break a PEM
 * anchor that needs its trailing space. True means the split is unusable.
 */
export function seversACredential(
  pieces: readonly string[],
  redactor: Redactor = redactAll,
  present?: (piece: string) => string,
): boolean {
  if (sequenceSevers(pieces, redactor)) return true;
  return present !== undefined && sequenceSevers(pieces.map(present), redactor);
}

/**
 * Would a reader shown `head` and then `tail`, as two separately redacted messages, see a key that
 * neither half holds? A message cap cuts the RAW string while the reader sees each piece rendered.
 */
export function joinsToACredential(head: string, tail: string, redactor: Redactor = redactAll): boolean {
  return seversACredential([head, tail], redactor);
}

/**
 * The largest SAMPLED cut at or below `limit` that severs no credential, or 0 for "deliver nothing
 * yet" (the next delivery carries what is withheld).
 *
 * Units: `limit` counts Unicode code points (as the original's Python indices do); the result is a
 * JS string index (UTF-16), safe to pass to `text.slice`, and never inside a surrogate pair.
 *
 * Candidates step back exponentially (limit, then 1, 2, 4 … code points before it): any safe cut
 * will do, and this costs O(log limit) redaction passes over attacker-influenced text per frame
 * instead of O(limit). Prose, where every cut is safe, costs one pass.
 */
export function safeSplitOffset(
  text: string,
  limit: number,
  redactor: Redactor = redactAll,
  present?: (piece: string) => string,
): number {
  if (limit <= 0) return 0;
  const points = Array.from(text);
  if (limit >= points.length) return text.length;
  let offset = limit;
  let step = 0;
  while (offset > 0) {
    const head = points.slice(0, offset).join("");
    if (!seversACredential([head, points.slice(offset).join("")], redactor, present)) return head.length;
    step = step === 0 ? 1 : step * 2;
    offset = limit - step;
  }
  return 0;
}
