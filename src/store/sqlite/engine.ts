/**
 * The SQLite engine: one file in the data home through better-sqlite3, spoken to through Kysely.
 *
 * Durability. WAL mode with synchronous=NORMAL by default: a commit is written to the WAL file
 * before the call returns, so it survives a SIGKILL or a crash of parley (the kernel holds the
 * bytes); only an OS crash or power loss can take the last commits before the next fsync. FULL
 * (fsync per commit) would close that window at ~1-10 ms per message on this class of disk, which
 * misses the intake target by a factor of four. Instead the commits that let a platform FORGET a
 * message (a cursor advance; see CursorStore) run with FULL: that fsync also covers every earlier
 * accept in the WAL, so a message a platform has let go of survives power loss too. `synchronous:
 * "FULL"` makes every commit that durable, at the cost measured in bench/intake.bench.ts.
 *
 * Corruption is detected at open (a file that is not a database, or a failing quick_check) and
 * raised as StoreCorruptError with a repair hint; the file is never reset or rewritten. Layer: store.
 */
import { closeSync, mkdirSync, openSync } from "node:fs";
import { stat } from "node:fs/promises";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { Kysely, SqliteDialect, sql } from "kysely";
import type { Logger } from "../../messaging/base/logger.js";
import { silentLogger } from "../../messaging/base/logger.js";
import { StoreCorruptError } from "../../messaging/store/errors.js";
import type { IntegrityResult } from "../../messaging/store/port.js";
import type { ParleyDb, SqlEngine } from "../sql/engine.js";
import { migrateToLatest } from "../sql/migrations.js";
import type { ParleyDatabase } from "../sql/schema.js";
import { Checkpointer } from "./checkpointer.js";

export type SqliteSynchronous = "NORMAL" | "FULL";

export interface SqliteEngineOptions {
  /** NORMAL (default): every commit survives a process kill; FULL: every commit survives power loss. */
  synchronous?: SqliteSynchronous;
  /** How long a statement waits for a lock held by another connection (doctor reading, say). */
  busyTimeoutMs?: number;
  /** How often the checkpoint thread folds the WAL back into the database (see checkpointer.ts). */
  checkpointIntervalMs?: number;
  logger?: Logger;
}

const DEFAULT_CHECKPOINT_INTERVAL_MS = 250;
/** The writer's own checkpoint threshold, in pages: only a backstop (16 MiB of WAL at 4 KiB pages). */
const BACKSTOP_CHECKPOINT_PAGES = 4000;

/** What the operator should do about a corrupt database file: keep it, salvage it, or set it aside. */
export function sqliteRepairHint(path: string): string {
  return (
    `Stop parley and copy "${path}" together with any "${path}-wal" and "${path}-shm" beside it to a safe ` +
    `place. To salvage what is readable: sqlite3 "${path}" ".recover" | sqlite3 "${path}.recovered", then ` +
    `move the three originals aside and "${path}.recovered" to "${path}". To start empty instead, move ` +
    "the three files aside and restart (sessions, resume records and unanswered messages are then lost)."
  );
}

/** The SQLite result codes that mean the file itself is damaged (not busy, not a permission problem). */
export function isCorruption(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && (code === "SQLITE_NOTADB" || code.startsWith("SQLITE_CORRUPT")))
      return true;
  }
  return false;
}

function corrupt(path: string, problem: string, cause?: unknown): StoreCorruptError {
  return new StoreCorruptError(
    path,
    problem,
    sqliteRepairHint(path),
    cause === undefined ? undefined : { cause },
  );
}

/** Create the file owner-only before SQLite does: it gives its -wal and -shm the same mode. */
function createPrivately(path: string): boolean {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(path, "wx", 0o600));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

/** PRAGMA integrity_check / quick_check rows: a single "ok", or one line per problem. */
export function integrityOf(rows: readonly Record<string, unknown>[]): IntegrityResult {
  const lines = rows.map((r) => String(Object.values(r)[0]));
  return lines.length === 1 && lines[0] === "ok" ? { ok: true } : { ok: false, problems: lines };
}

export class SqliteEngine implements SqlEngine {
  readonly dialect = "sqlite" as const;

