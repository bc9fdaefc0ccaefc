/**
 * A read-only look at the database for `parley doctor`, safe while a gateway runs (WAL lets a
 * reader in beside the writer): nothing is migrated, imported or repaired, and an absent file is
 * reported, not created. Layer: store.
 */
import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import { Kysely, SqliteDialect, sql } from "kysely";
import type { InboundDropTotal, IntegrityResult } from "../../messaging/store/port.js";
import { appliedMigrations, LATEST_SCHEMA_VERSION, schemaVersionOf } from "../sql/migrations.js";
import type { ParleyDatabase } from "../sql/schema.js";
import { INBOUND_DROPS_SCHEMA, SqlInboundDropStore } from "../sql/small-stores.js";
import { fileSizes, integrityOf, isCorruption, sqliteRepairHint } from "./engine.js";

export type StoreInspection =
  | { state: "absent"; location: string }
  | { state: "corrupt"; location: string; sizeBytes: number; problem: string; repair: string }
  /** A database server that did not answer (PostgreSQL): a start would fail the same way. */
  | { state: "unreachable"; location: string; problem: string }
  | {
      state: "present";
      location: string;
      sizeBytes: number;
      schemaVersion: number;
      /** The newest version this build migrates to; a larger schemaVersion means a newer parley wrote it. */
      latestSchemaVersion: number;
      integrity: IntegrityResult;
      /** What the operator does when the integrity check fails (the engine's own tools). */
      repair: string;
      unfinishedIntake: number;
      /** Acceptance time (epoch ms) of the oldest unfinished message, if any. */
      oldestUnfinishedAtMs: number | null;
      /** Inbound frames the channels did not turn into messages, per channel and reason. */
      inboundDrops: InboundDropTotal[];
    };

export async function inspectSqliteStore(path: string): Promise<StoreInspection> {
  if (!existsSync(path)) return { state: "absent", location: path };
  const sizeBytes = await fileSizes(path);
  let db: Kysely<ParleyDatabase> | undefined;
  try {
    db = new Kysely<ParleyDatabase>({
      dialect: new SqliteDialect({ database: new Database(path, { readonly: true, fileMustExist: true }) }),
    });
    const integrity = integrityOf(
      (await sql<Record<string, unknown>>`pragma integrity_check`.execute(db)).rows,
    );
    const schemaVersion = schemaVersionOf(await appliedMigrations(db));
    let unfinishedIntake = 0;
    let oldestUnfinishedAtMs: number | null = null;
    if (schemaVersion >= 1) {
      const row = await db
        .selectFrom("intake")
        .select((eb) => [eb.fn.countAll<number>().as("n"), eb.fn.min("accepted_at_ms").as("oldest")])
        .where("state", "<>", "done")
        .executeTakeFirstOrThrow();
      unfinishedIntake = Number(row.n);
      oldestUnfinishedAtMs = row.oldest === null ? null : Number(row.oldest);
    }
    return {
      state: "present",
      location: path,
      sizeBytes,
      schemaVersion,
      latestSchemaVersion: LATEST_SCHEMA_VERSION,
      integrity,
      repair: sqliteRepairHint(path),
      unfinishedIntake,
      oldestUnfinishedAtMs,
      inboundDrops: schemaVersion >= INBOUND_DROPS_SCHEMA ? await new SqlInboundDropStore(db).totals() : [],
    };
  } catch (error) {
    if (!isCorruption(error)) throw error;
    return {
      state: "corrupt",
      location: path,
      sizeBytes,
      problem: `is not a readable database (${(error as Error).message})`,
      repair: sqliteRepairHint(path),
    };
  } finally {
    await db?.destroy();
  }
}
