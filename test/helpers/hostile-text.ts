/**
 * Adversarial text generators: the shapes that make a careless scanner, splitter or converter go
 * super-linear (a rescan per candidate start, a step-back search per character, nested brackets a
 * regex backtracks over). Shared by bench/linearity.bench.ts, which prints the time(4n)/time(n)
 * ratio of every text function on each, and by the property test that drives the same generators
 * under a wall-clock guard (test/messaging/text/linear-time.test.ts). Deterministic: the text for a
 * given size is always the same, so two bench runs measure the same thing.
 */

export interface HostileGenerator {
  /** Stable name, printed by the bench. */
  readonly name: string;
  /** Text of exactly `size` UTF-16 units built from the generator's pattern. */
  readonly make: (size: number) => string;
}

/** Repeats `unit` until `size` units; the cut at `size` may fall inside a unit, which is fine. */
function tile(unit: string, size: number): string {
  return unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
}

/** A deterministic stream of word characters without any newline (a 1 MB single line). */
function singleLine(size: number): string {
  const words = ["alpha", "Bravo7", "charlie_x", "delta-9", "echo.foxtrot", "GOLF", "h0tel", "india/kilo"];
  const out: string[] = [];
  let n = 0;
  for (let k = 0; n < size; k++) {
    const w = words[(k * 7 + (k >> 3)) % words.length] as string;
    out.push(w, " ");
    n += w.length + 1;
  }
  return out.join("").slice(0, size);
}

/** Nested list items, each one level deeper than the last, then back out: the deepest indentation walk. */
function deepLists(size: number): string {
  const lines: string[] = [];
  let n = 0;
  for (let depth = 0; n < size; depth = (depth + 1) % 400) {
    const line = `${"  ".repeat(depth)}- item ${depth}\n`;
    lines.push(line);
    n += line.length;
  }
  return lines.join("").slice(0, size);
}

/** A table whose rows each hold many `|` cells. */
function manyCells(size: number): string {
  const row = `|${" a |".repeat(200)}\n`;
  const sep = `|${"---|".repeat(200)}\n`;
  return (row + sep + tile(row, Math.max(0, size - row.length - sep.length))).slice(0, size);
}

export const HOSTILE_GENERATORS: readonly HostileGenerator[] = [
  { name: "sk-runs", make: (n) => tile("sk-", n) },
  { name: "sk-key-like-runs", make: (n) => tile("sk-Ab1", n) },
  { name: "backtick-line", make: (n) => tile("`", n) },
  { name: "tilde-line", make: (n) => tile("~", n) },
  { name: "backtick-lines", make: (n) => tile(`${"`".repeat(997)}\n`, n) },
  { name: "fence-ladder", make: (n) => tile("```\n````\n`````\n~~~\n", n) },
  { name: "nested-brackets", make: (n) => "[".repeat(n >> 1) + "]".repeat(n - (n >> 1)) },
  { name: "link-chains", make: (n) => tile("[a](", n) },
  { name: "bracket-paren-mix", make: (n) => tile("[[[(((]]])))", n) },
  { name: "single-line", make: singleLine },
  { name: "many-cells", make: manyCells },
  { name: "pipes-one-line", make: (n) => tile("|", n) },
  { name: "deep-lists", make: deepLists },
  { name: "entity-ladder", make: (n) => tile("&#x26;&amp;&#", n) },
  { name: "backslashes", make: (n) => tile("\\", n) },
  { name: "emphasis-runs", make: (n) => tile("*_~`|", n) },
  { name: "eyJ-runs", make: (n) => tile("eyJa.", n) },
  { name: "AKIA-runs", make: (n) => tile("AKIA", n) },
  { name: "base64-run", make: (n) => tile("Zq9+/Kx7", n) },
  { name: "url-hosts", make: (n) => `https://${tile("a.", n - 8)}` },
  { name: "userinfo-ats", make: (n) => `http://a:${tile("@", n - 9)}` },
  { name: "key-value-runs", make: (n) => tile('password: "', n) },
  { name: "options-markers", make: (n) => tile("[OPTIONS: a | ", n) },
  { name: "think-tags", make: (n) => tile("<think>", n) },
  { name: "zero-width", make: (n) => tile("a\u200b", n) },
  { name: "newlines", make: (n) => tile("\n", n) },
];
