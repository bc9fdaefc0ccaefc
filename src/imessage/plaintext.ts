/**
 * Markdown as iMessage shows it: plain text (Messages renders no markup, so `**bold**` would arrive
 * as asterisks). The shared reductions first (a `<thinking>` block dropped, a pipe table one
 * labelled line per row, a mermaid fence its arrows), then the line rules: headings lose their `#`,
 * `*`/`+` bullets become `•`, emphasis and strike markers are dropped, links read `label (url)`,
 * inline code loses its backticks. A fenced block's body passes through byte for byte (code is what
 * a user copies out of a message; re-wrapping it corrupts it silently); only its fence lines go.
 *
 * The display-form screen runs on the FLAT text, the form a phone shows: every rewrite here deletes
 * markup and so joins what stood on either side of it (`AKIA**Q7ZR**…` flattens to an intact key),
 * so only a screen of the result carries the guarantee. The screen also runs before, as a belt.
 */
import { stripAnsi } from "../messaging/security/display-safety.js";
import { reduceBlocks } from "../messaging/text/blocks.js";
import { stripThinkingTags } from "../messaging/text/markup.js";
import { displaySafeFor } from "../messaging/text/options.js";

/** The display floor for iMessage: comments dropped, credentials redacted; no mention grammar. */
export function imessageSafe(text: string): string {
  return displaySafeFor(stripAnsi(text), { mentionGrammars: false });
}

/** Markdown into the flat text a bubble shows, screened on that form. */
export function toPlainText(markdown: string): string {
  const screened = imessageSafe(markdown);
  const visible = stripThinkingTags(screened, { stripWhitespace: false }).visible;
  return imessageSafe(flattenBlocks(visible));
}

function flattenBlocks(text: string): string {
  return reduceBlocks(text, {
    line: flattenLine,
    // Only the fence lines go: the body is what a user copies out, byte for byte.
    code: (body) => [...body],
    diagram: (arrows, body) => (arrows ? ["Diagram:", ...arrows] : [...body]),
  });
}

const HEADING = /^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$/;
const BULLET = /^(\s*)[*+-][ \t]+/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const LINK = /(!?)\[([^[\]\n]*)\]\(([^()\s]*(?:\([^()\s]*\))?[^()\s]*)\)/g;

/** One prose line, flat. Inline code spans keep their content exactly (only the backticks go). */
export function flattenLine(line: string): string {
  if (RULE.test(line)) return "———";
  const heading = HEADING.exec(line);
  const text = heading ? (heading[1] ?? "") : line.replace(BULLET, "$1• ");
  return splitCode(text)
    .map(([piece, code]) => (code ? piece : flattenInline(piece)))
    .join("");
}

function flattenInline(text: string): string {
  return text
    .replace(LINK, (_m, _bang: string, label: string, url: string) => {
      const shown = label.trim();
      return !shown || shown === url ? url : `${shown} (${url})`;
    })
    .replace(/\*\*(?=\S)([^\n]*?\S)\*\*/g, "$1")
    .replace(/(?<!\w)__(?=\S)([^\n]*?\S)__(?!\w)/g, "$1")
    .replace(/(?<![*\w])\*(?=\S)([^*\n]*?\S)\*(?![*\w])/g, "$1")
    .replace(/(?<!\w)_(?=\S)([^_\n]*?\S)_(?!\w)/g, "$1")
    .replace(/~~(?=\S)([^\n]*?\S)~~/g, "$1")
    .replace(/\\([\\`*_{}[\]()#+\-.!~|>])/g, "$1");
}

/** The line cut into [text, isCode] runs: a run of n backticks opens a span closed by a run of n. */
function splitCode(text: string): [string, boolean][] {
  const out: [string, boolean][] = [];
  let from = 0;
  let at = 0;
  while (at < text.length) {
    if (text[at] !== "`") {
      at += 1;
      continue;
    }
    let n = 0;
    while (text[at + n] === "`") n += 1;
    const ticks = "`".repeat(n);
    let close = text.indexOf(ticks, at + n);
    // The closer must be a run of exactly n.
    while (close !== -1 && text[close + n] === "`") {
      let end = close;
      while (text[end] === "`") end += 1;
      close = text.indexOf(ticks, end);
    }
    if (close === -1) {
      at += n;
      continue;
    }
    if (at > from) out.push([text.slice(from, at), false]);
    out.push([text.slice(at + n, close), true]);
    at = close + n;
    from = at;
  }
  if (from < text.length) out.push([text.slice(from), false]);
  return out;
}
