/**
 * Opening the default store: SQLite in the data home (`parley.db`), migrated, with an older
 * install's JSON state imported once. The gateway calls this after taking the home lock; it refuses
 * (typed error, nothing reset) on a corrupt database or an unreadable legacy session file.
 * Layer: store.
 */
import { join } from "node:path";
import type { Timers } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { ParleyStore } from "../messaging/store/port.js";
import type { LegacyImportResult } from "./legacy-import.js";
import { importLegacyState } from "./legacy-import.js";
import { isPostgresUrl, PostgresEngine, postgresRepairHint } from "./postgres/engine.js";
import type { SqlEngine } from "./sql/engine.js";
import { SqlParleyStore } from "./sql/store.js";
import type { SqliteSynchronous } from "./sqlite/engine.js";
import { SqliteEngine, sqliteRepairHint } from "./sqlite/engine.js";

export { TELEGRAM_CURSOR } from "./legacy-import.js";

/** The database file, in the data home. */
export const STORE_FILE = "parley.db";

export interface OpenStoreOptions {
  logger?: Logger;
  now?: () => number;
  timers?: Timers;
  /** See SqliteEngine: NORMAL survives a process kill per commit, FULL survives power loss per commit. */
  synchronous?: SqliteSynchronous;
  /** Told what an older install's JSON files brought in (the gateway logs it). */
  onImport?: (result: LegacyImportResult) => void;
  /**
   * `postgres://…` (config `store.url` or PARLEY_DATABASE_URL): the shared store of several
   * gateways (docs/scale-out.md). Absent: SQLite in the data home, the zero-config default.
   */
  url?: string;
  /** Reported to PostgreSQL as application_name (which gateway holds which connection). */
  applicationName?: string;
}

export function storePath(home: string): string {
  return join(home, STORE_FILE);
}

async function openEngine(
  home: string,
  options: OpenStoreOptions,
): Promise<{ engine: SqlEngine; repair: string }> {
  if (options.url !== undefined) {
    if (!isPostgresUrl(options.url))
      throw new RangeError("store.url must be a postgres:// or postgresql:// URL");
    const engine = await PostgresEngine.open(options.url, {
      ...(options.applicationName ? { applicationName: options.applicationName } : {}),
    });
    return { engine, repair: postgresRepairHint(engine.location) };
  }
  const path = storePath(home);
  const engine = await SqliteEngine.open(path, {
    ...(options.synchronous ? { synchronous: options.synchronous } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  return { engine, repair: sqliteRepairHint(path) };
}

export async function openStore(home: string, options: OpenStoreOptions = {}): Promise<ParleyStore> {
  const { engine, repair } = await openEngine(home, options);
  try {
    const imported = await importLegacyState(engine, home, {
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
    if (imported.renamed.length > 0 || imported.resumeProblems.size > 0) options.onImport?.(imported);
    return await SqlParleyStore.open(engine, {
      repair,
      legacyResumeProblems: imported.resumeProblems,
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.now ? { now: options.now } : {}),
      ...(options.timers ? { timers: options.timers } : {}),
    });
  } catch (error) {
    await engine.close();
    throw error;
  }
}
