import { pyStrip } from "./whitespace.js";

/**
 * Markdown reductions for a chat surface that renders none of the source form.
 *
 * Three constructs an agent writes that a chat bubble cannot show usefully, each rewritten into
 * ordinary Markdown (never a channel dialect) so a channel keeps exactly one inline converter:
 * - `<thinking>` blocks: no platform folds them away, so left in they ship the model's scratchpad.
 * - pipe tables: columns only line up in a monospace grid; on a phone the grid is unreadable.
 * - mermaid diagrams: a fenced diagram is source, not a picture, where nothing renders it.
 *
 * Pure leaf: no imports. Fence state belongs to the caller (split.ts's fence machine): a code sample
 * full of pipes must never reach {@link flattenPipeTables}, and {@link flattenMermaidBody} takes a
 * fence BODY, so this module never re-derives the fence grammar.
 *
 * Behaviour is pinned against the Python original by test/messaging/markup.parity.test.ts. Python's
 * `str.strip()` / `\s` / `\w` semantics are reproduced below, because JavaScript's differ (JS trims
 * U+FEFF and not U+001C–U+001F or U+0085).
 */

/** Python's `str.isspace()` set, as a regex class body (the same set as Python's `\\s`). */
const WS = "\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";

// ── <thinking> blocks ──

/** Both spellings models emit, mixed freely between opener and closer. */
const OPENER = /<(?:thinking|antml:thinking)>/g;
const CLOSER = /<\/(?:thinking|antml:thinking)>/g;

export interface ThinkingOptions {
  /** Strip surrounding whitespace from the visible answer (default true). */
  stripWhitespace?: boolean;
  /** Also hide an opener that has no closer yet (default false); for channels that show a stream live. */
  hidePartial?: boolean;
}

/** First match of a global `re` at or after `from`, or null. */
function findFrom(re: RegExp, text: string, from: number): RegExpExecArray | null {
  re.lastIndex = from;
  return re.exec(text);
}

/**
 * A block's content with one tag removed from each edge, as the original's `^<[^>]+>|<[^>]+>$`
 * substitution does (Python's `$` also matches before a final newline). Done by index rather than
 * by that regex, whose unanchored second branch is quadratic on a run of `<` with no `>`.
 */
function innerOf(block: string): string {
  let start = 0;
  const firstClose = block.indexOf(">", 1);
  if (block.startsWith("<") && firstClose > 1) start = firstClose + 1;
  const last = block.endsWith(">") ? block.length - 1 : block.endsWith(">\n") ? block.length - 2 : -1;
  let end = block.length;
  if (last >= start) {
    const open = block.indexOf("<", Math.max(start, block.lastIndexOf(">", last - 1) + 1));
    if (open !== -1 && open < last - 1) end = open;
  }
  return pyStrip(block.slice(start, end));
}

/**
 * Split `text` into the visible answer and the extracted reasoning (blocks joined by a blank line).
 *
 * A block runs from an opener to the FIRST closer after it (an inner opener is content). With
 * `hidePartial`, an opener left without a closer is dropped along with everything after it: a
 * buffer read while the reply is still arriving legitimately ends mid-block, and on a channel where
 * a live frame is a real send, that frame would push the scratchpad as a notification. Without it
 * the opener is kept, because once the reply is complete it can only be the model's own prose.
 */
export function stripThinkingTags(
  text: string,
  opts: ThinkingOptions = {},
): { visible: string; reasoning: string } {
  const { stripWhitespace = true, hidePartial = false } = opts;
  const parts: string[] = [];
  const keep = (block: string): void => {
    const inner = innerOf(block);
    if (inner) parts.push(inner);
  };
  let visible = "";
  let pos = 0;
  // Linear scan: once an opener has no closer after it, no later opener can have one either.
  for (;;) {
    const open = findFrom(OPENER, text, pos);
    const close = open && findFrom(CLOSER, text, open.index + open[0].length);
    if (!open || !close) break;
    visible += text.slice(pos, open.index);
    pos = close.index + close[0].length;
    keep(text.slice(open.index, pos));
  }
  visible += text.slice(pos);
  if (hidePartial) {
    const partial = findFrom(OPENER, visible, 0);
    if (partial) {
      keep(visible.slice(partial.index));
      visible = visible.slice(0, partial.index);
    }
  }
  return { visible: stripWhitespace ? pyStrip(visible) : visible, reasoning: parts.join("\n\n") };
}

// ── pipe tables ──

/** A candidate row needs a leading AND a trailing pipe, so prose that merely contains one is never a row. */
const TABLE_ROW = new RegExp(`^[${WS}]*\\|([^\\n]+\\|)[${WS}]*$`);
/** The only characters a GFM separator row may hold. */
const SEPARATOR_CHARS = /^[-:| \t]+$/;

/** A dash is required as well as a pipe: otherwise a row of empty cells would pass and eat the header. */
function isSeparator(line: string): boolean {
  const stripped = pyStrip(line);
  return stripped.includes("-") && stripped.includes("|") && SEPARATOR_CHARS.test(stripped);
}

/** Cells of a row, outer delimiters and per-cell padding dropped. Escaped `\|` is not special (as in the original). */
function rowCells(row: string): string[] {
  return pyStrip(row)
    .replace(/^\|+|\|+$/g, "")
    .split("|")
    .map(pyStrip);
}

/**
 * One bullet per data row, each cell labelled by its column. Surplus cells stay unlabelled (an
 * authored cell is worth more than its missing label); empty cells are skipped so a sparse row does
 * not read as a list of empty labels, and a row with nothing in it yields no bullet.
 */
