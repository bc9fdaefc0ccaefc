/**
 * Opaque regions for table rendering (part of tables.ts): lines inside a fenced code block or a
 * CommonMark raw HTML block are content, never table lines. Fences are read by the ONE shared fence
 * machine (messaging/fences.ts, advanced line by line); this module only decides which lines that
 * machine is fed — a fence opened on a list-item line runs on the item's de-indented lines, and the
 * contents of an HTML block are not fence lines at all.
 */
import { advanceFence, type FenceState } from "../fences.js";
import { indentColumns, isBlank, type LineTable, leadingWhitespace, lineEnd, lineText } from "./scan.js";

const LIST_MARKER = /^(?:[-+*]|\d{1,9}[.)])/;

/**
 * A list item whose first line opens a fence ("- ```", "1. ~~~"): the item's content indentation
 * and the fence it opened, or null. CommonMark puts that fence inside the item, so its body stays
 * code and its closer is judged relative to the item; the plain line machine sees neither, as
 * "- ```" is not an opener to it.
 */
function listItemFence(line: string): { indent: number; fence: FenceState } | null {
  let col = indentColumns(line);
  if (col > 3 || !(line.includes("```") || line.includes("~~~"))) return null;
  let pos = leadingWhitespace(line).length;
  let nested = false;
  for (;;) {
    const marker = LIST_MARKER.exec(line.slice(pos));
    if (!marker) break;
    let at = pos + marker[0].length;
    while (at < line.length && line.charCodeAt(at) === 0x20) at++;
    const gap = at - pos - marker[0].length;
    // No space after the marker: not a list item. Five or more: indented code, never a fence.
    if (gap === 0 || gap > 4) break;
    col += marker[0].length + gap;
    pos = at;
    nested = true;
  }
  if (!nested) return null;
  const step = advanceFence(null, line.slice(pos));
  return step.role === "open" ? { indent: col, fence: step.state } : null;
}

/** Remove up to `columns` of leading indentation (a tab straddling the cut leaves its remainder). */
function dedent(line: string, columns: number): string {
  let col = 0;
  let i = 0;
  while (i < line.length && col < columns) {
    const ch = line.charCodeAt(i);
    if (ch === 0x20) col++;
    else if (ch === 0x09) col += 4 - (col % 4);
    else break;
    i++;
  }
  return " ".repeat(Math.max(0, col - columns)) + line.slice(i);
}

// ---------------------------------------------------------------------------------------------
// CommonMark raw HTML blocks (spec 4.6): start conditions 1-7 and their end conditions.

const HTML_BLOCK_TAGS = new Set(
  (
    "address article aside base basefont blockquote body caption center col colgroup dd details dialog dir div dl " +
    "dt fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 head header hr html iframe legend " +
    "li link main menu menuitem nav noframes ol optgroup option p param search section summary table tbody td " +
    "tfoot th thead title tr track ul"
  ).split(" "),
);
const HTML_RAW_START = /^<(?:script|pre|style|textarea)(?:[\s>]|$)/i;
const HTML_RAW_END = /<\/(?:script|pre|style|textarea)>/i;
const HTML_TAG_NAME = /^<\/?([A-Za-z][A-Za-z0-9-]*)(?=[\s/>]|$)/;
const ATTRIBUTE = String.raw`(?:\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:[^\s"'=<>\x60]+|'[^']*'|"[^"]*"))?)`;
const HTML_COMPLETE_TAG = new RegExp(
  String.raw`^(?:<[A-Za-z][A-Za-z0-9-]*${ATTRIBUTE}*\s*\/?>|<\/[A-Za-z][A-Za-z0-9-]*\s*>)\s*$`,
);

/** HTML block kind (1-7) the line starts, or 0. */
function htmlStart(line: string): number {
  const body = line.slice(leadingWhitespace(line).length);
  if (body.charCodeAt(0) !== 0x3c || indentColumns(line) > 3) return 0;
  if (HTML_RAW_START.test(body)) return 1;
  if (body.startsWith("<!--")) return 2;
  if (body.startsWith("<?")) return 3;
  if (body.startsWith("<![CDATA[")) return 5;
  if (/^<![A-Za-z]/.test(body)) return 4;
  const name = HTML_TAG_NAME.exec(body);
  if (name && HTML_BLOCK_TAGS.has(name[1]!.toLowerCase())) {
    const rest = body.slice(name[0].length);
    if (rest === "" || /^(?:\s|\/?>)/.test(rest)) return 6;
  }
  // Kind 7 (a complete tag alone on its line) is taken as a block start everywhere, even where
  // CommonMark would read it as paragraph text: more opaque text can only mean less rewritten.
  return HTML_COMPLETE_TAG.test(body) ? 7 : 0;
}

const HTML_END_MARKERS: Record<number, string> = { 2: "-->", 3: "?>", 4: ">", 5: "]]>" };

function htmlEnds(kind: number, line: string): boolean {
  if (kind === 1) return HTML_RAW_END.test(line);
  const marker = HTML_END_MARKERS[kind];
  return marker === undefined ? isBlank(line) : line.includes(marker);
}

/** First character after at most three columns of indentation, as a char code (-1 when deeper). */
function leadCode(lines: LineTable, k: number): number {
  const text = lines.text;
  const start = lines.starts[k]!;
  const end = lineEnd(lines, k);
  let at = start;
  while (at < end && at - start < 4 && text.charCodeAt(at) === 0x20) at++;
  return at - start > 3 || at >= end ? -1 : text.charCodeAt(at);
}

function mayStartListItem(code: number): boolean {
  return code === 0x2d || code === 0x2b || code === 0x2a || (code >= 0x30 && code <= 0x39);
}

// ---------------------------------------------------------------------------------------------

/**
 * Per line, whether it is opaque content: inside a fenced code block (opener through closer, an
 * unclosed fence running to the end) or inside a raw HTML block.
 */
export function opaqueLines(lines: LineTable): Uint8Array {
  const n = lines.count;
  const opaque = new Uint8Array(n);
  let fence: FenceState = null;
  let item: { indent: number; fence: FenceState } | null = null;
  let html = 0;
  for (let i = 0; i < n; i++) {
    const line = lineText(lines, i);
    if (item) {
      // A nonblank line indented less than the item ends the item, and its fence with it; that
      // line is then read at the top level like any other.
      if (isBlank(line) || indentColumns(line) >= item.indent) {
        opaque[i] = 1;
        const step = advanceFence(item.fence, dedent(line, item.indent));
        item = step.state ? { indent: item.indent, fence: step.state } : null;
        continue;
      }
      item = null;
    }
    if (html) {
      // HTML block contents are raw: a ``` inside <div> is not a fence, so the machine never sees it.
      opaque[i] = 1;
      if (htmlEnds(html, line)) html = 0;
      continue;
    }
    const step = advanceFence(fence, line);
    fence = step.state;
    if (step.role !== "outside") {
      opaque[i] = 1;
      continue;
    }
    const lead = leadCode(lines, i);
    if (lead === 0x3c) {
      const kind = htmlStart(line);
      if (kind) {
        opaque[i] = 1;
        html = kind <= 5 && htmlEnds(kind, line) ? 0 : kind;
      }
    } else if (mayStartListItem(lead)) {
      item = listItemFence(line);
      if (item) opaque[i] = 1;
    }
  }
  return opaque;
}
