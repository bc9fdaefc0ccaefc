/**
 * One gateway per data home: the exclusive lock file, its takeover when the owner is gone, and the
 * real binary refusing a second start on a home in use (then starting once the first has stopped).
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { acquireHomeLock, HOME_LOCK_FILE } from "../../src/gateway/home-lock.js";
import type { RunningParley } from "../helpers/spawn-parley.js";
import { BIN, freshHome, startParley } from "../helpers/spawn-parley.js";

describe("acquireHomeLock", () => {
  it("writes the owner's pid, refuses a live owner, and releases only its own lock", async () => {
    const home = freshHome();
    const lock = await acquireHomeLock(home, { pid: 1111 });
    expect(readFileSync(join(home, HOME_LOCK_FILE), "utf8")).toBe("1111\n");
    await expect(acquireHomeLock(home, { pid: 2222, isAlive: () => true })).rejects.toMatchObject({
      code: "REFUSED",
      message: expect.stringContaining("another parley (pid 1111) is already using"),
    });
    await lock.release();
    expect(existsSync(join(home, HOME_LOCK_FILE))).toBe(false);
    // A lock another process wrote since is not ours to remove.
    const again = await acquireHomeLock(home, { pid: 1111 });
    writeFileSync(join(home, HOME_LOCK_FILE), "3333\n");
    await again.release();
    expect(readFileSync(join(home, HOME_LOCK_FILE), "utf8")).toBe("3333\n");
  });

  it("takes over a lock whose owner is gone, or that names no process, and says so", async () => {
    const home = freshHome();
    writeFileSync(join(home, HOME_LOCK_FILE), "4444\n");
    const stale: number[] = [];
    const lock = await acquireHomeLock(home, {
      pid: 5555,
      isAlive: () => false,
      onStale: (p) => stale.push(p),
    });
    expect(stale).toEqual([4444]);
    expect(readFileSync(join(home, HOME_LOCK_FILE), "utf8")).toBe("5555\n");
    await lock.release();
    writeFileSync(join(home, HOME_LOCK_FILE), "garbage");
    const taken = await acquireHomeLock(home, { pid: 6666, isAlive: () => true });
    expect(readFileSync(join(home, HOME_LOCK_FILE), "utf8")).toBe("6666\n");
    await taken.release();
  });
});

describe("parley start on a home already in use", () => {
  let first: RunningParley | undefined;
  afterEach(async () => {
    await first?.stop();
    first = undefined;
  });

  it("the second refuses with the first's pid; after the first stops, a new one starts", async () => {
    first = await startParley();
    const home = first.home;
    const second = spawn(process.execPath, [BIN, "start", "--port", "0"], {
      cwd: home,
      env: { PATH: process.env.PATH ?? "", HOME: home, PARLEY_HOME: home, DEMO_AGENT_SPEED: "0" },
    });
    let err = "";
    second.stderr.on("data", (d) => {
      err += String(d);
    });
    const code = await new Promise<number | null>((resolve) => second.once("exit", resolve));
    expect(code).toBe(1);
    expect(err).toContain(`another parley (pid ${first.child.pid}) is already using ${home}`);
    expect(await first.stop()).toBe(0);
    expect(existsSync(join(home, HOME_LOCK_FILE))).toBe(false);
    first = await startParley([], { home });
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
  });
});
