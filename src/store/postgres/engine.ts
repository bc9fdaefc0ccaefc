/**
 * The PostgreSQL engine: the same schema and migrations as SQLite, through the `pg` driver behind
 * Kysely, for several gateways sharing one state (docs/scale-out.md). `pg` is imported only when a
 * PostgreSQL store is opened, so the zero-config SQLite install never loads it.
 *
 * Durability: PostgreSQL's default `synchronous_commit = on` fsyncs the WAL at every commit, so
 * every accept already survives power loss on the database host; `durably` has nothing to add.
 * Migrations run under Kysely's PostgreSQL migration lock (an advisory lock), so gateways starting
 * together migrate once. Layer: store.
 */

import { Kysely, PostgresDialect, sql } from "kysely";
import type { Pool, PoolConfig } from "pg";
import type { IntegrityResult } from "../../messaging/store/port.js";
import type { ClusterSignals, ParleyDb, SqlEngine } from "../sql/engine.js";
import { migrateToLatest } from "../sql/migrations.js";
import type { ParleyDatabase } from "../sql/schema.js";
import { PostgresSignals } from "./signals.js";

export interface PostgresEngineOptions {
  /** Connections per gateway: the intake path, turns and the lease heartbeat share them. */
  maxConnections?: number;
  /** How long a request waits for a free connection before failing (never forever). */
  connectTimeoutMs?: number;
  /** Reported to the server as application_name (pg_stat_activity shows which gateway is which). */
  applicationName?: string;
}

const DEFAULT_MAX_CONNECTIONS = 10;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/** The URL without its password: what reports, logs and errors may name. */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    parsed.searchParams.delete("password");
    return parsed.toString();
  } catch {
    // An unparsable URL may still hold a secret: name none of it.
    return "postgres://(unparsable url)";
  }
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

/** What the operator should do when PostgreSQL reports damage: its own tools, never a reset by parley. */
export function postgresRepairHint(location: string): string {
  return (
    `parley never resets ${location}. Restore the database from your PostgreSQL backups (pg_dump / ` +
    "point-in-time recovery) or repair it with PostgreSQL's own tools, then start the gateways again."
  );
}

export async function loadPool(): Promise<new (config: PoolConfig) => Pool> {
  const pg = await import("pg");
  // pg is CommonJS: its classes sit on the default export under ESM.
  const mod = (pg as unknown as { default?: { Pool: new (config: PoolConfig) => Pool } }).default ?? pg;
  return (mod as { Pool: new (config: PoolConfig) => Pool }).Pool;
}

export class PostgresEngine implements SqlEngine {
  readonly dialect = "postgres" as const;
  private readonly notifications: PostgresSignals;

  private constructor(
    readonly db: ParleyDb,
    readonly location: string,
    pool: Pool,
  ) {
    this.notifications = new PostgresSignals(pool, db);
  }

  get signals(): ClusterSignals {
    return this.notifications;
  }

  /** Connect, and bring the schema to the latest version (once across racing gateways). */
  static async open(url: string, options: PostgresEngineOptions = {}): Promise<PostgresEngine> {
    const location = redactDatabaseUrl(url);
    const PoolClass = await loadPool();
    const pool = new PoolClass({
      connectionString: url,
      max: options.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
      connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      ...(options.applicationName ? { application_name: options.applicationName } : {}),
    });
    // An idle connection the server dropped must not crash the gateway: the pool replaces it.
    pool.on("error", () => {});
    const db = new Kysely<ParleyDatabase>({ dialect: new PostgresDialect({ pool }) });
    try {
      await migrateToLatest(db, "postgres", location);
    } catch (error) {
      await db.destroy();
      throw error;
    }
    return new PostgresEngine(db, location, pool);
  }

  /** Every commit is already fsynced by the server (synchronous_commit = on). */
  durably<T>(fn: (db: ParleyDb) => Promise<T>): Promise<T> {
    return fn(this.db);
  }

  /** Reclaim the purged rows' space so their text does not linger in dead tuples until autovacuum. */
  async afterPurge(): Promise<void> {
    await sql`vacuum transcript`.execute(this.db);
  }

  async sizeBytes(): Promise<number> {
    const result = await sql<{ size: string }>`select pg_database_size(current_database()) as size`.execute(
      this.db,
    );
    return Number(result.rows[0]?.size ?? 0);
  }

  /** See postgresIntegrity. */
  integrity(): Promise<IntegrityResult> {
    return postgresIntegrity(this.db);
  }

  async close(): Promise<void> {
    await this.notifications.closeAll();
    await this.db.destroy();
  }
}

/**
 * PostgreSQL checks its own pages (checksums, WAL replay); parley checks that the database answers
 * and that every table it needs is readable.
 */
export async function postgresIntegrity(db: ParleyDb): Promise<IntegrityResult> {
  const problems: string[] = [];
  for (const table of ["session", "intake", "delivery", "transcript", "cursor", "audit"]) {
    try {
      await sql`select 1 from ${sql.table(table)} limit 1`.execute(db);
    } catch (error) {
      problems.push(`${table}: ${(error as Error).message}`);
    }
  }
  return problems.length === 0 ? { ok: true } : { ok: false, problems };
}
