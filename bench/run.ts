/**
 * Runs every bench/*.bench.ts module and prints one JSON object: {<bench name>: {<metric>: number}}.
 * A bench module default-exports an async function returning its metrics. `npm run bench [filter]`.
 */
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

type Bench = () => Promise<Record<string, number | string>>;

const here = dirname(fileURLToPath(import.meta.url));
const filter = process.argv[2] ?? "";
const results: Record<string, Record<string, number | string>> = {};
for (const file of readdirSync(here)
  .filter((f) => f.endsWith(".bench.ts"))
  .sort()) {
  const name = file.replace(/\.bench\.ts$/, "");
  if (filter && !name.includes(filter)) continue;
  const mod = (await import(pathToFileURL(join(here, file)).href)) as { default: Bench };
  results[name] = await mod.default();
}
process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
