/**
 * Linear time on hostile text: for every function agent text passes through, the time ratio
 * time(4n) / time(n) on each adversarial generator of test/helpers/hostile-text.ts (linear reads
 * ~4; target <= 4.5). Prints, per function, its worst ratio and the generator that produced it,
 * plus every ratio in `detail`. `npx tsx bench/run.ts linearity`.
 *
 * Sizes: n = 64 KiB units (the 1 MB single line is 256 KiB -> 1 MiB). Each side of a ratio is the
 * best per-call time over four alternating rounds (see ratioOf), so sub-millisecond runs and bursts
 * of load from other work do not read as super-linear time.
 */
import { HOSTILE_GENERATORS } from "../test/helpers/hostile-text.js";
import { TEXT_FUNCTIONS } from "../test/helpers/text-functions.js";

const BASE = 64 * 1024;
const LINE_BASE = 256 * 1024;

/** Best per-call time of `fn(text)` over repeats filling about `budgetMs`. */
function bestMs(fn: (t: string) => unknown, text: string, budgetMs: number): number {
  let best = Number.POSITIVE_INFINITY;
  const started = performance.now();
  let runs = 0;
  while (runs < 1 || (performance.now() - started < budgetMs && runs < 50)) {
    const t = performance.now();
    fn(text);
    best = Math.min(best, performance.now() - t);
    runs++;
  }
  return best;
}

/**
 * time(large) / time(small), each the minimum over rounds that alternate the two: a burst of load
 * from other work on a shared machine only ever adds time, and alternating keeps it from landing on
 * one side of the ratio.
 */
function ratioOf(
  fn: (t: string) => unknown,
  small: string,
  large: string,
): { ratio: number; largeMs: number } {
  let t1 = Number.POSITIVE_INFINITY;
  let t4 = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 4; round++) {
    t1 = Math.min(t1, bestMs(fn, small, 15));
    t4 = Math.min(t4, bestMs(fn, large, 30));
  }
  // Below two milliseconds for the large input, timer and GC noise dominate: report linear.
  return { ratio: t4 < 2 ? 4 : t4 / Math.max(t1, 0.001), largeMs: t4 };
}

export default async function bench(): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  const detail: string[] = [];
  let worstOverall = 0;
  for (const [name, fn] of TEXT_FUNCTIONS) {
    let worst = 0;
    let worstGen = "";
    for (const gen of HOSTILE_GENERATORS) {
      const base = gen.name === "single-line" ? LINE_BASE : BASE;
      const small = gen.make(base);
      const large = gen.make(base * 4);
      fn(small); // warm-up
      const { ratio, largeMs: t4 } = ratioOf(fn, small, large);
      detail.push(`${name}/${gen.name}=${ratio.toFixed(2)} (${t4.toFixed(1)}ms)`);
      if (ratio > worst) {
        worst = ratio;
        worstGen = gen.name;
      }
    }
    out[`${name}.worstRatio`] = Number(worst.toFixed(2));
    out[`${name}.worstOn`] = worstGen;
    worstOverall = Math.max(worstOverall, worst);
  }
  out.worstRatioOverall = Number(worstOverall.toFixed(2));
  out.targetRatioMax = 4.5;
  out.detail = detail.join("; ");
  return out;
}
