/**
 * One gateway per data home. Two processes on the same home would each load sessions.json, then
 * overwrite each other's writes (links, titles, resume records) without either noticing, so the
 * second one refuses to start and names the first. The lock is a file created exclusively
 * (`parley.lock`, holding the owner's pid); a lock whose process is gone is taken over.
 */
import { open, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { ParleyError } from "../messaging/base/errors.js";

export const HOME_LOCK_FILE = "parley.lock";

export interface HomeLock {
  readonly path: string;
  /** The pid of a dead owner whose lock this one took over: that run did not stop cleanly. */
  readonly tookOverFrom?: number;
  /** Remove the lock if it is still ours. Idempotent. */
  release(): Promise<void>;
}

export interface HomeLockOptions {
  pid?: number;
  /** Whether a process is running (default: signal 0). Injected so tests need no second process. */
  isAlive?: (pid: number) => boolean;
  /** Told when a dead owner's lock is taken over. */
  onStale?: (stalePid: number) => void;
}

export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else, which still means "running".
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function tryCreate(path: string, pid: number): Promise<boolean> {
  try {
    const fh = await open(path, "wx", 0o600);
    try {
      await fh.writeFile(`${pid}\n`, "utf8");
    } finally {
      await fh.close();
    }
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

async function ownerOf(path: string): Promise<number | undefined> {
  try {
    const pid = Number.parseInt((await readFile(path, "utf8")).trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

export async function acquireHomeLock(home: string, options: HomeLockOptions = {}): Promise<HomeLock> {
  const path = join(home, HOME_LOCK_FILE);
  const pid = options.pid ?? process.pid;
  const isAlive = options.isAlive ?? processIsAlive;
  let tookOverFrom: number | undefined;
  // Two rounds: the second follows a stale takeover (or a lock that vanished while we looked).
  for (let round = 0; round < 2; round += 1) {
    if (await tryCreate(path, pid)) {
      let released = false;
      return {
        path,
        ...(tookOverFrom !== undefined ? { tookOverFrom } : {}),
        async release() {
          if (released) return;
          released = true;
          // Only our own: a lock rewritten by a later owner is theirs to remove.
          if ((await ownerOf(path)) === pid) await rm(path, { force: true });
        },
      };
    }
    const owner = await ownerOf(path);
    if (owner !== undefined && owner !== pid && isAlive(owner)) {
      throw new ParleyError(
        "REFUSED",
        `another parley (pid ${owner}) is already using ${home}. Stop it, or give this one its own ` +
          `PARLEY_HOME. If no parley is running, delete ${path}.`,
      );
    }
    // Garbled, ours from a previous life, or a dead process: the lock protects nobody. Removed only
    // if it still names that owner; two processes taking over one crashed owner's lock in the same
    // instant is the window this leaves (each then re-runs the exclusive create).
    if ((await ownerOf(path)) !== owner) continue;
    // Our own pid from a previous life is a restart under the same pid: still an unclean stop.
    if (owner !== undefined) {
      options.onStale?.(owner);
      tookOverFrom = owner;
    }
    await rm(path, { force: true });
  }
  throw new ParleyError("REFUSED", `could not take the lock ${path}; is another parley starting?`);
}
