/**
 * The intake journal over the `intake` table. Dedupe is the unique (channel, platform_message_id)
 * constraint plus ON CONFLICT DO NOTHING: one statement, atomic on SQLite and PostgreSQL alike, so
 * two racing redeliveries can never both be accepted. Layer: store.
 */

import type { Selectable } from "kysely";
import { contentDigest } from "../../messaging/store/digest.js";
import { StoreCorruptError } from "../../messaging/store/errors.js";
import type {
  AcceptResult,
  ClaimResult,
  InboundMessage,
  IntakeJournal,
  IntakeOutcome,
  IntakeState,
  JsonValue,
  TranscriptAppend,
  UnfinishedIntake,
} from "../../messaging/store/port.js";
import type { ParleyDb } from "./engine.js";
import { toNumber } from "./engine.js";
import type { IntakeTable } from "./schema.js";
import { appendLine, checkAppend } from "./transcripts.js";

const OUTCOMES: ReadonlySet<string> = new Set<IntakeOutcome>(["answered", "refused", "failed", "stale"]);

function checkMessage(m: InboundMessage): void {
  // Each of these would make a row that resume cannot route or dedupe cannot match.
  if (m.channel === "") throw new RangeError("intake: channel must not be empty");
  if (m.platformMessageId === "") throw new RangeError("intake: a platform message id is null or non-empty");
  if (m.conversationKey === "") throw new RangeError("intake: conversation key must not be empty");
  if (!Number.isFinite(m.receivedAtMs))
    throw new RangeError(`intake: receivedAtMs must be finite: ${m.receivedAtMs}`);
}

function checkId(id: number): void {
  if (!Number.isSafeInteger(id) || id <= 0) throw new RangeError(`intake: invalid id ${id}`);
}

/** An unfinished row as the port gives it (a row whose payload does not parse is corruption). */
export function unfinishedOf(r: Selectable<IntakeTable>, nowMs: number, location: string): UnfinishedIntake {
  let payload: JsonValue;
  try {
    payload = JSON.parse(r.payload) as JsonValue;
  } catch (error) {
    throw new StoreCorruptError(
      location,
      `holds an unreadable payload in intake row ${r.id}`,
      "Run `parley doctor` for an integrity check; restore a backup if it fails.",
      { cause: error },
    );
  }
  const acceptedAtMs = toNumber(r.accepted_at_ms);
  return {
    id: toNumber(r.id),
    channel: r.channel,
    platformMessageId: r.platform_message_id,
    conversationKey: r.conversation_key,
    payload,
    receivedAtMs: toNumber(r.received_at_ms),
    acceptedAtMs,
    state: r.state as "accepted" | "claimed",
    attempts: toNumber(r.attempts),
    ageMs: Math.max(0, nowMs - acceptedAtMs),
  };
}

export class SqlIntakeJournal implements IntakeJournal {
  constructor(
    private readonly db: ParleyDb,
    private readonly now: () => number,
    private readonly location: string,
  ) {}

  async accept(m: InboundMessage): Promise<AcceptResult> {
    checkMessage(m);
    const payload = JSON.stringify(m.payload);
    const digest = contentDigest(payload);
    // Twice at most: on PostgreSQL the conflicting row can be pruned between the two statements.
    for (let round = 0; round < 2; round += 1) {
      const inserted = await this.db
        .insertInto("intake")
        .values({
          channel: m.channel,
          platform_message_id: m.platformMessageId,
          conversation_key: m.conversationKey,
          payload,
          payload_digest: digest,
          received_at_ms: m.receivedAtMs,
          accepted_at_ms: this.now(),
          state: "accepted",
          attempts: 0,
        })
        .onConflict((oc) => oc.columns(["channel", "platform_message_id"]).doNothing())
        .returning("id")
        .executeTakeFirst();
      if (inserted) return { kind: "accepted", id: toNumber(inserted.id) };
      const existing = await this.db
        .selectFrom("intake")
        .select(["id", "state", "payload_digest"])
        .where("channel", "=", m.channel)
        .where("platform_message_id", "=", m.platformMessageId)
        .executeTakeFirst();
      if (existing) {
        return {
          kind: "duplicate",
          id: toNumber(existing.id),
          state: existing.state as IntakeState,
          samePayload: existing.payload_digest === digest,
        };
      }
    }
    throw new Error(`intake: message ${m.channel}/${m.platformMessageId} neither inserted nor found`);
  }

  async claim(id: number): Promise<ClaimResult> {
    checkId(id);
    const claimed = await this.db
      .updateTable("intake")
      .set((eb) => ({ state: "claimed", attempts: eb("attempts", "+", 1), claimed_at_ms: this.now() }))
      .where("id", "=", id)
      .where("state", "<>", "done")
      .returning("attempts")
      .executeTakeFirst();
    if (claimed) return { kind: "claimed", attempt: toNumber(claimed.attempts) };
    const done = await this.db.selectFrom("intake").select("outcome").where("id", "=", id).executeTakeFirst();
    return done ? { kind: "finished", outcome: done.outcome as IntakeOutcome } : { kind: "unknown" };
  }

  async complete(id: number, outcome: IntakeOutcome): Promise<boolean> {
    checkId(id);
    if (!OUTCOMES.has(outcome)) throw new RangeError(`intake: unknown outcome ${outcome}`);
    const result = await this.db
      .updateTable("intake")
      // The words go with the work: only the digest stays (the dedupe window needs no more), so a
      // finished message lives on only where its transcript keeps it, and a temporary one nowhere.
      .set({ state: "done", outcome, completed_at_ms: this.now(), payload: "null" })
      .where("id", "=", id)
      .where("state", "<>", "done")
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async completeAnswered(ids: readonly number[], answer?: TranscriptAppend): Promise<number> {
    for (const id of ids) checkId(id);
    if (answer) checkAppend(answer);
    if (ids.length === 0 && !answer) return 0;
    return this.db.transaction().execute(async (trx) => {
      if (answer) await appendLine(trx, answer);
      if (ids.length === 0) return 0;
      const result = await trx
        .updateTable("intake")
        .set({ state: "done", outcome: "answered", completed_at_ms: this.now(), payload: "null" })
        .where("id", "in", [...ids])
        .where("state", "<>", "done")
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    });
  }

  async forget(id: number): Promise<boolean> {
    checkId(id);
    // Only a finished row: an unfinished one is still the message's only copy and its dedupe key.
    const result = await this.db
      .updateTable("intake")
      .set({ platform_message_id: null })
      .where("id", "=", id)
      .where("state", "=", "done")
      .where("platform_message_id", "is not", null)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async unfinished(): Promise<UnfinishedIntake[]> {
    const rows = await this.db
      .selectFrom("intake")
      .selectAll()
      .where("state", "<>", "done")
      .orderBy("id")
      .execute();
    const now = this.now();
    return rows.map((r) => unfinishedOf(r, now, this.location));
  }

  async countUnfinished(): Promise<number> {
    const row = await this.db
      .selectFrom("intake")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("state", "<>", "done")
      .executeTakeFirstOrThrow();
    return toNumber(row.n);
  }

  async prune(beforeMs: number): Promise<number> {
    if (!Number.isFinite(beforeMs)) throw new RangeError(`intake: prune cutoff must be finite: ${beforeMs}`);
    const result = await this.db
      .deleteFrom("intake")
      .where("state", "=", "done")
      .where("completed_at_ms", "<", beforeMs)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
