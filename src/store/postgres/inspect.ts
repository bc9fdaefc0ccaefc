/**
 * A read-only look at a shared PostgreSQL store for `parley doctor`, safe while gateways run:
 * nothing is migrated, and a server that does not answer is reported, not retried. Besides what the
 * SQLite inspection says (schema, size, integrity, unanswered messages), it lists the gateways of
 * the cluster and who holds each single connection (docs/scale-out.md). Layer: store.
 */
import { Kysely, PostgresDialect, sql } from "kysely";
import type { IntegrityResult } from "../../messaging/store/port.js";
import { oneLine } from "../../messaging/text/clip.js";
import { toNumber } from "../sql/engine.js";
import { appliedMigrations, LATEST_SCHEMA_VERSION, schemaVersionOf } from "../sql/migrations.js";
import type { ParleyDatabase } from "../sql/schema.js";
import { INBOUND_DROPS_SCHEMA, SqlInboundDropStore } from "../sql/small-stores.js";
import type { StoreInspection } from "../sqlite/inspect.js";
import { loadPool, postgresIntegrity, postgresRepairHint, redactDatabaseUrl } from "./engine.js";

/** A doctor waits this long for the server, then says it did not answer. */
const CONNECT_TIMEOUT_MS = 5_000;

export interface ClusterMemberView {
  gatewayId: string;
  /** Lease left (ms); zero or less: the gateway is gone and its work is being taken over. */
  leaseLeftMs: number;
  conversations: number;
}

export interface ClusterView {
  members: ClusterMemberView[];
  /** Single connections and the scheduler: who holds each, and whether that holder is alive. */
  held: { resource: string; gatewayId: string; alive: boolean }[];
}

export type PostgresInspection = StoreInspection & { cluster?: ClusterView };

export async function inspectPostgresStore(url: string, nowMs: number): Promise<PostgresInspection> {
  const location = redactDatabaseUrl(url);
  const Pool = await loadPool();
  const pool = new Pool({ connectionString: url, max: 1, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // An idle connection the server drops must not crash the doctor.
  pool.on("error", () => {});
  const db = new Kysely<ParleyDatabase>({ dialect: new PostgresDialect({ pool }) });
  try {
    let schemaVersion: number;
    try {
      schemaVersion = schemaVersionOf(await appliedMigrations(db));
    } catch (error) {
      return { state: "unreachable", location, problem: driverProblem(error, url) };
    }
    if (schemaVersion === 0) return { state: "absent", location };
    const sizeBytes = Number(
      (await sql<{ size: string }>`select pg_database_size(current_database()) as size`.execute(db)).rows[0]
        ?.size ?? 0,
    );
    const integrity: IntegrityResult = await postgresIntegrity(db);
    const unfinished = await db
      .selectFrom("intake")
      .select((eb) => [eb.fn.countAll<string>().as("n"), eb.fn.min("accepted_at_ms").as("oldest")])
      .where("state", "<>", "done")
      .executeTakeFirstOrThrow();
    return {
      state: "present",
      location,
      sizeBytes,
      schemaVersion,
      latestSchemaVersion: LATEST_SCHEMA_VERSION,
      integrity,
      repair: postgresRepairHint(location),
      unfinishedIntake: Number(unfinished.n),
      oldestUnfinishedAtMs: unfinished.oldest === null ? null : toNumber(unfinished.oldest),
      inboundDrops: schemaVersion >= INBOUND_DROPS_SCHEMA ? await new SqlInboundDropStore(db).totals() : [],
      ...(schemaVersion >= 4 ? { cluster: await clusterView(db, nowMs) } : {}),
    };
  } finally {
    await db.destroy();
  }
}

async function clusterView(db: Kysely<ParleyDatabase>, nowMs: number): Promise<ClusterView> {
  const members = await db.selectFrom("gateway_member").select(["gateway_id", "expires_at_ms"]).execute();
  const owned = await db.selectFrom("ownership").select(["resource", "gateway_id"]).execute();
  const expiry = new Map(members.map((m) => [m.gateway_id, toNumber(m.expires_at_ms)]));
  const alive = (id: string) => (expiry.get(id) ?? 0) > nowMs;
  return {
    members: members
      .map((m) => ({
        gatewayId: m.gateway_id,
        leaseLeftMs: toNumber(m.expires_at_ms) - nowMs,
        conversations: owned.filter(
          (o) => o.gateway_id === m.gateway_id && o.resource.startsWith("conversation:"),
        ).length,
      }))
      .sort((a, b) => a.gatewayId.localeCompare(b.gatewayId)),
    held: owned
      .filter((o) => !o.resource.startsWith("conversation:"))
      .map((o) => ({ resource: o.resource, gatewayId: o.gateway_id, alive: alive(o.gateway_id) }))
      .sort((a, b) => a.resource.localeCompare(b.resource)),
  };
}

/** The driver's message on one line, never the URL's password. */
function driverProblem(error: unknown, url: string): string {
  const text = error instanceof Error ? error.message : String(error);
  let password = "";
  try {
    password = decodeURIComponent(new URL(url).password);
  } catch {
    // Not a URL: nothing to take out beyond what redactDatabaseUrl already hides.
  }
  const safe = password ? text.split(password).join("***") : text;
  return oneLine(safe, 300) || "no answer";
}