function bullets(header: string[], rows: string[][]): string[] {
  const out: string[] = [];
  for (const row of rows) {
    const fields = row.flatMap((cell, i) => {
      if (!cell) return [];
      const label = header[i] ?? "";
      return [label ? `**${label}:** ${cell}` : cell];
    });
    if (fields.length > 0) out.push(`- ${fields.join(" | ")}`);
  }
  return out;
}

/**
 * Rewrite each GFM pipe table as one labelled Markdown bullet per row.
 *
 * Two rules guarantee no authored line is ever lost: a separator row is REQUIRED before a run of
 * pipe lines counts as a table (so a lone `| a | b |` is never swallowed as a header for a table
 * that never arrives), and a table that yields no bullet is passed through verbatim. Pass only
 * text outside code fences: this cannot tell a code sample full of pipes from a table.
 */
export function flattenPipeTables(text: string): string {
  const lines = text.split("\n");
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? "";
    const next = lines[i + 1];
    if (!TABLE_ROW.test(line) || next === undefined || !isSeparator(next) || !TABLE_ROW.test(next)) {
      out.push(line);
      i += 1;
      continue;
    }
    let end = i + 2;
    while (end < lines.length && TABLE_ROW.test(lines[end] ?? "")) end += 1;
    const flat = bullets(rowCells(line), lines.slice(i + 2, end).map(rowCells));
    out.push(...(flat.length > 0 ? flat : lines.slice(i, end)));
    i = end;
  }
  return out.join("\n");
}

// ── mermaid diagrams ──

/** The fence info string that marks a diagram; callers compare their opener's info string to this. */
export const MERMAID_INFO = "mermaid";

/** Every flattened edge is indented so the diagram reads as one block under the caller's heading. */
const EDGE_INDENT = "  ";
const WORD = "[\\p{L}\\p{N}_]";
/** `id`, `id[label]`, `id{label}` or `id(text)`; only square and curly labels name a node (as in the original). */
const NODE = `(${WORD}+)(?:\\[([^\\]]*)\\]|\\{([^}]*)\\}|(?:\\([^)]*\\)))?`;
/**
 * A flowchart edge, searched anywhere in the line: only the four link styles the reduction reads.
 * The look-behind only skips starts inside a word (a leftmost match never begins there), which keeps
 * the search linear on a long word.
 */
const GRAPH_EDGE = new RegExp(
  `(?<!${WORD})${NODE}[${WS}]*(?:-->|---|-\\.->|==>)(?:\\|([^|]*)\\|)?[${WS}]*${NODE}`,
  "u",
);
/** A sequence message `A->>B: text`, anchored at the line start. */
const SEQUENCE_MESSAGE = new RegExp(
  `^([^${WS}]+?)[${WS}]*(->>|-->>|->|-->)[${WS}]*([^${WS}]+?):[${WS}]*([^\\n]+)`,
  "u",
);

function graphArrows(lines: string[]): string {
  const labels = new Map<string, string>();
  const edges: string[] = [];
  for (const line of lines) {
    const m = GRAPH_EDGE.exec(pyStrip(line));
    if (!m) continue;
    const [, src = "", srcSquare, srcCurly, edgeLabel, dst = "", dstSquare, dstCurly] = m;
    // Labels on this line apply to both ends before it is drawn; a later definition wins from then on.
    const srcLabel = srcSquare || srcCurly;
    if (srcLabel) labels.set(src, srcLabel);
    const dstLabel = dstSquare || dstCurly;
    if (dstLabel) labels.set(dst, dstLabel);
    const joint = edgeLabel ? ` (${pyStrip(edgeLabel)}) ` : " ";
    edges.push(`${EDGE_INDENT}${labels.get(src) ?? src} →${joint}${labels.get(dst) ?? dst}`);
  }
  return edges.join("\n");
}

/** Four glyphs for four arrow types, so a dashed reply and a dashed open arrow never read the same. */
function sequenceGlyph(arrow: string): string {
  const solidHead = arrow.includes(">>");
  if (arrow.startsWith("--")) return solidHead ? "⇒" : "⤳";
  return solidHead ? "→" : "⇢";
}

function sequenceArrows(lines: string[]): string {
  const out: string[] = [];
  for (const line of lines) {
    const m = SEQUENCE_MESSAGE.exec(pyStrip(line));
    if (!m) continue;
    const [, src = "", arrow = "", dst = "", message = ""] = m;
    out.push(`${EDGE_INDENT}${src} ${sequenceGlyph(arrow)} ${dst}: ${pyStrip(message)}`);
  }
  return out.join("\n");
}

/**
 * Readable arrows for a mermaid fence body, or `""`, the caller's signal to keep the source.
 *
 * `""` covers both a grammar this does not read and a diagram none of whose lines it recognises:
 * inventing a reading of a diagram is worse than showing it as written. Lines it cannot read are
 * left out of a reduction that does read others.
 */
export function flattenMermaidBody(body: string): string {
  const text = pyStrip(body);
  if (!text) return "";
  const [declaration = "", ...lines] = text.split("\n");
  const kind = pyStrip(declaration).toLowerCase();
  // The declaration line names the grammar; a flowchart without a direction is not one read here.
  if (kind.startsWith("graph ") || kind.startsWith("flowchart ")) return graphArrows(lines);
  if (kind.startsWith("sequencediagram")) return sequenceArrows(lines);
  return "";
}
