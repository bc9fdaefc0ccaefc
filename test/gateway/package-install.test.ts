/**
 * The published package, as a user gets it: `npm pack`, then `npm install -g --prefix <tmp>` of the
 * tarball, then the installed `parley` from an empty folder. Needs the build (the suite runs after
 * `npm run build`, and so does CI).
 *
 * The install resolves the tarball's dependencies for real (npm's cache first, the registry for
 * what the cache lacks), so a runtime import missing from "dependencies" fails here. It runs with
 * --ignore-scripts: better-sqlite3's install script compiles SQLite from source (minutes on this
 * machine) because its prebuilt download is out of reach; instead its compiled addon is taken from
 * this checkout's node_modules, which `npm ci` built from the same version on the same Node. A
 * version mismatch is a failure with that reason, never a silent fallback.
 */
import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { WebChatSocket } from "../helpers/webchat-socket.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "parley-pack-"));
const prefix = join(work, "prefix");
const version = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;

interface PackResult {
  filename: string;
  size: number;
  unpackedSize: number;
  files: { path: string }[];
}

function npm(args: string[], cwd: string): string {
  return execFileSync("npm", args, {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 300_000,
  });
}

// The installed tree is some 400 packages: removing it outlasts the default hook timeout.
afterAll(() => rm(work, { recursive: true, force: true }), 120_000);

describe("the npm package", () => {
  let pack: PackResult;
  let tarball: string;

  it("packs what runs and no tests, fixtures, benches or sources", { timeout: 120_000 }, () => {
    expect(existsSync(join(ROOT, "dist", "gateway", "main.js")), "run `npm run build` first").toBe(true);
    pack = (
      JSON.parse(npm(["pack", "--json", "--pack-destination", work], ROOT)) as PackResult[]
    )[0] as PackResult;
    tarball = join(work, pack.filename);
    const paths = pack.files.map((f) => f.path);
    // The closing note quotes these.
    console.log(
      `packed ${pack.filename}: ${pack.size} B packed, ${pack.unpackedSize} B unpacked, ${paths.length} files`,
    );
    for (const needed of ["bin/parley.mjs", "dist/gateway/main.js", "README.md", "LICENSE", "package.json"])
      expect(paths).toContain(needed);
    expect(paths).toContain("docs/channels/telegram.md");
    expect(paths).toContain("docs/operations.md");
    const forbidden = paths.filter(
      (p) => /^(test|fixtures|bench|src|scripts|\.ci)\//.test(p) || p.endsWith(".test.js"),
    );
    expect(forbidden).toEqual([]);
  });

  it("installs with npm install -g into a prefix; parley --version and parley start from an empty folder answer", {
    timeout: 420_000,
  }, async () => {
    npm(
      [
        "install",
        "-g",
        "--prefix",
        prefix,
        tarball,
        "--prefer-offline",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
      ],
      work,
    );
    const installed = join(prefix, "lib", "node_modules", "parley");
    const sqlite = join(installed, "node_modules", "better-sqlite3");
    const ours = join(ROOT, "node_modules", "better-sqlite3");
    const versionOf = (dir: string) =>
      (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string }).version;
    expect(versionOf(sqlite), "the installed better-sqlite3 must match the checkout's compiled one").toBe(
      versionOf(ours),
    );
    cpSync(join(ours, "build"), join(sqlite, "build"), { recursive: true });

    const bin = join(prefix, "bin", "parley");
    const empty = mkdtempSync(join(work, "empty-"));
    const env = { PATH: process.env.PATH ?? "", HOME: empty, PARLEY_HOME: join(empty, ".parley") };
    expect(execFileSync(bin, ["--version"], { cwd: empty, env, encoding: "utf8" }).trim()).toBe(version);

    const child = spawn(bin, ["start", "--port", "0"], {
      cwd: empty,
      env: { ...env, DEMO_AGENT_SPEED: "0" },
    });
    let out = "";
    let err = "";
    child.stderr.on("data", (d) => {
      err += String(d);
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no URL in time\n${out}\n${err}`)), 30_000);
        child.on("exit", (code) => reject(new Error(`parley exited (${code})\n${out}\n${err}`)));
        child.stdout.on("data", (d) => {
          out += String(d);
          const m = /http:\/\/\S+\?token=\S+/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[0]);
          }
        });
      });
      const chat = await WebChatSocket.open(url, "pack-test");
      const before = chat.count;
      chat.say("hello");
      const answer = await chat.finished(before, 30_000);
      expect(answer.text).toContain("parley's demo agent");
      chat.close();
    } finally {
      child.removeAllListeners("exit");
      const exited = new Promise((done) => child.once("exit", done));
      child.kill("SIGTERM");
      await exited;
    }
  });
});
