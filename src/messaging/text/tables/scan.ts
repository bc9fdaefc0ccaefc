import { isPyWhitespace, pyStrip } from "../whitespace.js";

export { pyStrip };
/**
 * Line grammar for table rendering (part of tables.ts): which lines are opaque code or HTML, which
 * start another Markdown block, and how a row splits into cells. Everything here leans
 * conservative — a line this module cannot classify as a plain table line is left byte-for-byte
 * alone by the caller. Fence grammar is not here at all: it belongs to messaging/fences.ts.
 */

/**
 * The text's lines as offsets ("\n"-separated), so a megabyte of prose is never split into
 * strings: only lines that can matter are sliced.
 */
export interface LineTable {
  readonly text: string;
  /** starts[k] is where line k begins; line k ends at the next "\n" (or the end of the text). */
  readonly starts: Int32Array;
  readonly count: number;
}

export function lineTable(text: string): LineTable {
  let count = 1;
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) count++;
  const starts = new Int32Array(count);
  let k = 1;
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) starts[k++] = at + 1;
  return { text, starts, count };
}

/** Offset just past line k's content (its "\n", or the end of the text). */
export function lineEnd(table: LineTable, k: number): number {
  return k + 1 < table.count ? table.starts[k + 1]! - 1 : table.text.length;
}

export function lineText(table: LineTable, k: number): string {
  return table.text.slice(table.starts[k]!, lineEnd(table, k));
}

export function isBlank(line: string): boolean {
  return pyStrip(line) === "";
}

/** Leading indentation in display columns, tabs expanded to the next multiple of four. */
export function indentColumns(line: string): number {
  let col = 0;
  for (let i = 0; i < line.length; i++) {
    const ch = line.charCodeAt(i);
    if (ch === 0x20) col++;
    else if (ch === 0x09) col += 4 - (col % 4);
    else break;
  }
  return col;
}

/** The line's leading spaces/tabs (the run's container indentation when it is at most three). */
export function leadingWhitespace(line: string): string {
  let i = 0;
  while (i < line.length && (line.charCodeAt(i) === 0x20 || line.charCodeAt(i) === 0x09)) i++;
  return line.slice(0, i);
}

