/**
 * Membership and ownership rows for several gateways on one database (docs/scale-out.md). A gateway
 * is alive while its `gateway_member` lease is unexpired (its heartbeat renews it); an `ownership`
 * row (a conversation, or a connection that must be single) is valid while its holder is alive, so
 * one heartbeat keeps every resource a gateway holds, however many. A takeover is a conditional
 * update on the row's epoch: of two gateways racing for a dead holder's resource, exactly one wins.
 * Times are the caller's (injectable) epoch ms: hosts keep their clocks in sync (NTP) far tighter
 * than a lease. Layer: store.
 */
import { sql } from "kysely";
import type { AdoptedIntake } from "../../messaging/store/ownership.js";
import type { ParleyDb } from "./engine.js";
import { toNumber } from "./engine.js";
import { unfinishedOf } from "./intake.js";
import type { SqlDialectName } from "./migrations.js";

export interface MemberInfo {
  gatewayId: string;
  host: string;
  pid: number;
}

export interface Held {
  resource: string;
  gatewayId: string;
  epoch: number;
}

/** At most this many rows are taken in hand per pick-up (the rest at the next tick). */
const PICK_UP_BATCH = 100;

export class SqlClusterRegistry {
  constructor(
    private readonly db: ParleyDb,
    private readonly dialect: SqlDialectName,
    private readonly location: string,
  ) {}

  async join(member: MemberInfo, nowMs: number, leaseMs: number): Promise<void> {
    await this.db
      .insertInto("gateway_member")
      .values({
        gateway_id: member.gatewayId,
        host: member.host,
        pid: member.pid,
        started_at_ms: nowMs,
        expires_at_ms: nowMs + leaseMs,
      })
      .execute();
  }

