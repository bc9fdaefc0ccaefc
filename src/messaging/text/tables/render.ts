/**
 * The two renderings of one parsed table (part of tables.ts). Both are idempotent by construction:
 * cards carry no table-shaped lines (every line is a bold heading, a "- " list item, a dash or
 * blank) and a grid lives inside a code fence, which rendering never enters.
 */
import { displayWidth } from "./width.js";

/** A parsed table: header cells and body rows, every row already padded/truncated to the header. */
export interface ParsedTable {
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

/** Display widths of a table's cells, header row first: each cell is measured once. */
export interface TableWidths {
  readonly cells: readonly (readonly number[])[];
  /** The widest cell of each column, header included. */
  readonly columns: readonly number[];
}

export function measure(table: ParsedTable): TableWidths {
  const cells = [table.header, ...table.rows].map((row) => row.map(displayWidth));
  const columns = cells[0]!.slice();
  for (const row of cells) {
    for (let c = 0; c < row.length; c++) if (row[c]! > columns[c]!) columns[c] = row[c]!;
  }
  return { cells, columns };
}

/** Total display width of the grid's widest line: columns plus a " | " between each pair. */
export function gridWidth(widths: readonly number[]): number {
  return widths.reduce((sum, w) => sum + w, 0) + 3 * Math.max(0, widths.length - 1);
}

const PADDING: string[] = Array.from({ length: 64 }, (_, n) => " ".repeat(n));

function pad(n: number): string {
  return n < PADDING.length ? PADDING[n]! : " ".repeat(n);
}

function longestBacktickRun(text: string): number {
  let longest = 0;
  for (let k = text.indexOf("`"); k >= 0; k = text.indexOf("`", k)) {
    let e = k;
    while (e < text.length && text.charCodeAt(e) === 0x60) e++;
    if (e - k > longest) longest = e - k;
    k = e;
  }
  return longest;
}

/**
 * An aligned monospace grid inside a backtick fence. Padding is by display width so CJK and emoji
 * columns line up; trailing padding is trimmed. The fence is longer than every backtick run in the
 * grid, so a literal ``` cell stays content instead of closing it early.
 */
export function renderGrid(table: ParsedTable, widths: TableWidths): string[] {
  const columns = widths.columns;
  const last = columns.length - 1;
  const line = (cells: readonly string[], measured: readonly number[]): string => {
    // Cells are trimmed, so the only trailing whitespace would be the separator's space before an
    // empty last cell: it is left off, as the reference's rstrip() drops it.
    const tail = cells[last] === "" ? " |" : " | ";
    let text = "";
    for (let c = 0; c < last; c++) {
      text += `${cells[c]!}${pad(columns[c]! - measured[c]!)}${c + 1 < last ? " | " : tail}`;
    }
    return text + cells[last]!;
  };
  const body = [line(table.header, widths.cells[0]!), columns.map((w) => "-".repeat(w)).join("-+-")];
  for (let r = 0; r < table.rows.length; r++) body.push(line(table.rows[r]!, widths.cells[r + 1]!));
  // Backtick runs come only from cells (padding and " | " hold none, and cannot join two runs).
  let longest = 0;
  for (const cell of table.header) longest = Math.max(longest, longestBacktickRun(cell));
  for (const row of table.rows) for (const cell of row) longest = Math.max(longest, longestBacktickRun(cell));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return [fence, ...body, fence];
}

// A card item whose text begins with ``` or ~~~ would open a fence inside the list item and swallow
// the rest of the message as code; escaping the first character keeps it literal text.
function opensFence(text: string): boolean {
  return text.startsWith("```") || text.startsWith("~~~");
}

/**
 * One card per row: the first cell as a bold heading (only when it has a value — a blank repeated
 * category stays blank rather than inventing data), then "- header: value" for each later nonempty
 * cell ("- value" under an empty header). A row with nothing at all renders "—" so it is still
 * visibly a row. Returns null when no row produced a line: the caller then falls back to a grid,
 * which keeps the headers and empty cells instead of replacing the table with nothing.
 */
export function renderCards(table: ParsedTable): string[] | null {
  const out: string[] = [];
  let produced = false;
  for (const row of table.rows) {
    const card: string[] = [];
    const heading = row[0] ?? "";
    if (heading !== "") card.push(`**${heading}**`);
    for (let c = 1; c < row.length; c++) {
      const value = row[c]!;
      if (value === "") continue;
      const label = table.header[c] ?? "";
      const item = label === "" ? value : `${label}: ${value}`;
      card.push(opensFence(label === "" ? value : label) ? `- \\${item}` : `- ${item}`);
    }
    if (card.length > 0) produced = true;
    if (out.length > 0) out.push("");
    out.push(...(card.length > 0 ? card : ["—"]));
  }
  return produced ? out : null;
}
