/**
 * ParleyStore over any SqlEngine: the repositories wired to one database. Dialect-neutral, so the
 * PostgreSQL adapter reuses all of it and supplies only its engine. Layer: store.
 */
import type { Timers } from "../../messaging/base/clock.js";
import type { Logger } from "../../messaging/base/logger.js";
import type { ParleyStore, StoreHealth } from "../../messaging/store/port.js";
import { SqlClusterRegistry } from "./cluster.js";
import { SqlDeliveryLedger } from "./deliveries.js";
import type { ClusterSignals, SqlEngine } from "./engine.js";
import { SqlIntakeJournal } from "./intake.js";
import { SqlInboxStore, SqlJobStore } from "./jobs-inbox.js";
import { appliedMigrations, schemaVersionOf } from "./migrations.js";
import { SqlResumeRecordStore } from "./resume-records.js";
import { SqlSessionStore } from "./session-store.js";
import {
  SqlAgentSessionStore,
  SqlAuditStore,
  SqlCursorStore,
  SqlInboundDropStore,
  SqlRouteStore,
} from "./small-stores.js";
import { SqlTranscriptStore } from "./transcripts.js";

export interface SqlStoreOptions {
  logger?: Logger;
  /** Epoch ms; the journal, ledger and cursors stamp their rows with it. */
  now?: () => number;
  /** For the session store's write coalescing. */
  timers?: Timers;
  sessionDebounceMs?: number;
  /** Channels whose legacy resume file could not be imported (they stay unreadable until it is). */
  legacyResumeProblems?: ReadonlyMap<string, string>;
  /** The operator's repair procedure for this engine, quoted by corruption errors. */
  repair: string;
}

export class SqlParleyStore implements ParleyStore {
  readonly sessions: SqlSessionStore;
  readonly agentSessions: SqlAgentSessionStore;
  readonly intake: SqlIntakeJournal;
  readonly deliveries: SqlDeliveryLedger;
  readonly transcripts: SqlTranscriptStore;
  readonly resume: SqlResumeRecordStore;
  readonly cursors: SqlCursorStore;
  readonly routes: SqlRouteStore;
  readonly audit: SqlAuditStore;
  readonly inboundDrops: SqlInboundDropStore;
  readonly jobs: SqlJobStore;
  readonly inbox: SqlInboxStore;
  /** Membership and ownership for several gateways on one database (docs/scale-out.md). */
  readonly cluster: SqlClusterRegistry;
  private closed = false;

  private constructor(
    private readonly engine: SqlEngine,
    options: SqlStoreOptions,
  ) {
    const now = options.now ?? Date.now;
    const db = engine.db;
    this.sessions = new SqlSessionStore(db, {
      location: engine.location,
      repair: options.repair,
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.timers ? { timers: options.timers } : {}),
      ...(options.sessionDebounceMs !== undefined ? { debounceMs: options.sessionDebounceMs } : {}),
    });
    this.agentSessions = new SqlAgentSessionStore(db, now);
    this.intake = new SqlIntakeJournal(db, now, engine.location);
    this.deliveries = new SqlDeliveryLedger(db, now);
    this.transcripts = new SqlTranscriptStore(engine);
    this.resume = new SqlResumeRecordStore(db, {
      location: engine.location,
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.legacyResumeProblems ? { legacyProblems: options.legacyResumeProblems } : {}),
    });
    this.cursors = new SqlCursorStore(engine, now);
    this.routes = new SqlRouteStore(db, now);
    this.audit = new SqlAuditStore(db);
    this.inboundDrops = new SqlInboundDropStore(db);
    this.jobs = new SqlJobStore(db);
    this.inbox = new SqlInboxStore(db);
    this.cluster = new SqlClusterRegistry(db, engine.dialect, engine.location);
  }

  /** Notifications between the gateways sharing it (PostgreSQL only). */
  get signals(): ClusterSignals | undefined {
    return this.engine.signals;
  }

  /** Several gateways can share it only on PostgreSQL (SQLite is one file of one gateway). */
  get shareable(): boolean {
    return this.engine.dialect === "postgres";
  }

  /** Build the repositories and load the session rows (the one part read synchronously later). */
  static async open(engine: SqlEngine, options: SqlStoreOptions): Promise<SqlParleyStore> {
    const store = new SqlParleyStore(engine, options);
    await store.sessions.open();
    return store;
  }

  async health(): Promise<StoreHealth> {
    return {
      location: this.engine.location,
      schemaVersion: schemaVersionOf(await appliedMigrations(this.engine.db)),
      sizeBytes: await this.engine.sizeBytes(),
      integrity: await this.engine.integrity(),
      unfinishedIntake: await this.intake.countUnfinished(),
    };
  }

  /** Idempotent. The session store is flushed even if releasing the database then fails. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.sessions.close();
    } finally {
      await this.engine.close();
    }
  }
}
