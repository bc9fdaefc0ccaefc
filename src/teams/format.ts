/**
 * Text shaping for Teams' sinks. A message is sent with textFormat "markdown", and Teams renders a
 * SUBSET of it (bold, italic, strike, inline and fenced code, blockquotes, links; no headings, no
 * tables, no images) plus some inline HTML. So the display form is built here, once: headings
 * become bold lines, `<` outside code is escaped (no tag the model wrote renders, so no HTML can
 * hide or assemble anything), tables were already turned into grids or cards at the kit's
 * seal. That form is what redactForDisplay grades, at the one seal, and what the caps bound:
 * 16,000 code points and a UTF-8 byte bound per message, fence-balanced when cut.
 */
import { redactForDisplay } from "../messaging/security/display-safety.js";
import { codePointLength } from "../messaging/security/redact.js";
import { oneLine } from "../messaging/text/clip.js";
import { iterFenceSpans, splitMarkdownBytes, splitMarkdownSafe } from "../messaging/text/split.js";

/** Teams' documented cap on a message's text, in characters (counted here as code points). */
export const TEAMS_MAX_CHARS = 16_000;
/**
 * Teams refuses an activity past about 28 KB; the text is held to 24,000 UTF-8 bytes so the
 * envelope (ids, the reference, JSON escapes) fits beside it.
 */
export const TEAMS_MAX_TEXT_BYTES = 24_000;
/** What one streamed segment may hold, leaving room for a steer chip, the status line or the footer. */
export const TEAMS_SEGMENT_LIMIT = TEAMS_MAX_CHARS - 400;

export function utf8Length(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** Outside fenced code, apply `fn` to each stretch of text; fenced blocks pass through whole. */
function outsideFences(text: string, fn: (prose: string) => string): string {
  let out = "";
  let at = 0;
  for (const [start, end] of iterFenceSpans(text)) {
    out += fn(text.slice(at, start)) + text.slice(start, end);
    at = end;
  }
  return out + fn(text.slice(at));
}

/** Outside inline code spans (a backtick run closed by the same run), apply `fn`. */
function outsideCodeSpans(text: string, fn: (prose: string) => string): string {
  let out = "";
  let at = 0;
  for (const m of text.matchAll(/(`+)[\s\S]*?(?<!`)\1(?!`)/g)) {
    out += fn(text.slice(at, m.index)) + m[0];
    at = (m.index ?? 0) + m[0].length;
  }
  return out + fn(text.slice(at));
}

/** `<` as an entity outside code: Teams renders inline HTML in a markdown message, and nothing of it is ours. */
export function neutralizeHtml(text: string): string {
  if (!text.includes("<")) return text;
  return outsideFences(text, (prose) => outsideCodeSpans(prose, (p) => p.replace(/</g, "&lt;")));
}

/** Markdown as Teams shows it: ATX headings become bold lines (a `#` would stay on screen). */
export function teamsMarkdown(text: string): string {
  if (!text.includes("#")) return text;
  return outsideFences(text, (prose) =>
    prose.replace(/^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$/gm, (_line, title: string) => `**${title.trim()}**`),
  );
}

/**
 * The floor at every sink: the display form, redacted as Teams renders it, with no live HTML. The
 * escape runs last: it only ever adds characters, so it cannot assemble what the scan removed.
 */
export function teamsSafe(text: string): string {
  return neutralizeHtml(redactForDisplay(teamsMarkdown(text)).text);
}

/** Whether one message is within both of Teams' caps. */
export function fitsTeams(text: string): boolean {
  return codePointLength(text) <= TEAMS_MAX_CHARS && utf8Length(text) <= TEAMS_MAX_TEXT_BYTES;
}

/** A table's grid that one message holds whole: a longer one would be cut away from its header. */
export function gridFitsTeams(grid: string): boolean {
  return codePointLength(grid) <= TEAMS_SEGMENT_LIMIT && utf8Length(grid) <= TEAMS_MAX_TEXT_BYTES;
}

/**
 * A safe text split to Teams' caps: fence-balanced by code points, then by UTF-8 bytes (a message
 * of wide characters reaches the byte bound first). Each piece is sent as its own activity. With a
 * `footer` to go under the last piece (even an empty one), room is kept for it and its separator.
 */
export function fitTeams(text: string, footer?: string): string[] {
  const room = footer === undefined ? "" : `\n\n${footer}`;
  const maxChars = TEAMS_MAX_CHARS - codePointLength(room);
  const maxBytes = TEAMS_MAX_TEXT_BYTES - utf8Length(room);
  if (codePointLength(text) <= maxChars && utf8Length(text) <= maxBytes) return [text];
  return splitMarkdownSafe(text, maxChars).flatMap((piece) =>
    utf8Length(piece) <= maxBytes ? [piece] : splitMarkdownBytes(piece, maxBytes),
  );
}

/**
 * One low-emphasis line (the status line, the turn footer): flattened, redacted as shown, its own
 * delimiters escaped so the italic holds, no live HTML.
 */
export function quietLine(text: string): string {
  const line = redactForDisplay(oneLine(text, 500)).text;
  return line ? `_${neutralizeHtml(line.replace(/([_*`\\])/g, "\\$1"))}_` : "";
}
