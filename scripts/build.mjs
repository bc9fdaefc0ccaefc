// The compiled build (dist/) and whether it is up to date. `npm run build` always compiles;
// `npm start` (scripts/start.mjs) compiles only when the sources changed since the last build, so a
// second start on an unchanged tree skips the ~15 s compile. "Changed" is a fingerprint of every
// input's path, size and modification time (src/, the tsconfigs, package.json and its lock file),
// taken BEFORE compiling and stored beside the output when the compile succeeds: an edit, a new file
// or a deleted one all change it, and an edit made during a compile is caught by the next start.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** Where the fingerprint of the inputs of the last successful compile is kept. */
export const STAMP = join("dist", ".build-fingerprint");
/** What a compile reads besides src/. */
const INPUT_FILES = ["tsconfig.json", "tsconfig.build.json", "package.json", "package-lock.json"];
/** The file `parley` runs: a build without it is no build. */
const ENTRY = join("dist", "gateway", "main.js");

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? walk(path) : entry.isFile() ? [path] : [];
  });
}

/** A digest of every input's path, size and mtime, in a stable order. */
export function fingerprint(root = ROOT) {
  const files = [
    ...walk(join(root, "src")),
    ...INPUT_FILES.map((f) => join(root, f)).filter((f) => existsSync(f)),
  ].sort();
  const hash = createHash("sha256");
  for (const file of files) {
    const s = statSync(file);
    hash.update(`${relative(root, file)}\0${s.size}\0${s.mtimeMs}\n`);
  }
  return hash.digest("hex");
}

/** True when dist/ was compiled from exactly the inputs there are now. */
export function buildIsFresh(root = ROOT) {
  const stamp = join(root, STAMP);
  if (!existsSync(join(root, ENTRY)) || !existsSync(stamp)) return false;
  return readFileSync(stamp, "utf8").trim() === fingerprint(root);
}

/** Compile with tsc; on success record the fingerprint the compile started from. */
export function build(root = ROOT) {
  const before = fingerprint(root);
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const result = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json")], {
    cwd: root,
    stdio: "inherit",
  });
  if (result.status !== 0) return false;
  writeFileSync(join(root, STAMP), `${before}\n`);
  return true;
}

/** Compile unless the build is fresh; false only when a needed compile failed. */
export function buildIfStale(root = ROOT) {
  return buildIsFresh(root) || build(root);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exit(build() ? 0 : 1);
}
