/**
 * Table-run detection and replacement (the engine behind tables.ts). Works on "\n"-separated lines
 * addressed by offset, replacing only the converted runs, so whitespace outside them — blank-line
 * runs, a trailing newline — survives exactly.
 */
import { opaqueLines } from "./blocks.js";
import { gridWidth, measure, type ParsedTable, renderCards, renderGrid, type TableWidths } from "./render.js";
import {
  countCells,
  hasBoundaryPipe,
  indentColumns,
  isBlank,
  isBlockStarter,
  leadingWhitespace,
  lineEnd,
  lineTable,
  lineText,
  separatorWidth,
  splitCells,
  unescapePipes,
} from "./scan.js";

/** Display width up to which auto renders a grid; a wider table becomes cards (a phone's width). */
export const GRID_MAX_DISPLAY_COLUMNS = 42;

/** The converting policies (off and native never reach the engine). */
export type RenderMode = "cards" | "grid" | "auto";

export interface RenderResult {
  readonly text: string;
  /** True when any run was emitted as a grid (callers re-render an over-cap grid as cards). */
  readonly generatedGrid: boolean;
  /**
   * [start, end) offsets in `text` of table runs left as their raw source because no rendering fit
   * one message (see `fits`): a caller that must cut them cuts them losslessly. Absent when none.
   */
  readonly rawRuns?: readonly (readonly [number, number])[];
}

/** Whether a rendered grid fits one message of the target; absent, every rendering is kept. */
export type GridFits = (grid: string) => boolean;

/** A line that may hold a table row at all: four columns of indent is code, a block starter is not a row. */
function isTableLine(line: string): boolean {
  return indentColumns(line) < 4 && !isBlockStarter(line);
}

/** Cells for rendering: lossless split, `\|` unescaped, padded/truncated to the header's width. */
function rowCells(line: string, columns: number): string[] {
  const cells = splitCells(line, true);
  if (cells.length > columns) cells.length = columns;
  for (let c = 0; c < cells.length; c++) cells[c] = unescapePipes(cells[c]!);
  while (cells.length < columns) cells.push("");
  return cells;
}

function render(table: ParsedTable, mode: RenderMode): { lines: string[]; grid: boolean } {
  let widths: TableWidths | undefined;
  // A header-only run has no row to make a card from: a grid is its only lossless form.
  if (table.rows.length > 0 && mode !== "grid") {
    if (mode === "auto") widths = measure(table);
    if (!widths || gridWidth(widths.columns) > GRID_MAX_DISPLAY_COLUMNS) {
      const cards = renderCards(table);
      if (cards) return { lines: cards, grid: false };
    }
  }
  return { lines: renderGrid(table, widths ?? measure(table)), grid: true };
}

/** Prefix every nonblank line with the run's indentation and join the lines. */
function indentLines(lines: readonly string[], indent: string): string {
  let text = "";
  for (let k = 0; k < lines.length; k++) {
    if (k > 0) text += "\n";
    if (lines[k] !== "") text += indent + lines[k];
  }
  return text;
}

/**
 * A grid that would cross one message: cards read on their own when split, so they come first;
 * a run no card can show (empty rows, a header alone) keeps its raw source, reported in `rawRuns`.
 */
function fitted(
  table: ParsedTable,
  rendered: { lines: string[]; grid: boolean },
  body: (lines: string[]) => string,
  fits: GridFits | undefined,
): { text: string; grid: boolean } | null {
  const text = body(rendered.lines);
  if (!rendered.grid || !fits || fits(text)) return { text, grid: rendered.grid };
  const cards = table.rows.length > 0 ? renderCards(table) : null;
  return cards ? { text: body(cards), grid: false } : null;
}

export function renderWithMode(
  text: string,
  mode: RenderMode,
  final: boolean,
  fits?: GridFits,
): RenderResult {
  const firstPipe = text.indexOf("|");
  if (firstPipe < 0) return { text, generatedGrid: false };
  const lines = lineTable(text);
  const n = lines.count;
  // Only lines holding a pipe can be a header, delimiter or body row: mark them without slicing,
  // one search per such line.
  const piped = new Uint8Array(n);
  for (let at = firstPipe, k = 0; at >= 0; ) {
    while (k + 1 < n && lines.starts[k + 1]! <= at) k++;
    piped[k] = 1;
    if (k + 1 >= n) break;
    at = text.indexOf("|", lines.starts[k + 1]!);
  }
  let opaque: Uint8Array | undefined;
  const out: string[] = [];
  let emitted = 0;
  let length = 0;
  let generatedGrid = false;
  const rawRuns: [number, number][] = [];
  for (let i = 0; i + 1 < n; i++) {
    if (!piped[i] || !piped[i + 1]) continue;
    const columns = separatorWidth(lineText(lines, i + 1));
    if (columns === 0) continue;
    const head = lineText(lines, i);
    if (!isTableLine(head) || !isTableLine(lineText(lines, i + 1)) || !hasBoundaryPipe(head)) continue;
    // Shape stays strict GFM (a pipe inside a code span still counts) and the lossless parser must
    // agree with it, so an ambiguous header stays byte-identical instead of shifting body cells.
    if (countCells(head, false) !== columns || countCells(head, true) !== columns) continue;
    opaque ??= opaqueLines(lines);
    if (opaque[i] || opaque[i + 1]) continue;
    let end = i + 2;
    while (end < n && piped[end] && !opaque[end]) {
      const line = lineText(lines, end);
      if (isBlank(line) || !isTableLine(line)) break;
      end++;
    }
    // Streaming: a run reaching the end may still grow, and so may one whose only terminator is the
    // unterminated final line ("Row" can become the body row "Row 1 | ok"). Converting either would
    // freeze a half-arrived row as a card and strand the rows behind it.
    if (!final && end >= n - 1) break;
    const rows: string[][] = [];
    for (let k = i + 2; k < end; k++) rows.push(rowCells(lineText(lines, k), columns));
    const table = { header: rowCells(head, columns), rows };
    // Carry the run's container indentation (at most three columns) so a table nested in a list
    // item stays in it.
    const indent = leadingWhitespace(head);
    const join = (ls: string[]) => (indent === "" ? ls.join("\n") : indentLines(ls, indent));
    const shown = fitted(table, render(table, mode), join, fits);
    const before = text.slice(emitted, lines.starts[i]!);
    const runEnd = lineEnd(lines, end - 1);
    const body = shown ? shown.text : text.slice(lines.starts[i]!, runEnd);
    if (shown) generatedGrid ||= shown.grid;
    else rawRuns.push([length + before.length, length + before.length + body.length]);
    out.push(before, body);
    length += before.length + body.length;
    emitted = runEnd;
    i = end - 1;
  }
  if (out.length === 0) return { text, generatedGrid: false };
  out.push(text.slice(emitted));
  return { text: out.join(""), generatedGrid, ...(rawRuns.length > 0 ? { rawRuns } : {}) };
}
