/**
 * The ONE parse of the end-of-buffer `[OPTIONS: a | b]` trailer, the max_buttons cap, and the shared
 * display sinks every channel writes model-authored choice text through.
 *
 * A parse duplicated per channel drifts per channel, silently, because each copy reads correctly
 * alone; so every renderer calls `splitOptionsTrailer` and states only the one thing channels
 * genuinely disagree about (`hidePartial`). The overflow numbering, the display-form redaction and
 * the mention defang live here for the same reason: a choice is LLM-authored text landing in a
 * message body, and one sink cannot be sanitised differently from the one beside it.
 *
 * Everything here is pure, and every scan is linear: the parse is a hand-written scanner rather
 * than a backtracking regex, because the input is model output and a prompt-injected reply can be
 * shaped to make a backtracking pattern quadratic.
 *
 * Layer: messaging (leaf + display-safety).
 */
import type { TransportCapabilities } from "../channel/capabilities.js";
import { redactForDisplay } from "../security/display-safety.js";
import { isPyWhitespace, pyStrip } from "./whitespace.js";

/** The capability fields this module reads. */
export type OptionsCaps = Pick<TransportCapabilities, "maxButtons" | "mentionGrammars">;

// ---------------------------------------------------------------------------------------------
// Python whitespace semantics
// ---------------------------------------------------------------------------------------------

/** End index of `text[0:end]` after Python `rstrip()` (every whitespace unit is BMP). */
function rstripEnd(text: string, end: number = text.length): number {
  let e = end;
  while (e > 0 && isPyWhitespace(text.charCodeAt(e - 1))) e--;
  return e;
}

// ---------------------------------------------------------------------------------------------
// chunkText
// ---------------------------------------------------------------------------------------------

/**
 * Blind fixed-width split honouring `capabilities.maxMessageChars`. Lengths are CODE POINTS (the
 * capability is declared in characters, and a UTF-16 count would cut an emoji's surrogate pair into
 * two lone halves the platform rejects or renders as U+FFFD). Empty input has nothing to send, so
 * `[]`; a non-positive limit means "no limit", so one chunk. Markdown-aware splitting is
 * split.ts's job; this is the last-resort slicer.
 */
export function chunkText(text: string, maxChars: number): string[] {
  if (text.length === 0) return [];
  // NaN and non-positive both mean "the channel declared no usable cap".
  if (!(maxChars > 0)) return [text];
  if (!Number.isInteger(maxChars) && Number.isFinite(maxChars)) {
    throw new RangeError(`chunkText: maxChars must be an integer, got ${maxChars}`);
  }
  const chunks: string[] = [];
  let start = 0;
  let count = 0;
  for (let i = 0; i < text.length; ) {
    const code = text.charCodeAt(i);
    const isPair =
      code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    i += isPair ? 2 : 1;
    count++;
    if (count === maxChars) {
      chunks.push(text.slice(start, i));
      start = i;
      count = 0;
    }
  }
  if (start < text.length) chunks.push(text.slice(start));
  return chunks;
}

// ---------------------------------------------------------------------------------------------
// The trailer grammar
// ---------------------------------------------------------------------------------------------

const MARKER = "[OPTIONS:";
/** Case-sensitive: `[options:` is prose a model wrote about the syntax, not the syntax. */
const MARKER_WORD = "[OPTIONS";
/** Some models emit the marker as a markdown link, `[OPTIONS: a | b](OPTIONS)`. */
const LINK_SUFFIX = "(OPTIONS)";
/** CJK-writing models close the ASCII marker with the bracket their script uses. */
const FULLWIDTH_CLOSERS = "］】〕";
/**
 * Emphasis/code wrappers a model puts around the whole marker (`**[OPTIONS: …]**`). Longest first,
 * so `]**` is read as bold rather than as `*` preceded by a stray `*`. `*`/`__` are the same
 * bold/italic grammar as the `**`/`_` forms the original recognised (an extension; options.test.ts).
 */
const WRAPPERS = ["**", "__", "*", "_", "`"] as const;

function isCloser(ch: string | undefined): boolean {
  return ch === "]" || (ch !== undefined && FULLWIDTH_CLOSERS.includes(ch));
}

interface TrailerMatch {
  /** Where the removed trailer begins (the wrapper, if any, else the `[`). */
  start: number;
  /** The text between `[OPTIONS:` and the closer. */
  content: string;
}

/**
 * A wrapper is only recognised where it opens a line: mid-line, `**` / `_` / a backtick before the
 * marker may just as well close emphasis the prose opened (`**note**[OPTIONS: …]**`), and peeling it
 * off would unbalance the body. So only whitespace may sit between the line start and the wrapper.
 */