// ATX heading, block quote, bullet or ordered list item: each opens a different block, so a table
// line shaped like one is not a table line (a "- | --- |" list item is not a separator row).
const BLOCK_STARTER = /^(?:#{1,6}(?:[ \t]|$)|>|[-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$))/;
// [OPTIONS: / [STEERING carry pipes and sit directly under an answer: a run that swallowed one as a
// body row would render the user's choices (or a protocol frame) as a card.
const TRAILER = /^\[(?:OPTIONS|STEERING)/;

/** True when the line (indent already known to be < 4) opens a non-table Markdown block. */
export function isBlockStarter(line: string): boolean {
  const body = line.slice(leadingWhitespace(line).length);
  return BLOCK_STARTER.test(body) || TRAILER.test(body);
}

// ---------------------------------------------------------------------------------------------
// Cells

/** End (exclusive) of the code span whose opening backtick run starts at `at`, or of the bare run. */
function codeSpanEnd(s: string, at: number, to: number, unpaired: Set<number>): number {
  let runEnd = at;
  while (runEnd < to && s.charCodeAt(runEnd) === 0x60) runEnd++;
  const size = runEnd - at;
  // Once a run length found no closer, no later run of that length can be one either.
  if (unpaired.has(size)) return runEnd;
  let k = s.indexOf("`", runEnd);
  while (k >= 0 && k < to) {
    let e = k;
    while (e < to && s.charCodeAt(e) === 0x60) e++;
    if (e - k === size) return e;
    k = s.indexOf("`", e);
  }
  // An unpaired backtick run opens nothing: it is literal text and the walk resumes after it.
  unpaired.add(size);
  return runEnd;
}

/**
 * Boundary pipes of `line` within its trimmed content [from, to), walking escapes (and, with
 * `codeSpans`, inline code spans). The result is [from, to, ...pipe offsets].
 */
function boundaries(line: string, codeSpans: boolean): number[] {
  let from = 0;
  let to = line.length;
  while (from < to && isPyWhitespace(line.charCodeAt(from))) from++;
  while (to > from && isPyWhitespace(line.charCodeAt(to - 1))) to--;
  const out = [from, to];
  // Common case: no escapes and no code spans, so every pipe is a boundary; indexOf finds them.
  const plain = line.indexOf("\\", from) < 0 && (!codeSpans || line.indexOf("`", from) < 0);
  if (plain) {
    for (let at = line.indexOf("|", from); at >= 0 && at < to; at = line.indexOf("|", at + 1)) out.push(at);
    return out;
  }
  let unpaired: Set<number> | undefined;
  let k = from;
  while (k < to) {
    const ch = line.charCodeAt(k);
    if (ch === 0x5c) k += 2;
    else if (ch === 0x7c) out.push(k++);
    else if (ch === 0x60 && codeSpans) {
      unpaired ??= new Set();
      k = Math.min(to, codeSpanEnd(line, k, to, unpaired));
    } else k++;
  }
  return out;
}

/**
 * Split a row into trimmed cells. With `codeSpans` false this is strict GFM shape counting: every
 * unescaped pipe is a boundary. With it true it is the lossless rendering parser: a pipe inside an
 * inline code span is content too (looser than GFM, which would split there and leave the backticks
 * unpaired — deleting a pipe the author wrote). Escapes are decided by walking, so `\\|` stays a
 * boundary. One optional leading and one trailing boundary pipe are outer pipes, not empty cells.
 */
export function splitCells(line: string, codeSpans: boolean): string[] {
  const bounds = boundaries(line, codeSpans);
  const from = bounds[0]!;
  const to = bounds[1]!;
  const pipes = bounds.length - 2;
  // Outer pipes: one optional leading and one trailing, never the same pipe.
  const leading = pipes > 0 && bounds[2] === from;
  const trailing = pipes > 0 && bounds[bounds.length - 1] === to - 1 && !(leading && pipes === 1);
  const cells: string[] = [];
  let start = leading ? from + 1 : from;
  const last = trailing ? bounds.length - 1 : bounds.length;
  for (let b = leading ? 3 : 2; b <= last; b++) {
    let end = b < last ? bounds[b]! : trailing ? to - 1 : to;
    const next = end + 1;
    while (start < end && isPyWhitespace(line.charCodeAt(start))) start++;
    while (end > start && isPyWhitespace(line.charCodeAt(end - 1))) end--;
    cells.push(line.slice(start, end));
    start = next;
  }
  return cells;
}

/** How many cells splitCells would return, without building them. */
export function countCells(line: string, codeSpans: boolean): number {
  const bounds = boundaries(line, codeSpans);
  const pipes = bounds.length - 2;
  const leading = pipes > 0 && bounds[2] === bounds[0];
  const trailing = pipes > 0 && bounds[bounds.length - 1] === bounds[1]! - 1 && !(leading && pipes === 1);
  return pipes + 1 - (leading ? 1 : 0) - (trailing ? 1 : 0);
}

/** True when the line holds at least one unescaped pipe (strict GFM: code spans do not hide it). */
export function hasBoundaryPipe(line: string): boolean {
  for (let k = line.indexOf("|"); k >= 0; k = line.indexOf("|", k + 1)) {
    let slashes = 0;
    while (k - slashes - 1 >= 0 && line.charCodeAt(k - slashes - 1) === 0x5c) slashes++;
    if (slashes % 2 === 0) return true;
  }
  return false;
}

const SEPARATOR_CELL = /^:?-+:?$/;
const SEPARATOR_CHARS = /^[\s|:-]+$/;

/** Column count of a GFM delimiter row, or 0 when the line is not one. */
export function separatorWidth(line: string): number {
  // A delimiter row needs a pipe: a bare "---" under a line is a setext heading, not a table.
  if (!line.includes("|") || !line.includes("-") || !SEPARATOR_CHARS.test(line)) return 0;
  const cells = splitCells(line, false);
  return cells.every((cell) => SEPARATOR_CELL.test(cell)) ? cells.length : 0;
}

/** GFM unescapes `\|` to a literal pipe in every cell, code spans included. */
export function unescapePipes(cell: string): string {
  return cell.includes("\\|") ? cell.replaceAll("\\|", "|") : cell;
}
