/**
 * Versioned migrations, run at every start through Kysely's Migrator (it records what ran in
 * `parley_migration`, runs the rest in order inside one transaction, and on PostgreSQL takes a lock
 * so two gateways starting together migrate once). A migration is never edited after release: a
 * change is a new entry. The schema version is the number of the newest migration applied.
 *
 * Portability rules (the same migrations run on PostgreSQL): text / integer / bigint columns, 0/1
 * for booleans, epoch ms for times, JSON as text, ON CONFLICT upserts, partial indexes. The one
 * dialect fork is the generated id (SQLite AUTOINCREMENT, PostgreSQL identity); both never reuse
 * an id, which matters: an intake id names a turn in the delivery ledger. Layer: store.
 */
import type { CreateTableBuilder, Kysely, Migration, MigrationProvider } from "kysely";
import { Migrator, sql } from "kysely";
import { StoreTooNewError } from "../../messaging/store/errors.js";

export type SqlDialectName = "sqlite" | "postgres";

export const MIGRATION_TABLE = "parley_migration";
export const MIGRATION_LOCK_TABLE = "parley_migration_lock";

// biome-ignore lint/suspicious/noExplicitAny: a migration sees the schema as it was then, not today's types.
type AnyDb = Kysely<any>;

function withId<T extends string>(
  table: CreateTableBuilder<T>,
  dialect: SqlDialectName,
): CreateTableBuilder<T> {
  return dialect === "sqlite"
    ? table.addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
    : table.addColumn("id", "bigint", (c) => c.primaryKey().generatedAlwaysAsIdentity());
}

