/**
 * renderTables throughput on a realistic ~1 MiB Markdown corpus of assistant-shaped answers with many
 * tables (see corpus()). Reports ms per MiB under auto/cards/grid and the 4 MiB / 1 MiB time ratio
 * (linear scaling reads ~4). Target: <= 20 ms/MiB, ratio <= 4.5.
 */
import { renderTables } from "../src/messaging/text/tables/index.js";
import { seededRng } from "../test/helpers/seeded-rng.js";

const MIB = 1024 * 1024;

const WORDS = [
  "deploy",
  "region",
  "token",
  "server",
  "build",
  "the",
  "quick",
  "retry",
  "config",
  "cache",
  "merge",
];
const CELLS = [
  "ok",
  "failed",
  "`a|b`",
  "x \\| y",
  "日本語",
  "東京 region",
  "😀 done",
  "p95 120ms",
  "",
  "n/a",
  "v1.2.3",
];

/**
 * A corpus shaped like assistant answers: prose paragraphs (some with a stray pipe), usually a
 * table and sometimes two (narrow, wide, CJK, header-only), code fences (some holding pipe tables
 * or shell output), lists (some with a fence on the item line) and [OPTIONS:] trailers.
 */
function corpus(bytes: number, seed: number): string {
  const rand = seededRng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  const between = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const sentence = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(" ");
  const paragraph = () =>
    Array.from({ length: between(2, 5) }, () => {
      const s = sentence(between(8, 16));
      return rand() < 0.2 ? `${s} with \`${pick(WORDS)}\` | ${pick(WORDS)}.` : `${s}.`;
    }).join(" ");
  const table = (cols: number, rows: number, wide: boolean) => {
    const cell = () => (wide ? `${pick(CELLS)} ${sentence(between(1, 4))}` : pick(CELLS));
    const header = `| ${Array.from({ length: cols }, () => pick(WORDS)).join(" | ")} |`;
    const delimiter = `|${Array.from({ length: cols }, () => pick(["---", ":--", "--:", ":-:"])).join("|")}|`;
    const body = Array.from({ length: rows }, () => `| ${Array.from({ length: cols }, cell).join(" | ")} |`);
    return [header, delimiter, ...body].join("\n");
  };
  const anyTable = () => {
    const kind = rand();
    if (kind < 0.6) return table(between(2, 4), between(3, 10), false);
    if (kind < 0.92) return table(between(3, 6), between(3, 12), true);
    return table(between(2, 4), 0, false);
  };
  const answers: string[] = [];
  let size = 0;
  while (size < bytes) {
    const parts = [paragraph()];
    if (rand() < 0.5) parts.push(paragraph());
    if (rand() < 0.75) parts.push(anyTable(), paragraph());
    if (rand() < 0.25) parts.push(anyTable());
    if (rand() < 0.3) parts.push(`\`\`\`md\n${table(3, between(2, 5), false)}\n\`\`\``);
    if (rand() < 0.25) parts.push(`\`\`\`sh\n$ ps aux | grep ${pick(WORDS)} | wc -l\n${sentence(6)}\n\`\`\``);
    if (rand() < 0.3)
      parts.push(Array.from({ length: between(2, 5) }, () => `- ${sentence(between(3, 8))}`).join("\n"));
    if (rand() < 0.05) parts.push(`- \`\`\`\n  ${table(2, 2, false).replaceAll("\n", "\n  ")}\n  \`\`\``);
    if (rand() < 0.15) parts.push(`[OPTIONS: ${sentence(2)} | ${sentence(2)}]`);
    const answer = parts.join("\n\n");
    answers.push(answer);
    size += Buffer.byteLength(answer) + 2;
  }
  return answers.join("\n\n");
}

/** Wall time of one call. */
function time(fn: () => void): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

/** Smallest of `runs` timings after a warm-up: the least noisy estimate on a shared machine. */
function best(fn: () => void, runs: number): number {
  fn();
  fn();
  let fastest = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) fastest = Math.min(fastest, time(fn));
  return fastest;
}

export default async function bench() {
  const one = corpus(MIB, 42);
  // The same answers four times over: a 4x input with the identical mix, so the ratio is pure scaling.
  const four = [one, one, one, one].join("\n\n");
  const mib = Buffer.byteLength(one) / MIB;
  const perMib = (policy: string) => best(() => renderTables(one, { policy }), 15) / mib;
  const tables = one.split("\n").filter((line) => /^\|[-:|]+\|$/.test(line)).length;
  const auto = perMib("auto");
  const cards = perMib("cards");
  const grid = perMib("grid");
  // Interleaved so machine-load drift hits both sizes alike; the fastest of each is kept.
  const render1 = () => renderTables(one, { policy: "auto" });
  const render4 = () => renderTables(four, { policy: "auto" });
  render4();
  let t1 = Number.POSITIVE_INFINITY;
  let t4 = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 9; i++) {
    t1 = Math.min(t1, time(render1));
    t4 = Math.min(t4, time(render4));
  }
  // What merely producing a fresh string of the corpus's size costs on this machine, for scale.
  const half = one.length >> 1;
  const copy = best(() => [one.slice(0, half), one.slice(half)].join("").length, 15) / mib;
  return {
    corpusMiB: Number(mib.toFixed(2)),
    tablesPerMiB: Math.round(tables / mib),
    autoMsPerMiB: Number(auto.toFixed(2)),
    cardsMsPerMiB: Number(cards.toFixed(2)),
    gridMsPerMiB: Number(grid.toFixed(2)),
    scaling4xOver1x: Number((t4 / t1).toFixed(2)),
    stringCopyFloorMsPerMiB: Number(copy.toFixed(2)),
    targetMsPerMiB: 20,
    targetScalingMax: 4.5,
  };
}
