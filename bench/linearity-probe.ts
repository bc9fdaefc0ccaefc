/**
 * The linearity bench's measuring process (bench/linearity.bench.ts starts it with
 * `--single-threaded --expose-gc` and a large young generation); prints the bench's JSON on stdout.
 *
 * What is timed, and why it is not plain wall-clock time (the first version read 5-11 on functions
 * whose instruction counts, measured with valgrind's cachegrind, grow 3.9-4.1x with 4x input):
 * - CPU time of this process (process.cpuUsage), so load from other work on a shared 2-core
 *   machine does not land on one side of a ratio;
 * - `--single-threaded`: the collector's and compiler's helper threads would otherwise add their
 *   CPU time to whichever call they overlap (redactAll read 5.4 ns per character at one size and
 *   3.1-3.4 at every other; single-threaded, 3.1-3.3 throughout);
 * - no garbage collection inside a timed call: a full collection before each, and a young
 *   generation (512 MB per semi-space) that the call's own allocation does not fill.
 *   What the collector costs is the runtime's policy, not the function's algorithm, and it is not
 *   linear in the garbage: survivors of a big call are promoted and re-marked as the old generation
 *   grows. markdownToHtml on the fence ladder read 48 -> 105 ns per character from 256 Ki to 2 Mi
 *   with collections and a flat 29-33 without; renderTables and redactForDisplay likewise;
 * - n = 256 Ki units and 4n = 1 Mi units for every generator: both sides are past the CPU caches
 *   (from 64 Ki to 256 Ki the cost per character of linear code rose ~1.25x on this machine as the
 *   working set left them);
 * - each side is the minimum over rounds that alternate the two sizes, after a warm-up on both;
 * - a ratio above the target is measured again one window up (1 Mi -> 4 Mi) and the lower of the two
 *   counts, both printed: a size-triggered step shows in one window only, super-linear growth in
 *   both. fitTelegramHtml renders once while its result fits one message and re-renders the pieces
 *   once it does not (at most six levels, so linear): the backtick-line generator, whose HTML is
 *   80x shorter than its source, crosses that step between 256 Ki and 512 Ki (5.5 ns per character
 *   below it, a flat 21-22 from 512 Ki to 8 Mi).
 */
import { HOSTILE_GENERATORS } from "../test/helpers/hostile-text.js";
import { TEXT_FUNCTIONS } from "../test/helpers/text-functions.js";

const BASE = 256 * 1024;
const TARGET = 4.5;

const collect = (globalThis as { gc?: () => void }).gc;
if (collect === undefined) throw new Error("linearity-probe.ts needs --expose-gc");

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** CPU time of one call of `fn(text)`, after a full collection. */
function callMs(fn: (t: string) => unknown, text: string): number {
  collect?.();
  const t0 = cpuMs();
  fn(text);
  return cpuMs() - t0;
}

/**
 * time(large) / time(small), each the minimum over rounds alternating the two; more rounds for
 * quick calls, whose readings scatter more (CPU time still varies ~10% with the other core's load).
 */
function ratioOf(
  fn: (t: string) => unknown,
  small: string,
  large: string,
): { ratio: number; largeMs: number } {
  let t1 = callMs(fn, small);
  let t4 = callMs(fn, large);
  const rounds = t4 < 20 ? 7 : t4 < 200 ? 4 : 2;
  for (let round = 1; round < rounds; round++) {
    t1 = Math.min(t1, callMs(fn, small));
    t4 = Math.min(t4, callMs(fn, large));
  }
  // Below a millisecond for the large input, clock granularity dominates: report linear.
  return { ratio: t4 < 1 ? 4 : t4 / Math.max(t1, 0.001), largeMs: t4 };
}

const out: Record<string, number | string> = {};
const detail: string[] = [];
let worstOverall = 0;
for (const [name, fn] of TEXT_FUNCTIONS) {
  let worst = 0;
  let worstGen = "";
  for (const gen of HOSTILE_GENERATORS) {
    const small = gen.make(BASE);
    const large = gen.make(BASE * 4);
    fn(small);
    fn(large);
    const first = ratioOf(fn, small, large);
    let ratio = first.ratio;
    let note = `${first.ratio.toFixed(2)} (${first.largeMs.toFixed(1)}ms)`;
    if (first.ratio > TARGET) {
      // One window up: a size-triggered step shows in one window, super-linear growth in both.
      const larger = gen.make(BASE * 16);
      fn(larger);
      const second = ratioOf(fn, large, larger);
      ratio = Math.min(first.ratio, second.ratio);
      note += `, ${second.ratio.toFixed(2)} from 1 Mi to 4 Mi (${second.largeMs.toFixed(1)}ms)`;
    }
    detail.push(`${name}/${gen.name}=${note}`);
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
out.targetRatioMax = TARGET;
out.detail = detail.join("; ");
process.stdout.write(JSON.stringify(out));
