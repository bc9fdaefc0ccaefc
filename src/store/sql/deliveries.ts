/**
 * The delivery ledger over the `delivery` table: per (turn, part index) what was about to be sent
 * and what landed, so a turn resumed after a crash edits the last landed part and posts only what is
 * missing. Layer: store.
 */
import type { DeliveredPart, DeliveryLedger, PartKey } from "../../messaging/store/port.js";
import type { ParleyDb } from "./engine.js";
import { toNumber } from "./engine.js";

function checkPart(part: PartKey): void {
  if (part.turnId === "") throw new RangeError("delivery: turn id must not be empty");
  if (!Number.isSafeInteger(part.partIndex) || part.partIndex < 0) {
    throw new RangeError(`delivery: part index must be a non-negative integer: ${part.partIndex}`);
  }
}

export class SqlDeliveryLedger implements DeliveryLedger {
  constructor(
    private readonly db: ParleyDb,
    private readonly now: () => number,
  ) {}

  async markSending(part: PartKey, textDigest: string): Promise<void> {
    checkPart(part);
    const at = this.now();
    // An edit of a landed part keeps its platform id: after a crash the part is known to exist and
    // only its text is uncertain, so the resumed turn edits it again instead of posting a twin.
    await this.db
      .insertInto("delivery")
      .values({
        turn_id: part.turnId,
        part_index: part.partIndex,
        state: "sending",
        platform_message_id: null,
        text_digest: textDigest,
        updated_at_ms: at,
      })
      .onConflict((oc) =>
        oc
          .columns(["turn_id", "part_index"])
          .doUpdateSet({ state: "sending", text_digest: textDigest, updated_at_ms: at }),
      )
      .execute();
  }

  async markLanded(part: PartKey, platformMessageId: string, textDigest: string): Promise<void> {
    checkPart(part);
    if (platformMessageId === "")
      throw new RangeError("delivery: a landed part needs its platform message id");
    const at = this.now();
    const values = {
      state: "landed",
      platform_message_id: platformMessageId,
      text_digest: textDigest,
      updated_at_ms: at,
    };
    await this.db
      .insertInto("delivery")
      .values({ turn_id: part.turnId, part_index: part.partIndex, ...values })
      .onConflict((oc) => oc.columns(["turn_id", "part_index"]).doUpdateSet(values))
      .execute();
  }

  async parts(turnId: string): Promise<DeliveredPart[]> {
    const rows = await this.db
      .selectFrom("delivery")
      .selectAll()
      .where("turn_id", "=", turnId)
      .orderBy("part_index")
      .execute();
    return rows.map((r) => ({
      turnId: r.turn_id,
      partIndex: toNumber(r.part_index),
      state: r.state as DeliveredPart["state"],
      platformMessageId: r.platform_message_id,
      textDigest: r.text_digest,
      updatedAtMs: toNumber(r.updated_at_ms),
    }));
  }

  async prune(beforeMs: number): Promise<number> {
    if (!Number.isFinite(beforeMs))
      throw new RangeError(`delivery: prune cutoff must be finite: ${beforeMs}`);
    const result = await this.db
      .deleteFrom("delivery")
      .where("state", "=", "landed")
      .where("updated_at_ms", "<", beforeMs)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
