/**
 * Linear time on hostile text: for every function agent text passes through, the time ratio
 * time(4n) / time(n) on each adversarial generator of test/helpers/hostile-text.ts (linear reads
 * ~4; target <= 4.5). Prints, per function, its worst ratio and the generator that produced it,
 * plus every ratio in `detail`. `npx tsx bench/run.ts linearity`.
 *
 * The measuring runs in a child process (bench/linearity-probe.ts) started with `--single-threaded`,
 * `--expose-gc` and a large young generation; see there for what is timed and why it is not plain
 * wall-clock time.
 */
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
/** Young generation per semi-space, MB: large enough that no collection runs inside a timed call. */
const YOUNG_MB = 512;

export default async function bench(): Promise<Record<string, number | string>> {
  const child = spawnSync(
    process.execPath,
    [
      "--single-threaded",
      "--expose-gc",
      `--max-semi-space-size=${YOUNG_MB}`,
      `--min-semi-space-size=${YOUNG_MB}`,
      "--import",
      "tsx",
      join(here, "linearity-probe.ts"),
    ],
    { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
  );
  if (child.status !== 0) throw new Error(`linearity probe failed (${child.status}): ${child.stderr}`);
  return JSON.parse(child.stdout) as Record<string, number | string>;
}