async function initial(db: AnyDb, dialect: SqlDialectName): Promise<void> {
  await db.schema
    .createTable("session")
    .addColumn("session_key", "text", (c) => c.primaryKey())
    .addColumn("origin_channel", "text")
    .addColumn("origin_conversation", "text")
    .addColumn("origin_thread", "text")
    .addColumn("mirror_channel", "text")
    .addColumn("mirror_conversation", "text")
    .addColumn("mirror_thread", "text")
    .addColumn("mirror_opt_out", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("flags", "text", (c) => c.notNull().defaultTo("[]"))
    .addColumn("generation", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("title", "text")
    .addColumn("title_kind", "text")
    .addColumn("cwd", "text")
    .addColumn("muted_origin", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("muted_mirror", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("approval_policy", "text")
    .addColumn("last_active_ms", "bigint")
    .execute();

  await db.schema
    .createTable("agent_session")
    .addColumn("session_key", "text", (c) => c.primaryKey())
    .addColumn("agent", "text", (c) => c.notNull())
    .addColumn("agent_session_id", "text", (c) => c.notNull())
    .addColumn("updated_at_ms", "bigint", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("resume_expectation")
    .addColumn("channel", "text", (c) => c.notNull())
    .addColumn("conversation", "text", (c) => c.notNull())
    .addColumn("session_key", "text", (c) => c.notNull())
    .addColumn("title", "text", (c) => c.notNull())
    .addColumn("version", "integer", (c) => c.notNull())
    .addColumn("retired", "integer", (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint("resume_expectation_pk", ["channel", "conversation"])
    .execute();

  await withId(db.schema.createTable("intake"), dialect)
    .addColumn("channel", "text", (c) => c.notNull())
    // NULL = the platform gave no id; NULLs never collide in a unique constraint, so never deduped.
    .addColumn("platform_message_id", "text")
    .addColumn("conversation_key", "text", (c) => c.notNull())
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("payload_digest", "text", (c) => c.notNull())
    .addColumn("received_at_ms", "bigint", (c) => c.notNull())
    .addColumn("accepted_at_ms", "bigint", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("claimed_at_ms", "bigint")
    .addColumn("completed_at_ms", "bigint")
    .addColumn("outcome", "text")
    .addUniqueConstraint("intake_platform_id", ["channel", "platform_message_id"])
    .execute();
  // Resume at start reads only the unfinished few; pruning reads done rows by completion time.
  await db.schema
    .createIndex("intake_unfinished")
    .on("intake")
    .column("id")
    .where(sql.ref("state"), "<>", "done")
    .execute();
  await db.schema.createIndex("intake_completed").on("intake").column("completed_at_ms").execute();

  await db.schema
    .createTable("delivery")
    .addColumn("turn_id", "text", (c) => c.notNull())
    .addColumn("part_index", "integer", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("platform_message_id", "text")
    .addColumn("text_digest", "text", (c) => c.notNull())
    .addColumn("updated_at_ms", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("delivery_pk", ["turn_id", "part_index"])
    .execute();
  await db.schema.createIndex("delivery_updated").on("delivery").column("updated_at_ms").execute();

  await withId(db.schema.createTable("transcript"), dialect)
    .addColumn("session_key", "text", (c) => c.notNull())
    .addColumn("turn_id", "text")
    .addColumn("entry_key", "text")
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("at_ms", "bigint", (c) => c.notNull())
    .addColumn("text", "text", (c) => c.notNull())
    .addColumn("data", "text")
    .addUniqueConstraint("transcript_entry_key", ["session_key", "entry_key"])
    .execute();
  await db.schema.createIndex("transcript_session").on("transcript").columns(["session_key", "id"]).execute();
  await db.schema.createIndex("transcript_at").on("transcript").column("at_ms").execute();

  await db.schema
    .createTable("cursor")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("value", "bigint", (c) => c.notNull())
    .addColumn("updated_at_ms", "bigint", (c) => c.notNull())
    .execute();

  await withId(db.schema.createTable("audit"), dialect)
    .addColumn("ts", "text", (c) => c.notNull())
    .addColumn("operation", "text", (c) => c.notNull())
    .addColumn("outcome", "text", (c) => c.notNull())
    .addColumn("fields", "text", (c) => c.notNull())
    .execute();
}

/** Where a conversation is reached, per channel (Teams' serviceUrl): see RouteStore. */
async function channelRoutes(db: AnyDb): Promise<void> {
  await db.schema
    .createTable("channel_route")
    .addColumn("channel", "text", (c) => c.notNull())
    .addColumn("conversation", "text", (c) => c.notNull())
    .addColumn("address", "text", (c) => c.notNull())
    .addColumn("owner", "text", (c) => c.notNull())
    .addColumn("updated_at_ms", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("channel_route_pk", ["channel", "conversation"])
    .execute();
}

/**
 * Scheduled prompts (/every, /at, configured ones) and the channel server's inbox: what its agent
 * host was handed and sent, so a locator resolves to durable state after a restart.
 */
async function jobsAndInbox(db: AnyDb, dialect: SqlDialectName): Promise<void> {
  await db.schema
    .createTable("scheduled_job")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("channel", "text", (c) => c.notNull())
    .addColumn("conversation_key", "text", (c) => c.notNull())
    .addColumn("session_key", "text", (c) => c.notNull())
    .addColumn("user_id", "text", (c) => c.notNull())
    // JSON: { kind: "link", link } or { kind: "target", name }.
    .addColumn("deliver_to", "text", (c) => c.notNull())
    .addColumn("address", "text", (c) => c.notNull())
    .addColumn("prompt", "text", (c) => c.notNull())
    .addColumn("schedule_kind", "text", (c) => c.notNull())
    .addColumn("every_ms", "bigint")
    .addColumn("at_ms", "bigint")
    .addColumn("next_run_ms", "bigint", (c) => c.notNull())
    .addColumn("created_ms", "bigint", (c) => c.notNull())
    .addColumn("runs", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("running", "integer")
    .execute();

  await withId(db.schema.createTable("inbox"), dialect)
    .addColumn("conversation_key", "text", (c) => c.notNull())
    .addColumn("channel", "text", (c) => c.notNull())
    .addColumn("address", "text", (c) => c.notNull())
    .addColumn("direction", "text", (c) => c.notNull())
    .addColumn("user_id", "text", (c) => c.notNull())
    .addColumn("text", "text", (c) => c.notNull())
    .addColumn("attachments", "text", (c) => c.notNull())
    .addColumn("platform_message_id", "text")
    .addColumn("turn_id", "text")
    .addColumn("at_ms", "bigint", (c) => c.notNull())
    .addColumn("handled", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  // channel_read and fetch_messages read one conversation's newest entries; pruning reads by time.
  await db.schema.createIndex("inbox_conversation").on("inbox").columns(["conversation_key", "id"]).execute();
  await db.schema.createIndex("inbox_at").on("inbox").column("at_ms").execute();
}

/**
 * Several gateways on one database (docs/scale-out.md): who is alive (`gateway_member`, one row per
 * running gateway, its lease renewed by its heartbeat), who owns what (`ownership`: a conversation,
 * or a connection that must be single such as Telegram's getUpdates; valid while its holder's lease
 * is), and which gateway has an intake row in hand (`intake.handler`). Harmless on SQLite, where one
 * gateway never fills them.
 */
async function cluster(db: AnyDb): Promise<void> {
  await db.schema
    .createTable("gateway_member")
    .addColumn("gateway_id", "text", (c) => c.primaryKey())
    .addColumn("host", "text", (c) => c.notNull())
    .addColumn("pid", "integer", (c) => c.notNull())
    .addColumn("started_at_ms", "bigint", (c) => c.notNull())
    .addColumn("expires_at_ms", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("ownership")
    .addColumn("resource", "text", (c) => c.primaryKey())
    .addColumn("gateway_id", "text", (c) => c.notNull())
    // Raised at every change of holder: a fencing token, and what makes a takeover race-free.
    .addColumn("epoch", "integer", (c) => c.notNull())
    .addColumn("since_ms", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("ownership_gateway").on("ownership").column("gateway_id").execute();
  await db.schema.alterTable("intake").addColumn("handler", "text").execute();
}

/** Inbound frames dropped with a reason, counted per channel and reason (doctor reads them). */
async function inboundDrops(db: AnyDb): Promise<void> {
  await db.schema
    .createTable("inbound_drop")
    .addColumn("channel", "text", (c) => c.notNull())
    .addColumn("reason", "text", (c) => c.notNull())
    .addColumn("count", "bigint", (c) => c.notNull())
    .addColumn("last_at_ms", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("inbound_drop_pk", ["channel", "reason"])
    .execute();
}

/** Every migration this build knows, by name; the 4-digit prefix is the schema version it yields. */
function migrations(dialect: SqlDialectName): Record<string, Migration> {
  return {
    "0001_initial": { up: (db) => initial(db, dialect) },
    "0002_channel_routes": { up: (db) => channelRoutes(db) },
    "0003_jobs_inbox": { up: (db) => jobsAndInbox(db, dialect) },
    "0004_cluster": { up: (db) => cluster(db) },
    "0005_inbound_drops": { up: (db) => inboundDrops(db) },
  };
}

export const KNOWN_MIGRATIONS: readonly string[] = Object.keys(migrations("sqlite")).sort();

/** The version a set of applied migration names amounts to (0 for none). */
export function schemaVersionOf(applied: readonly string[]): number {
  let version = 0;
  for (const name of applied) version = Math.max(version, Number.parseInt(name.slice(0, 4), 10) || 0);
  return version;
}

/** The newest schema version this build can migrate to. */
export const LATEST_SCHEMA_VERSION = schemaVersionOf(KNOWN_MIGRATIONS);

/** Names of the migrations already applied; none when the bookkeeping table does not exist yet. */
export async function appliedMigrations(db: AnyDb): Promise<string[]> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  if (!tables.some((t) => t.name === MIGRATION_TABLE)) return [];
  const rows = await db.selectFrom(MIGRATION_TABLE).select("name").orderBy("name").execute();
  return rows.map((r) => String(r.name));
}

/**
 * Bring the schema to the latest version; resolves to that version. Refuses a database that a
 * newer parley migrated: this build would write rows that break the newer schema's assumptions.
 */
export async function migrateToLatest(db: AnyDb, dialect: SqlDialectName, location: string): Promise<number> {
  const unknown = (await appliedMigrations(db)).filter((name) => !KNOWN_MIGRATIONS.includes(name));
  if (unknown.length > 0) throw new StoreTooNewError(location, unknown);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations(dialect) } satisfies MigrationProvider,
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: MIGRATION_LOCK_TABLE,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === "Error")?.migrationName;
    throw new Error(`store migration ${failed ?? "(bookkeeping)"} failed on ${location}`, { cause: error });
  }
  return schemaVersionOf(await appliedMigrations(db));
}
