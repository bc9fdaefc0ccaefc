/**
 * Markdown into WhatsApp's own dialect, and the screen that makes it safe to show. WhatsApp renders
 * `*bold*`, `_italic_`, `~strike~`, `` `code` `` and ``` blocks (no info string), nothing else:
 * headings become bold lines, links `label (url)`, and three constructs are reduced first (the
 * shared reductions, messaging/text/markup.ts): a `<thinking>` block is dropped, a pipe table
 * becomes one labelled bullet per row, a mermaid fence becomes arrows under a *Diagram* heading.
 *
 * Order: strip ANSI → screen → reduce → convert → screen → split. The screen that carries the
 * guarantee runs LAST, on the dialect: the conversion rewrites delimiters (`AKIA**Q7ZR**…` becomes
 * `AKIA*Q7ZR*…`, which the reader's phone shows as an intact key) and every reduction deletes a
 * span, joining what sat on either side of it; only the final form shows what the reader sees. The
 * first screen is a belt that also removes escapes the line rules would trip over. Every rewrite
 * runs before the split, so the split measures what is delivered (a table's labels and a redaction
 * marker make the text longer).
 *
 * Inline code is byte-exact: the dialect has no escape character, so a backtick span is the only
 * way to show text WhatsApp must not reformat (`/tmp/__init__.py`). An emphasis delimiter inside a
 * code span is never converted, while emphasis around one (`**`abc`**`) is.
 */
import { redactForDisplay, stripAnsi } from "../messaging/security/display-safety.js";
import { reduceBlocks } from "../messaging/text/blocks.js";
import { stripThinkingTags } from "../messaging/text/markup.js";
import { splitMarkdownSafe } from "../messaging/text/split.js";

/** WhatsApp's message cap, in characters (code points). */
export const WHATSAPP_MAX_CHARS = 4096;

/** The screen alone, for the sinks that are not converted: captions, notes, the approval prompt. */
export function displaySafeText(text: string): string {
  return redactForDisplay(stripAnsi(text)).text;
}

/** Markdown as WhatsApp shows it, screened. `live`: a frame of a reply still arriving. */
export function toWhatsApp(markdown: string, opts: { live?: boolean } = {}): string {
  const screened = displaySafeText(markdown);
  const visible = stripThinkingTags(screened, {
    hidePartial: opts.live ?? false,
    stripWhitespace: false,
  }).visible;
  return displaySafeText(convertBlocks(visible));
}

/**
 * The messages a reply becomes: converted and screened whole, split fence-safe at the cap (minus
 * `reserve`, room for a suffix the caller adds), each piece screened again (a cut can separate
 * delimiters that were a pair, and the piece is what its bubble shows).
 */
export function renderChunks(markdown: string, opts: { live?: boolean; reserve?: number } = {}): string[] {
  const text = toWhatsApp(markdown, opts).trim();
  if (!text) return [];
  return splitMarkdownSafe(text, WHATSAPP_MAX_CHARS, { reserve: opts.reserve ?? 0 })
    .map((chunk) => displaySafeText(chunk).trim())
    .filter(Boolean);
}

// ── blocks ────────────────────────────────────────────────────────────────────────────────────

const FENCE = "```";

/**
 * Walk the text with the shared fence machine: prose runs get the table reduction and the line
 * rules; fences lose their info string (the dialect has none) and keep their body verbatim; a
 * mermaid fence is reduced. An unclosed fence is closed at the end, so no bubble opens a monospace
 * block that never ends.
 */
function convertBlocks(text: string): string {
  return reduceBlocks(text, {
    line: convertLine,
    code: (body) => [FENCE, ...body, FENCE],
    diagram: (arrows, body) => ["*Diagram*", ...(arrows ?? [FENCE, ...body, FENCE])],
  });
}

// ── lines ─────────────────────────────────────────────────────────────────────────────────────

const HEADING = /^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$/;
const BULLET = /^(\s*)[*+][ \t]+/;
const LINK = /(!?)\[([^[\]\n]*)\]\(([^()\s]*(?:\([^()\s]*\))?[^()\s]*)\)/g;
/** Placeholders for bold while italic is converted: private-use, never in real text we keep. */
const BOLD_OPEN = "\u{F0001}";
const BOLD_CLOSE = "\u{F0002}";

/** One prose line in the dialect. */
export function convertLine(line: string): string {
  const heading = HEADING.exec(line);
  let text = heading ? `**${heading[1]}**` : line.replace(BULLET, "$1- ");
  const code = codeSpans(text);
  const outside = (at: number) => !code.some(([s, e]) => at >= s && at < e);
  text = replaceOutside(text, LINK, outside, (m) => {
    const [, bang = "", label = "", url = ""] = m;
    const shown = label.trim();
    if (!url) return m[0];
    if (bang) return shown ? `${shown} (${url})` : url;
    return !shown || shown === url ? url : `${shown} (${url})`;
  });
  // Links may have moved code spans; read them again before the emphasis rules.
  const spans = codeSpans(text);
  const out = (at: number) => !spans.some(([s, e]) => at >= s && at < e);
  const pair = (re: RegExp, open: string, close: string) => {
    text = replaceOutside(
      text,
      re,
      (at, m) => out(at) && out(at + m[0].length - 1),
      (m) => `${open}${m[1]}${close}`,
    );
  };
  pair(/\*\*(?=\S)([^\n]*?\S)\*\*/g, BOLD_OPEN, BOLD_CLOSE);
  pair(/(?<![\w])__(?=\S)([^\n]*?\S)__(?![\w])/g, BOLD_OPEN, BOLD_CLOSE);
  pair(/(?<![*\w])\*(?=\S)([^*\n]*?\S)\*(?![*\w])/g, "_", "_");
  pair(/~~(?=\S)([^\n]*?\S)~~/g, "~", "~");
  return text.replaceAll(BOLD_OPEN, "*").replaceAll(BOLD_CLOSE, "*");
}

/** [start, end) of balanced inline code spans (a run of n backticks closed by a run of n). */
function codeSpans(text: string): [number, number][] {
  const spans: [number, number][] = [];
  const re = /`+/g;
  let open: { at: number; len: number } | null = null;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (!open) open = { at: m.index, len: m[0].length };
    else if (m[0].length === open.len) {
      spans.push([open.at, m.index + m[0].length]);
      open = null;
    }
  }
  return spans;
}

/** `text.replace(re, fn)`, but a match the guard rejects stays as written. */
function replaceOutside(
  text: string,
  re: RegExp,
  guard: (at: number, m: RegExpExecArray) => boolean,
  fn: (m: RegExpExecArray) => string,
): string {
  let out = "";
  let last = 0;
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (!guard(m.index, m)) {
      // Retry one character later: a rejected delimiter may still close a later pair.
      re.lastIndex = m.index + 1;
      continue;
    }
    out += text.slice(last, m.index) + fn(m);
    last = m.index + m[0].length;
  }
  return out + text.slice(last);
}