  /** Extend the lease; false when it had already run out (others may hold what was ours). */
  async renew(gatewayId: string, nowMs: number, leaseMs: number): Promise<boolean> {
    const result = await this.db
      .updateTable("gateway_member")
      .set({ expires_at_ms: nowMs + leaseMs })
      .where("gateway_id", "=", gatewayId)
      .where("expires_at_ms", ">", nowMs)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /**
   * A graceful stop: everything held is released at once (no wait for the lease to run out). The
   * ownership rows stay, pointing at a member that is gone, so the next holder takes each over
   * (epoch + 1) and knows to read what its last holder wrote.
   */
  async leave(gatewayId: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable("intake").set({ handler: null }).where("handler", "=", gatewayId).execute();
      await trx.deleteFrom("gateway_member").where("gateway_id", "=", gatewayId).execute();
    });
  }

  async liveMembers(nowMs: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom("gateway_member")
      .select("gateway_id")
      .where("expires_at_ms", ">", nowMs)
      .orderBy("gateway_id")
      .execute();
    return rows.map((r) => r.gateway_id);
  }

  /**
   * Hold `resource` for `gatewayId`: the epoch it is held at, or undefined while another live
   * gateway holds it. A resource whose holder is gone is taken over (epoch + 1).
   */
  async acquire(resource: string, gatewayId: string, nowMs: number): Promise<number | undefined> {
    const inserted = await this.insertFirst(resource, gatewayId, nowMs);
    if (inserted !== undefined) return inserted;
    const current = await this.holder(resource, nowMs);
    // The row vanished between the two statements: one more insert, no loop.
    if (!current) return this.insertFirst(resource, gatewayId, nowMs);
    if (current.gatewayId === gatewayId) return current.epoch;
    if (current.alive) return undefined;
    const taken = await this.db
      .updateTable("ownership")
      .set({ gateway_id: gatewayId, epoch: current.epoch + 1, since_ms: nowMs })
      .where("resource", "=", resource)
      .where("gateway_id", "=", current.gatewayId)
      .where("epoch", "=", current.epoch)
      .returning("epoch")
      .executeTakeFirst();
    return taken ? toNumber(taken.epoch) : undefined;
  }

  /** The first holder of a resource nobody held: epoch 1; undefined when a row exists. */
  private async insertFirst(resource: string, gatewayId: string, nowMs: number): Promise<number | undefined> {
    const inserted = await this.db
      .insertInto("ownership")
      .values({ resource, gateway_id: gatewayId, epoch: 1, since_ms: nowMs })
      .onConflict((oc) => oc.column("resource").doNothing())
      .returning("epoch")
      .executeTakeFirst();
    return inserted ? toNumber(inserted.epoch) : undefined;
  }

  async holder(resource: string, nowMs: number): Promise<(Held & { alive: boolean }) | undefined> {
    const row = await this.db
      .selectFrom("ownership as o")
      .leftJoin("gateway_member as m", "m.gateway_id", "o.gateway_id")
      .select(["o.resource", "o.gateway_id", "o.epoch", "m.expires_at_ms"])
      .where("o.resource", "=", resource)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      resource: row.resource,
      gatewayId: row.gateway_id,
      epoch: toNumber(row.epoch),
      alive: row.expires_at_ms !== null && toNumber(row.expires_at_ms) > nowMs,
    };
  }

  /** Take one just-journaled row in hand; false when someone already has it. */
  async takeInHand(intakeId: number, gatewayId: string): Promise<boolean> {
    const result = await this.db
      .updateTable("intake")
      .set({ handler: gatewayId })
      .where("id", "=", intakeId)
      .where("handler", "is", null)
      .where("state", "<>", "done")
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Conversations of this channel with unfinished rows and no live owner. */
  async orphanedConversations(channel: string, nowMs: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom("intake as i")
      .leftJoin("ownership as o", (j) =>
        j.on("o.resource", "=", sql<string>`${"conversation:"} || i.conversation_key`),
      )
      .leftJoin("gateway_member as m", "m.gateway_id", "o.gateway_id")
      .select("i.conversation_key")
      .distinct()
      .where("i.state", "<>", "done")
      .where("i.channel", "=", channel)
      .where((eb) =>
        eb.or([
          eb("o.resource", "is", null),
          eb("m.gateway_id", "is", null),
          eb("m.expires_at_ms", "<=", nowMs),
        ]),
      )
      .execute();
    return rows.map((r) => r.conversation_key);
  }

  /**
   * Take in hand the channel's unfinished rows of conversations `gatewayId` owns that no live
   * gateway has in hand, oldest first. On PostgreSQL the candidate rows are locked with SKIP LOCKED:
   * two pick-ups never wait on or take the same row.
   */
  async pickUp(channel: string, gatewayId: string, nowMs: number): Promise<AdoptedIntake[]> {
    return this.db.transaction().execute(async (trx) => {
      let candidates = trx
        .selectFrom("intake as i")
        .innerJoin("ownership as o", (j) =>
          j
            .on("o.resource", "=", sql<string>`${"conversation:"} || i.conversation_key`)
            .on("o.gateway_id", "=", gatewayId),
        )
        .leftJoin("gateway_member as m", "m.gateway_id", "i.handler")
        .select(["i.id", "i.handler"])
        .where("i.state", "<>", "done")
        .where("i.channel", "=", channel)
        .where((eb) =>
          eb.or([
            eb("i.handler", "is", null),
            eb.and([
              eb("i.handler", "<>", gatewayId),
              eb.or([eb("m.gateway_id", "is", null), eb("m.expires_at_ms", "<=", nowMs)]),
            ]),
          ]),
        )
        .orderBy("i.id")
        .limit(PICK_UP_BATCH);
      // SQLite has one writer at a time and no row locks: the transaction alone serializes it.
      if (this.dialect === "postgres") candidates = candidates.forUpdate("i").skipLocked();
      const picked = await candidates.execute();
      if (picked.length === 0) return [];
      const ids = picked.map((r) => toNumber(r.id));
      const rows = await trx
        .updateTable("intake")
        .set({ handler: gatewayId })
        .where("id", "in", ids)
        .returningAll()
        .execute();
      const resumedIds = new Set(picked.filter((r) => r.handler !== null).map((r) => toNumber(r.id)));
      return rows
        .map((r) => {
          const base = unfinishedOf(r, nowMs, this.location);
          // Started somewhere (a claim) or held by a gateway that is gone: resumed, not fresh.
          return { ...base, resumed: resumedIds.has(base.id) || base.attempts > 0 };
        })
        .sort((a, b) => a.id - b.id);
    });
  }
}
