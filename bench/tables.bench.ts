/**
 * renderTables throughput on a realistic ~1 MiB Markdown corpus: prose, lists, many tables (narrow,
 * wide, CJK, code spans, escaped pipes, header-only), tables inside code fences, and [OPTIONS:]
 * trailers. Reports ms per MiB under auto/cards/grid and the 4 MiB / 1 MiB time ratio (linear
 * scaling reads ~4). Target: <= 20 ms/MiB, ratio <= 4.5.
 */
import { renderTables } from "../src/messaging/tables.js";

const MIB = 1024 * 1024;

/** Deterministic PRNG (mulberry32) so every run measures the same corpus. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ["deploy", "region", "token", "server", "build", "the", "quick", "retry", "config", "cache", "merge"];
const CELLS = ["ok", "failed", "`a|b`", "x \\| y", "日本語", "東京 region", "😀 done", "p95 120ms", "", "n/a", "v1.2.3"];

function corpus(bytes: number, seed: number): string {
  const rand = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  const sentence = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(" ");
  const table = (cols: number, rows: number, wide: boolean) => {
    const cell = () => (wide ? `${pick(CELLS)} ${sentence(3)}` : pick(CELLS));
    const header = `| ${Array.from({ length: cols }, () => pick(WORDS)).join(" | ")} |`;
    const delimiter = `|${Array.from({ length: cols }, () => pick(["---", ":--", "--:", ":-:"])).join("|")}|`;
    const body = Array.from({ length: rows }, () => `| ${Array.from({ length: cols }, cell).join(" | ")} |`);
    return [header, delimiter, ...body].join("\n");
  };
  const blocks: string[] = [];
  let size = 0;
  while (size < bytes) {
    const kind = rand();
    let block: string;
    if (kind < 0.35) block = `${sentence(12)} | ${sentence(6)}.\n${sentence(20)}`;
    else if (kind < 0.45) block = Array.from({ length: 4 }, () => `- ${sentence(5)}`).join("\n");
    else if (kind < 0.65) block = table(2 + Math.floor(rand() * 3), 2 + Math.floor(rand() * 8), false);
    else if (kind < 0.75) block = table(3 + Math.floor(rand() * 4), 3 + Math.floor(rand() * 10), true);
    else if (kind < 0.8) block = table(3, 0, false);
    else if (kind < 0.9) block = `\`\`\`md\n${table(3, 4, false)}\n${sentence(8)}\n\`\`\``;
    else if (kind < 0.95) block = `${table(2, 3, false)}\n[OPTIONS: ${sentence(2)} | ${sentence(2)}]`;
    else block = `- \`\`\`\n  ${table(2, 2, false).replaceAll("\n", "\n  ")}\n  \`\`\``;
    blocks.push(block);
    size += Buffer.byteLength(block) + 2;
  }
  return blocks.join("\n\n");
}

function median(fn: () => void, runs: number): number {
  fn(); // warm-up (JIT)
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(runs / 2)]!;
}

export default async function bench() {
  const one = corpus(MIB, 42);
  const four = corpus(4 * MIB, 42);
  const mib = Buffer.byteLength(one) / MIB;
  const perMib = (policy: string) => median(() => renderTables(one, { policy }), 9) / mib;
  const tables = one.split("\n").filter((line) => /^\|[-:|]+\|$/.test(line)).length;
  const auto = perMib("auto");
  const cards = perMib("cards");
  const grid = perMib("grid");
  const t1 = median(() => renderTables(one, { policy: "auto" }), 7);
  const t4 = median(() => renderTables(four, { policy: "auto" }), 5);
  return {
    corpusMiB: Number(mib.toFixed(2)),
    tablesPerMiB: Math.round(tables / mib),
    autoMsPerMiB: Number(auto.toFixed(2)),
    cardsMsPerMiB: Number(cards.toFixed(2)),
    gridMsPerMiB: Number(grid.toFixed(2)),
    scaling4xOver1x: Number((t4 / t1).toFixed(2)),
    targetMsPerMiB: 20,
    targetScalingMax: 4.5,
  };
}
