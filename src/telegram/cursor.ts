/**
 * The durable getUpdates cursor. getUpdates(offset=N) is ALSO Telegram's acknowledgement of
 * everything below N, so an in-memory cursor makes a restart re-request from 0 and re-answer every
 * update the last process never confirmed. Persisted under $PARLEY_HOME/routing/ (the directory a
 * sandbox must keep the agent out of: a planted large offset would silently skip every message).
 *
 * What is persisted is a LOW-WATER MARK, not what the poll observed: with updates in flight it is
 * the oldest in-flight id, so a crash mid-turn replays that update once instead of losing it here.
 * Resolution covers refusal and failure as well as success (all are terminal), or a dropped update
 * would replay on every restart forever. Writes are serialized, atomic and ADVANCE-ONLY: two turns
 * finishing out of order must never regress the file. Any unusable file reads as 0 (one bounded
 * replay, the pre-persistence behaviour), and a failed write costs one replay window, not the channel.
 */
import { mkdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../messaging/base/logger.js";
import { silentLogger } from "../messaging/base/logger.js";
import { atomicWriteFile } from "../messaging/session/file-session-store.js";

export const CURSOR_DIR = "routing";
export const CURSOR_FILE = "telegram_offset.json";
/** Where a cursor lived before it moved under routing/; deleted, never migrated (it was writable). */
const LEGACY_CURSOR_FILE = "telegram_offset.json";

export type CursorWrite = (path: string, dir: string, data: string) => Promise<void>;

export interface CursorOptions {
  home: string;
  logger?: Logger;
  /** Test seam for the atomic write. */
  write?: CursorWrite;
}

/** Parse a cursor file; null when it cannot be trusted (the caller reads that as 0). */
export function parseCursor(text: string): number | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const offset = (value as { offset?: unknown } | null)?.offset;
  return typeof offset === "number" && Number.isSafeInteger(offset) && offset >= 0 ? offset : null;
}

export class UpdateCursor {
  readonly dir: string;
  readonly path: string;
  private observed: number;
  private persisted: number;
  private readonly inFlight = new Set<number>();
  private chain: Promise<void> = Promise.resolve();
  private readonly log: Logger;
  private readonly write: CursorWrite;

  private constructor(options: CursorOptions, loaded: number) {
    this.dir = join(options.home, CURSOR_DIR);
    this.path = join(this.dir, CURSOR_FILE);
    this.observed = loaded;
    this.persisted = loaded;
    this.log = options.logger ?? silentLogger;
    this.write = options.write ?? ((path, dir, data) => atomicWriteFile(path, dir, data));
  }

  static async load(options: CursorOptions): Promise<UpdateCursor> {
    const log = options.logger ?? silentLogger;
    const legacy = join(options.home, LEGACY_CURSOR_FILE);
    await rm(legacy, { force: true }).catch((error: unknown) =>
      log.warn("telegram: could not delete a pre-routing cursor file", { error: String(error) }),
    );
    const path = join(options.home, CURSOR_DIR, CURSOR_FILE);
    let loaded = 0;
    try {
      const parsed = parseCursor(await readFile(path, "utf8"));
      if (parsed === null) log.warn("telegram: cursor file unusable; starting from 0 (one bounded replay)");
      loaded = parsed ?? 0;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT")
        log.warn("telegram: cursor file unreadable; starting from 0 (one bounded replay)", {
          error: String(error),
        });
    }
    return new UpdateCursor(options, loaded);
  }

  /** The offset to poll with: one past the newest update seen. */
  get offset(): number {
    return this.observed;
  }

  /** The value on disk (or loaded): what a restart would poll from. */
  get persistedOffset(): number {
    return this.persisted;
  }

  /** The observed cursor when nothing is in flight, else the oldest in-flight id. */
  persistable(): number {
    let low = this.observed;
    for (const id of this.inFlight) low = Math.min(low, id);
    return low;
  }

  /** A polled batch was handed to handlers; call once per batch, then persist. */
  register(updateIds: readonly number[]): void {
    for (const id of updateIds) {
      this.inFlight.add(id);
      this.observed = Math.max(this.observed, id + 1);
    }
  }

  /** An update reached a terminal state (answered, refused or failed). */
  resolve(updateId: number): Promise<void> {
    this.inFlight.delete(updateId);
    return this.persist();
  }

  /** Write the low-water mark if it advanced. Serialized, so two finishing turns cannot regress it. */
  persist(): Promise<void> {
    this.chain = this.chain.then(async () => {
      const value = this.persistable();
      if (value <= this.persisted) return;
      try {
        await mkdir(this.dir, { recursive: true, mode: 0o700 });
        await this.write(this.path, this.dir, `${JSON.stringify({ offset: value })}\n`);
        this.persisted = value;
      } catch (error) {
        this.log.error("telegram: persisting the getUpdates cursor failed; a restart may replay once", {
          error: String(error),
        });
      }
    });
    return this.chain;
  }
}