  private constructor(
    readonly db: ParleyDb,
    readonly location: string,
    private readonly synchronous: SqliteSynchronous,
    private readonly checkpointer: Checkpointer,
    private readonly log: Logger,
  ) {}

  /** Open (creating it if absent), check and migrate the database at `path`. */
  static async open(path: string, options: SqliteEngineOptions = {}): Promise<SqliteEngine> {
    const synchronous = options.synchronous ?? "NORMAL";
    const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    const created = createPrivately(path);
    const raw = new Database(path, { fileMustExist: true, timeout: busyTimeoutMs });
    try {
      // Only before the first table exists: lets a purge give pages back without a full VACUUM.
      if (created) raw.pragma("auto_vacuum = INCREMENTAL");
      // The first statement reads the header: a file that is not a database fails here.
      const mode = raw.pragma("journal_mode = WAL", { simple: true });
      if (mode !== "wal") throw new Error(`${path}: SQLite refused WAL mode (got ${String(mode)})`);
      raw.pragma(`synchronous = ${synchronous}`);
      raw.pragma(`wal_autocheckpoint = ${BACKSTOP_CHECKPOINT_PAGES}`);
      // A purge must not leave the deleted text readable in free pages.
      raw.pragma("secure_delete = ON");
      const check = integrityOf(raw.pragma("quick_check") as Record<string, unknown>[]);
      if (!check.ok)
        throw corrupt(path, `fails its integrity check (${check.problems.slice(0, 3).join("; ")})`);
    } catch (error) {
      raw.close();
      if (error instanceof StoreCorruptError) throw error;
      if (isCorruption(error))
        throw corrupt(path, `is not a readable database (${(error as Error).message})`, error);
      throw error;
    }
    const db = new Kysely<ParleyDatabase>({ dialect: new SqliteDialect({ database: raw }) });
    try {
      await migrateToLatest(db, "sqlite", path);
    } catch (error) {
      await db.destroy();
      if (isCorruption(error)) throw corrupt(path, "could not be migrated: it is damaged", error);
      throw error;
    }
    const log = options.logger ?? silentLogger;
    const checkpointer = new Checkpointer({
      path,
      intervalMs: options.checkpointIntervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS,
      busyTimeoutMs,
      onError: (error) =>
        log.warn("store: WAL checkpoint failed; the writer's own checkpoint covers it", { error }),
    });
    return new SqliteEngine(db, path, synchronous, checkpointer, log);
  }

  durably<T>(fn: (db: ParleyDb) => Promise<T>): Promise<T> {
    if (this.synchronous === "FULL") return fn(this.db);
    // One connection for the three statements, so no other commit runs while FULL is on.
    return this.db.connection().execute(async (conn) => {
      await sql`pragma synchronous = FULL`.execute(conn);
      try {
        return await fn(conn);
      } finally {
        await sql`pragma synchronous = NORMAL`.execute(conn);
      }
    });
  }

  async afterPurge(): Promise<void> {
    await sql`pragma incremental_vacuum`.execute(this.db);
    // Old page images in the WAL would still hold the deleted text: fold them in and truncate.
    const result = await sql<{ busy: number }>`pragma wal_checkpoint(TRUNCATE)`.execute(this.db);
    if (result.rows[0]?.busy) {
      // A reader (doctor, say) held the WAL: the rows are deleted, but old page images stay in the
      // WAL until it is reused. Said so rather than claimed gone.
      this.log.warn(
        "store: purge could not truncate the WAL (a reader held it); old pages remain in it for now",
      );
    }
  }

  async sizeBytes(): Promise<number> {
    return fileSizes(this.location);
  }

  async integrity(): Promise<IntegrityResult> {
    const result = await sql<Record<string, unknown>>`pragma integrity_check`.execute(this.db);
    return integrityOf(result.rows);
  }

  /** The checkpoint thread first, then the writer (whose close folds in and removes the WAL). */
  async close(): Promise<void> {
    try {
      await this.checkpointer.stop();
    } finally {
      await this.db.destroy();
    }
  }
}

/** The database file plus its WAL (which can hold most recent writes until a checkpoint). */
export async function fileSizes(path: string): Promise<number> {
  let total = 0;
  for (const file of [path, `${path}-wal`]) {
    try {
      total += (await stat(file)).size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  return total;
}
