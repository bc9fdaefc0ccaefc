/**
 * Linear time on hostile text: for every function agent text passes through, the time ratio
 * time(4n) / time(n) on each adversarial generator of test/helpers/hostile-text.ts (linear reads
 * ~4; target <= 4.5). Prints, per function, its worst ratio and the generator that produced it,
 * plus every ratio in `detail`. `npx tsx bench/run.ts linearity`.
 *
 * Sizes: n = 64 KiB units (the 1 MB single line is 256 KiB -> 1 MiB). Each measurement repeats the
 * call until 30 ms have passed and keeps the best per-call time, so sub-millisecond runs do not
 * read as noise.
 */
import { HOSTILE_GENERATORS } from "../test/helpers/hostile-text.js";
import { TEXT_FUNCTIONS } from "../test/helpers/text-functions.js";

const BASE = 64 * 1024;
const LINE_BASE = 256 * 1024;

function perCallMs(fn: (t: string) => unknown, text: string): number {
  let best = Number.POSITIVE_INFINITY;
  const started = performance.now();
  let runs = 0;
  while (runs < 2 || (performance.now() - started < 30 && runs < 50)) {
    const t = performance.now();
    fn(text);
    best = Math.min(best, performance.now() - t);
    runs++;
  }
  return best;
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
      const t1 = perCallMs(fn, small);
      const t4 = perCallMs(fn, large);
      // Below a millisecond for the large input there is nothing to scale: report 4 (linear).
      const ratio = t4 < 1 ? 4 : t4 / Math.max(t1, 0.001);
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