function opensLine(text: string, at: number): boolean {
  for (let i = at - 1; i >= 0; i--) {
    const code = text.charCodeAt(i);
    if (code === 0x0a) return true;
    if (!isPyWhitespace(code)) return false;
  }
  return true;
}

/**
 * Which content starts are clean, as a prefix-summed "forbidden" count per index in `[0, closer]`.
 * A closer character inside the content is either a label's own bracket - an ASCII `]` closing a
 * `[` opened earlier in the content (`Fix [x] logging`, `a[1]`) - or it must end its choice (only
 * whitespace before the next `|` or the final closer: `[OPTIONS: Alpha ] | Bravo ]]`). A closer
 * followed by more text means the marker closed THERE and the rest is prose quoting it (`Use
 * [OPTIONS: A | B] then check arr[0]`, or an earlier marker followed by a later one), so no trailer
 * starts before it. An unbalanced `[` is harmless (an ANSI `ESC[31m` in a label is one). Full-width
 * brackets never pair: they are ordinary CJK punctuation in a label as well as a possible marker
 * closer, so one mid-label (`【重要】修复`) cannot be told from the marker's end and keeps the text
 * prose.
 *
 * Content starting at `s` is clean iff no bad closer `j >= s` is left unmatched within `[s, j]`. A
 * `]` matched (globally, by a stack) to the `[` at `i` stays matched in the substring exactly when
 * `i >= s`, so each bad closer forbids the starts `(i, j]` (all of `[0, j]` when unmatched): one
 * linear pass instead of re-scanning from every candidate marker.
 */
function forbiddenStarts(text: string, closer: number): Int32Array {
  const endsChoice = new Uint8Array(closer);
  let nextSolid = closer;
  for (let j = closer - 1; j >= 0; j--) {
    if (isCloser(text[j])) endsChoice[j] = nextSolid === closer || text[nextSolid] === "|" ? 1 : 0;
    if (!isPyWhitespace(text.charCodeAt(j))) nextSolid = j;
  }
  const diff = new Int32Array(closer + 2);
  const open: number[] = [];
  for (let j = 0; j < closer; j++) {
    const ch = text[j];
    if (ch === "[") {
      open.push(j);
      continue;
    }
    if (!isCloser(ch)) continue;
    const matched = ch === "]" ? open.pop() : undefined;
    if (endsChoice[j] === 1) continue;
    diff[matched === undefined ? 0 : matched + 1]! += 1;
    diff[j + 1]! -= 1;
  }
  for (let k = 1; k < diff.length; k++) diff[k]! += diff[k - 1]!;
  return diff;
}

/**
 * Find a COMPLETE trailer ending the buffer: optional line-opening wrapper, `[OPTIONS:`, content, a
 * closer (ASCII or full-width), optional `(OPTIONS)`, the same wrapper, then only whitespace. Anything
 * after the closer (`] trailing prose`, `] (note)`) means the marker was quoted mid-answer, not
 * offered, so nothing matches.
 */
function matchTrailer(text: string): TrailerMatch | null {
  const end = rstripEnd(text);
  for (const wrapper of ["", ...WRAPPERS]) {
    let e = end;
    if (wrapper) {
      if (!text.startsWith(wrapper, e - wrapper.length)) continue;
      e -= wrapper.length;
    }
    if (text.startsWith(LINK_SUFFIX, e - LINK_SUFFIX.length)) e -= LINK_SUFFIX.length;
    const closer = e - 1;
    if (!isCloser(text[closer])) continue;
    const forbidden = forbiddenStarts(text, closer);
    // Leftmost marker whose content is clean - the first a left-to-right scan would accept.
    for (let p = text.indexOf(MARKER); p >= 0 && p + MARKER.length <= closer; ) {
      const start = p - wrapper.length;
      const clean = forbidden[p + MARKER.length] === 0;
      if (clean && (!wrapper || (start >= 0 && text.startsWith(wrapper, start) && opensLine(text, start)))) {
        const content = text.slice(p + MARKER.length, closer);
        // A marker quoted inside another's label (`[OPTIONS: see [OPTIONS: x] below]`) is documentation
        // of the syntax, not a prompt - and which bracket is the trailer is a guess. Keep it as prose.
        if (content.includes(MARKER)) return null;
        return { start, content };
      }
      p = text.indexOf(MARKER, p + 1);
    }
    // The tail fixed the wrapper; no other reading of the same tail exists.
    return null;
  }
  return null;
}

