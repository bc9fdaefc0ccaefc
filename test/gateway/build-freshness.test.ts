/**
 * `npm start` on an unchanged tree skips the compile (scripts/build.mjs), and `npm start -- doctor`
 * runs doctor (scripts/start.mjs). The skip logic is tested on a small project of its own: what
 * makes a build stale (an edit, a new file, a deleted one, a tsconfig change, a missing output) and
 * that an unchanged tree is not compiled again. No timing is asserted; the bench note measures it.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { buildIfStale, buildIsFresh, fingerprint, STAMP } from "../../scripts/build.mjs";
import { parleyArgs } from "../../scripts/start.mjs";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A project shaped like parley's: src/gateway/main.ts compiled to dist/ by tsconfig.build.json. */
function project(): string {
  const root = mkdtempSync(join(tmpdir(), "parley-build-"));
  dirs.push(root);
  mkdirSync(join(root, "src", "gateway"), { recursive: true });
  writeFileSync(join(root, "src", "gateway", "main.ts"), "export const answer: number = 42;\n");
  writeFileSync(join(root, "src", "util.ts"), "export const x = 1;\n");
  writeFileSync(
    join(root, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { target: "ES2022", module: "NodeNext", strict: true } }),
  );
  writeFileSync(
    join(root, "tsconfig.build.json"),
    JSON.stringify({
      extends: "./tsconfig.json",
      compilerOptions: { rootDir: "src", outDir: "dist" },
      include: ["src"],
    }),
  );
  writeFileSync(join(root, "package.json"), JSON.stringify({ type: "module" }));
  return root;
}

/** Moves a file's mtime into the future, as an editor save does. */
function touch(path: string): void {
  const later = new Date(Date.now() + 5_000);
  utimesSync(path, later, later);
}

const stamped = (root: string) => {
  mkdirSync(join(root, "dist", "gateway"), { recursive: true });
  writeFileSync(join(root, "dist", "gateway", "main.js"), "");
  writeFileSync(join(root, STAMP), `${fingerprint(root)}\n`);
};

describe("the build's freshness", () => {
  it("is stale with no build, fresh once stamped, and stale again after any change to its inputs", () => {
    const root = project();
    expect(buildIsFresh(root)).toBe(false);
    stamped(root);
    expect(buildIsFresh(root)).toBe(true);

    touch(join(root, "src", "util.ts"));
    expect(buildIsFresh(root)).toBe(false);
    stamped(root);

    writeFileSync(join(root, "src", "added.ts"), "export {};\n");
    expect(buildIsFresh(root)).toBe(false);
    stamped(root);

    rmSync(join(root, "src", "added.ts"));
    expect(buildIsFresh(root)).toBe(false);
    stamped(root);

    touch(join(root, "tsconfig.build.json"));
    expect(buildIsFresh(root)).toBe(false);
    stamped(root);

    rmSync(join(root, "dist", "gateway", "main.js"));
    expect(buildIsFresh(root)).toBe(false);
  });

  it("compiles a stale tree, skips an unchanged one, and compiles again after an edit", () => {
    const root = project();
    const out = join(root, "dist", "gateway", "main.js");
    expect(buildIfStale(root)).toBe(true);
    const first = statSync(out).mtimeMs;
    expect(buildIsFresh(root)).toBe(true);

    expect(buildIfStale(root)).toBe(true);
    expect(statSync(out).mtimeMs).toBe(first); // not compiled again

    writeFileSync(join(root, "src", "gateway", "main.ts"), "export const answer: number = 43;\n");
    touch(join(root, "src", "gateway", "main.ts"));
    expect(buildIfStale(root)).toBe(true);
    expect(statSync(out).mtimeMs).not.toBe(first);
    expect(buildIsFresh(root)).toBe(true);
  }, 60_000);

  it("a failed compile records nothing: the next start tries again", () => {
    const root = project();
    writeFileSync(join(root, "src", "util.ts"), "export const x: number = 'not a number';\n");
    expect(buildIfStale(root)).toBe(false);
    expect(buildIsFresh(root)).toBe(false);
  }, 60_000);
});

describe("npm start's arguments", () => {
  it("runs start by default, and the command given after -- otherwise", () => {
    expect(parleyArgs([])).toEqual(["start"]);
    expect(parleyArgs(["--port", "0"])).toEqual(["start", "--port", "0"]);
    expect(parleyArgs(["doctor"])).toEqual(["doctor"]);
    expect(parleyArgs(["doctor", "--config", "x.json"])).toEqual(["doctor", "--config", "x.json"]);
    expect(parleyArgs(["start", "--port", "9"])).toEqual(["start", "--port", "9"]);
    expect(parleyArgs(["--help"])).toEqual(["--help"]);
    expect(parleyArgs(["service", "install", "--print"])).toEqual(["service", "install", "--print"]);
    expect(parleyArgs(["--version"])).toEqual(["--version"]);
  });
});
