/**
 * The small repositories: agent session ids per session, advance-only cursors, channel routes,
 * audit rows. Layer: store.
 */

import type { AuditOutcome, AuditRecord } from "../../messaging/security/audit.js";
import type {
  AgentSessionRef,
  AgentSessionStore,
  AuditStore,
  ChannelRoute,
  CursorStore,
  InboundDropStore,
  InboundDropTotal,
  JsonValue,
  RouteStore,
} from "../../messaging/store/port.js";
import type { ParleyDb, SqlEngine } from "./engine.js";
import { toNumber } from "./engine.js";

export class SqlAgentSessionStore implements AgentSessionStore {
  constructor(
    private readonly db: ParleyDb,
    private readonly now: () => number,
  ) {}

  async get(sessionKey: string): Promise<AgentSessionRef | undefined> {
    const row = await this.db
      .selectFrom("agent_session")
      .select(["agent", "agent_session_id"])
      .where("session_key", "=", sessionKey)
      .executeTakeFirst();
    return row ? { agent: row.agent, agentSessionId: row.agent_session_id } : undefined;
  }

  async set(sessionKey: string, ref: AgentSessionRef): Promise<void> {
    if (ref.agent === "" || ref.agentSessionId === "")
      throw new RangeError("agent session: empty agent or id");
    const values = { agent: ref.agent, agent_session_id: ref.agentSessionId, updated_at_ms: this.now() };
    await this.db
      .insertInto("agent_session")
      .values({ session_key: sessionKey, ...values })
      .onConflict((oc) => oc.column("session_key").doUpdateSet(values))
      .execute();
  }

  async clear(sessionKey: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom("agent_session")
      .where("session_key", "=", sessionKey)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}

export class SqlCursorStore implements CursorStore {
  constructor(
    private readonly engine: SqlEngine,
    private readonly now: () => number,
  ) {}

  async get(name: string): Promise<number | undefined> {
    const row = await this.engine.db
      .selectFrom("cursor")
      .select("value")
      .where("name", "=", name)
      .executeTakeFirst();
    return row ? toNumber(row.value) : undefined;
  }

  async advance(name: string, value: number): Promise<number> {
    if (name === "") throw new RangeError("cursor: name must not be empty");
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`cursor: invalid value ${value}`);
    const at = this.now();
    return this.engine.durably(async (db) => {
      // Advance-only in the statement itself: two writers finishing out of order never regress it.
      await db
        .insertInto("cursor")
        .values({ name, value, updated_at_ms: at })
        .onConflict((oc) =>
          oc.column("name").doUpdateSet({ value, updated_at_ms: at }).where("cursor.value", "<", value),
        )
        .execute();
      const row = await db
        .selectFrom("cursor")
        .select("value")
        .where("name", "=", name)
        .executeTakeFirstOrThrow();
      return toNumber(row.value);
    });
  }
}

export class SqlRouteStore implements RouteStore {
  constructor(
    private readonly db: ParleyDb,
    private readonly now: () => number,
  ) {}

  async put(route: Omit<ChannelRoute, "updatedAtMs">): Promise<void> {
    if (route.channel === "" || route.conversation === "")
      throw new RangeError("route: empty channel or conversation");
    const values = { address: JSON.stringify(route.address), owner: route.owner, updated_at_ms: this.now() };
    await this.db
      .insertInto("channel_route")
      .values({ channel: route.channel, conversation: route.conversation, ...values })
      .onConflict((oc) => oc.columns(["channel", "conversation"]).doUpdateSet(values))
      .execute();
  }

  async get(channel: string, conversation: string): Promise<ChannelRoute | undefined> {
    const row = await this.db
      .selectFrom("channel_route")
      .selectAll()
      .where("channel", "=", channel)
      .where("conversation", "=", conversation)
      .executeTakeFirst();
    return row ? routeOf(row) : undefined;
  }

  async list(channel: string): Promise<ChannelRoute[]> {
    const rows = await this.db
      .selectFrom("channel_route")
      .selectAll()
      .where("channel", "=", channel)
      .orderBy("updated_at_ms", "desc")
      // Ties in a stable order on every engine (PostgreSQL promises none without it).
      .orderBy("conversation")
      .execute();
    return rows.map(routeOf);
  }

  async forget(channel: string, conversation: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom("channel_route")
      .where("channel", "=", channel)
      .where("conversation", "=", conversation)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}

function routeOf(row: {
  channel: string;
  conversation: string;
  address: string;
  owner: string;
  updated_at_ms: number | bigint | string;
}): ChannelRoute {
  return {
    channel: row.channel,
    conversation: row.conversation,
    address: JSON.parse(row.address) as JsonValue,
    owner: row.owner,
    updatedAtMs: toNumber(row.updated_at_ms),
  };
}

/** Rows per INSERT: far below every engine's bound-parameter limit (4 per row). */
const AUDIT_CHUNK = 200;

export class SqlAuditStore implements AuditStore {
  constructor(private readonly db: ParleyDb) {}

  async append(records: readonly AuditRecord[]): Promise<void> {
    if (records.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (let i = 0; i < records.length; i += AUDIT_CHUNK) {
        const chunk = records.slice(i, i + AUDIT_CHUNK).map((r) => ({
          ts: r.ts,
          operation: r.operation,
          outcome: r.outcome,
          fields: JSON.stringify(r.fields),
        }));
        await trx.insertInto("audit").values(chunk).execute();
      }
    });
  }

  async recent(n: number): Promise<AuditRecord[]> {
    if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`audit: n must be a positive integer: ${n}`);
    const rows = await this.db.selectFrom("audit").selectAll().orderBy("id", "desc").limit(n).execute();
    return rows.reverse().map((r) => ({
      ts: r.ts,
      operation: r.operation,
      outcome: r.outcome as AuditOutcome,
      fields: JSON.parse(r.fields) as AuditRecord["fields"],
    }));
  }
}

/** The schema version that brought the inbound_drop table (doctor reads older stores too). */
export const INBOUND_DROPS_SCHEMA = 5;

export class SqlInboundDropStore implements InboundDropStore {
  constructor(private readonly db: ParleyDb) {}

  async add(batch: readonly InboundDropTotal[]): Promise<void> {
    if (batch.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const row of batch)
        await trx
          .insertInto("inbound_drop")
          .values({ channel: row.channel, reason: row.reason, count: row.count, last_at_ms: row.lastAtMs })
          .onConflict((oc) =>
            oc.columns(["channel", "reason"]).doUpdateSet((eb) => ({
              count: eb("inbound_drop.count", "+", eb.ref("excluded.count")),
              last_at_ms: row.lastAtMs,
            })),
          )
          .execute();
    });
  }

  async totals(): Promise<InboundDropTotal[]> {
    const rows = await this.db
      .selectFrom("inbound_drop")
      .selectAll()
      .orderBy("channel")
      .orderBy("reason")
      .execute();
    return rows.map((r) => ({
      channel: r.channel,
      reason: r.reason,
      count: toNumber(r.count),
      lastAtMs: toNumber(r.last_at_ms),
    }));
  }
}