/**
 * Start of an UNFINISHED marker at the end of the buffer, or -1: `[OPTIONS` (colon optional, so
 * `see the [OPTIONS section` counts) with no closer anywhere after it, or the buffer ending exactly
 * in a shorter prefix of the marker word (`[OPT`), because a stream frame can end anywhere inside
 * it. A closer after the word means the marker already closed, so what follows is prose. Leftmost,
 * so `[OPTIONS: a [OPTIONS: b` hides the whole fragment. Includes a line-opening wrapper.
 */
function partialStart(text: string): number {
  let afterLastCloser = 0;
  for (let i = text.length - 1; i >= 0; i--) {
    if (isCloser(text[i])) {
      afterLastCloser = i + 1;
      break;
    }
  }
  let p = text.indexOf(MARKER_WORD, afterLastCloser);
  if (p < 0) {
    const bracket = text.lastIndexOf("[");
    if (bracket < afterLastCloser || !MARKER_WORD.startsWith(text.slice(bracket))) return -1;
    p = bracket;
  }
  for (const wrapper of WRAPPERS) {
    const start = p - wrapper.length;
    if (start >= 0 && text.startsWith(wrapper, start) && opensLine(text, start)) return start;
  }
  return p;
}

/**
 * THE parse of the end-of-buffer `[OPTIONS: a | b]` trailer: returns the body before it (trailing
 * whitespace trimmed, leading kept - it may be code indentation) and the non-empty, stripped
 * choices, split on every `|`. No complete trailer: `body === text` and no choices.
 *
 * `hidePartial` decides what an UNFINISHED marker at the end becomes. True is for a streaming frame:
 * text is still arriving, the fragment may be a marker mid-flight, and the next frame re-renders
 * from the full buffer, so hiding it loses nothing. False is for a surface that sends once: it
 * cannot tell a live fragment from prose, and a cut is permanent. The default is False because the
 * failure directions are asymmetric - a needless keep flashes markup for one frame, a needless cut
 * deletes text nobody can recover - so a caller that forgets lands on the cosmetic failure, and
 * every destructive caller has to write `hidePartial: true`, which keeps it greppable.
 */
export function splitOptionsTrailer(
  text: string,
  opts: { hidePartial?: boolean } = {},
): { body: string; choices: string[] } {
  const match = matchTrailer(text);
  if (match) {
    const choices = match.content
      .split("|")
      .map(pyStrip)
      .filter((choice) => choice.length > 0);
    return { body: text.slice(0, rstripEnd(text, match.start)), choices };
  }
  if (opts.hidePartial === true) {
    const start = partialStart(text);
    if (start >= 0) return { body: text.slice(0, rstripEnd(text, start)), choices: [] };
  }
  return { body: text, choices: [] };
}

// ---------------------------------------------------------------------------------------------
// The max_buttons cap and its overflow sink
// ---------------------------------------------------------------------------------------------

/** Widget slots a channel offers; a negative or NaN declaration offers none (never "unlimited"). */
function buttonSlots(caps: OptionsCaps): number {
  const declared = caps.maxButtons;
  if (!(declared > 0)) return 0;
  return Number.isFinite(declared) ? Math.floor(declared) : Number.POSITIVE_INFINITY;
}

/**
 * Split choices at the channel's TOTAL widget cap, order kept, nothing dropped. The kept labels are
 * returned verbatim: they become button payloads the press echoes back, and the caller renders them
 * through its own display sink (`applyOptionsCap` does). Blank labels are kept too, so a caller that
 * numbers buttons by index never shifts one onto its neighbour's answer. A label is model-authored
 * and display redaction keeps a leading `/`, so a press must re-dispatch it with command
 * interpretation OFF: `[OPTIONS: /dashboard | cancel]` must not mint a login link in one tap.
 */
export function capChoices(
  choices: readonly string[],
  caps: OptionsCaps,
): { kept: string[]; overflow: string[] } {
  const slots = Math.min(buttonSlots(caps), choices.length);
  return { kept: choices.slice(0, slots), overflow: choices.slice(slots) };
}

/**
 * Number overflow choices into text lines, continuing after the `start` choices that became
 * buttons, so widget and text form ONE list. Each label passes the display sink: it is model text
 * landing in a message body. Without capabilities the defang applies (the safe direction).
 */
export function formatOverflow(overflow: readonly string[], start: number, caps?: OptionsCaps): string {
  return overflow
    .map((choice, i) => `${start + i + 1}. ${caps ? displaySafeFor(choice, caps) : displaySafe(choice)}`)
    .join("\n");
}

/**
 * Enforce max_buttons: kept choices come back display-safe for the widget, the rest are numbered
 * into the body, so an over-cap choice set degrades to text instead of vanishing.
 */
