/**
 * "Durable when accept resolves" means it: a child process accepts messages as fast as it can, is
 * killed with SIGKILL at a seeded point, and every id it reported as accepted is in the journal when
 * the store is opened again.
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { open, useTempHome } from "./helpers.js";

const home = useTempHome();
const CHILD = fileURLToPath(new URL("./fixtures/accept-until-killed.ts", import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

/** Start the child, SIGKILL it once it has printed `killAfter` ids, and resolve to the ids it printed. */
function acceptThenKill(dir: string, killAfter: number): Promise<number[]> {
  const child = spawn(process.execPath, ["--import", TSX, CHILD], {
    env: { PATH: process.env.PATH ?? "", PARLEY_HOME: dir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => child.kill("SIGKILL"), 15_000);
    child.stderr.on("data", (d) => {
      err += String(d);
    });
    child.stdout.on("data", (d) => {
      out += String(d);
      const ids = out.split("\n").filter((l) => /^\d+$/.test(l));
      if (ids.length >= killAfter && child.exitCode === null) child.kill("SIGKILL");
    });
    child.on("exit", (_code, signal) => {
      clearTimeout(guard);
      if (signal !== "SIGKILL") return reject(new Error(`child ended without being killed: ${err}`));
      // A line cut by the kill has no newline yet; only complete lines were acknowledged.
      const complete = out.slice(0, out.lastIndexOf("\n") + 1);
      resolve(
        complete
          .split("\n")
          .filter((l) => /^\d+$/.test(l))
          .map(Number),
      );
    });
  });
}

/** A seeded sequence, so a failure names a reproducible kill point. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe("intake durability under SIGKILL", () => {
  it("every accept that resolved before the kill is in the journal after it", async () => {
    const random = seeded(16);
    const reported: number[] = [];
    for (let round = 0; round < 3; round++) {
      const killAfter = 50 + Math.floor(random() * 400);
      const ids = await acceptThenKill(home.dir, killAfter);
      expect(ids.length).toBeGreaterThanOrEqual(killAfter);
      reported.push(...ids);
    }
    const store = await open(home.dir);
    const journaled = new Set((await store.intake.unfinished()).map((u) => u.id));
    expect(reported.filter((id) => !journaled.has(id))).toEqual([]);
    expect((await store.health()).integrity).toEqual({ ok: true });
    await store.close();
  }, 60_000);
});