export function applyOptionsCap(
  body: string,
  choices: readonly string[],
  caps: OptionsCaps,
): { body: string; choices: string[] } {
  const { kept, overflow } = capChoices(choices, caps);
  const safeKept = kept.map((choice) => displaySafeFor(choice, caps));
  if (overflow.length === 0) return { body, choices: safeKept };
  const list = formatOverflow(overflow, kept.length, caps);
  // A blank line separates the list from the answer; a body already ending in a newline needs one.
  const joined = body ? `${body}${body.endsWith("\n") ? "\n" : "\n\n"}${list}` : list;
  return { body: joined, choices: safeKept };
}

/**
 * The whole-trailer path for a channel that sends once: parse (keeping an unfinished fragment,
 * because here it is the assistant's own prose), cap at the channel's slots, and return only the
 * body - the choices the cap kept are the caller's widget; a zero-widget channel declares 0 slots so
 * every choice becomes a numbered line.
 */
export function renderOptionsAsText(text: string, caps: OptionsCaps): string {
  const { body, choices } = splitOptionsTrailer(text, { hidePartial: false });
  return applyOptionsCap(body, choices, caps).body;
}

// ---------------------------------------------------------------------------------------------
// Display sinks
// ---------------------------------------------------------------------------------------------

const COMMENT_OPEN = "<!--";
const COMMENT_CLOSE = "-->";

function isLineSpace(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

/**
 * Drop complete HTML comments (`<!-- plan_task_id:1 -->`): internal markers the user must never see,
 * which a markdown platform hides and a plain-text one shows as litter. A comment that is a line of
 * its own goes with its line break; one inside a line leaves the rest of the line alone. An
 * unterminated `<!--` is kept (the defang then breaks it). Linear: once one `<!--` finds no `-->`,
 * none after it can.
 */
function dropHtmlComments(text: string): string {
  let open = text.indexOf(COMMENT_OPEN);
  if (open < 0) return text;
  let out = "";
  let from = 0;
  while (open >= 0) {
    const close = text.indexOf(COMMENT_CLOSE, open + COMMENT_OPEN.length);
    if (close < 0) break;
    let cutStart = open;
    let cutEnd = close + COMMENT_CLOSE.length;
    let lineStart = cutStart;
    while (lineStart > from && isLineSpace(text.charCodeAt(lineStart - 1))) lineStart--;
    let lineEnd = cutEnd;
    while (lineEnd < text.length && isLineSpace(text.charCodeAt(lineEnd))) lineEnd++;
    const startsLine = lineStart === 0 || text[lineStart - 1] === "\n";
    const endsLine = lineEnd === text.length || text[lineEnd] === "\n";
    if (startsLine && endsLine) {
      cutStart = lineStart;
      cutEnd = lineEnd;
      if (cutEnd < text.length)
        cutEnd++; // take the line's own newline
      else if (cutStart > from) cutStart--; // last line: take the newline that opened it
    }
    out += text.slice(from, cutStart);
    from = cutEnd;
    open = text.indexOf(COMMENT_OPEN, from);
  }
  return out + text.slice(from);
}

/**
 * Break broadcast-mention grammars (`@everyone`, Slack's `<!channel>`) with a zero-width space, so a
 * prompt-injected label cannot mass-notify. Idempotent: an `@` already followed by the space is left
 * alone, so text that meets two sinks does not accumulate invisible characters.
 */
function defangMentions(text: string): string {
  return text.replace(/@(?!\u200b)/g, "@\u200b").replaceAll("<!", "<\u200b!");
}

/**
 * The display sink for model-authored text on a specific channel: drop HTML comments, redact
 * credentials against the form the platform RENDERS, then defang mentions where the platform has a
 * broadcast grammar. The order is load-bearing: dropping a span joins its neighbours, so it must run
 * before the scan (`AKIA<!-- -->IOSFODNN7EXAMPLE`), and the defang inserts a zero-width space that
 * could split a key so the redactor no longer sees it, so it runs last.
 */
export function displaySafeFor(text: string, caps: Pick<OptionsCaps, "mentionGrammars">): string {
  const redacted = redactForDisplay(dropHtmlComments(text)).text;
  return caps.mentionGrammars ? defangMentions(redacted) : redacted;
}

/**
 * The channel-NEUTRAL display sink (a proactive send, a notice): the same screen with the defang
 * always applied, because without a channel to ask, the safe direction is assuming a broadcast
 * grammar exists - a needless defang is cosmetic, a missing one mass-notifies.
 */
export function displaySafe(text: string): string {
  return displaySafeFor(text, { mentionGrammars: true });
}
