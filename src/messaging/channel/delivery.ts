/**
 * Idempotent delivery, once for every channel. Each message a turn creates is a numbered part of
 * that turn, recorded in the delivery ledger before the platform call ("sending") and after it
 * ("landed", with the platform's message id). A turn that answers a journaled message keeps its id
 * across a restart (`intake:<id>@<received>`), so when it runs again its part N finds what part N left the
 * first time: a landed part is edited in place (or left alone when it already says the same), and
 * only parts that never landed are posted. No duplicate messages.
 *
 * A renderer routes its one "create a message" primitive through `post`; its edits of a message it
 * already holds stay as they were (an edit is idempotent by nature: the message id is known).
 *
 * A part found "sending" is the one case no ledger can settle: the first run crashed between the
 * platform call and its answer, so the message may or may not exist. A platform with an
 * idempotency key for creation (Discord's enforce_nonce) settles it with the part's stable key;
 * elsewhere the part is posted again (the user must not lose an answer) and the ambiguity is
 * audited, so an operator can see how often a crash landed in that window.
 */
import type { Logger } from "../base/logger.js";
import type { AuditSink } from "../security/audit.js";
import { ephemeralTurnId } from "../session/history.js";
import { contentDigest } from "../store/digest.js";
import type { DeliveredPart, DeliveryLedger, PartKey } from "../store/port.js";

/** How one part reaches the platform. */
export interface PartDelivery {
  /**
   * Create the message; resolves its platform id, or null when it did not land. `key` names this
   * part stably across restarts (a platform that dedupes creation by a client key uses it); absent
   * for parts no ledger records, since nothing will ever create them a second time. With
   * `marksSending`, `create` awaits `sending()` right before its platform call leaves.
   */
  create(key: string | undefined, sending: () => Promise<void>): Promise<string | null>;
  /**
   * `create` calls `sending()` itself, after any local queue (Telegram's per-chat pacing): a crash
   * while the call still waits there leaves nothing unknown, so only the call itself is the window
   * in which a part's fate cannot be told. Otherwise the part is marked sending before `create`.
   */
  marksSending?: boolean;
  /** Put this part on the message an earlier run of the turn landed; false when it cannot take it. */
  replace(platformMessageId: string): Promise<boolean>;
}

export interface TurnPartsOptions {
  channel: string;
  logger: Logger;
  audit: AuditSink;
}

export class TurnParts {
  private next = 0;

  private constructor(
    /** The turn these parts belong to (stable across a restart when it answers a journaled message). */
    readonly turnId: string,
    private readonly ledger: DeliveryLedger | undefined,
    /** What an earlier run of this turn recorded, by part index. */
    private readonly earlier: ReadonlyMap<number, DeliveredPart>,
    private readonly o: TurnPartsOptions | undefined,
  ) {}

  /** Parts no ledger records: a turn no journal row stands behind (nothing would resume it). */
  static unrecorded(turnId: string = ephemeralTurnId()): TurnParts {
    return new TurnParts(turnId, undefined, new Map(), undefined);
  }

  /** The parts of `turnId`, with whatever an earlier run of it left in the ledger. */
  static async open(ledger: DeliveryLedger, turnId: string, o: TurnPartsOptions): Promise<TurnParts> {
    let earlier: DeliveredPart[] = [];
    try {
      earlier = await ledger.parts(turnId);
    } catch (error) {
      // Unreadable history of this turn: post as if fresh (a possible duplicate beats a lost answer).
      o.logger.error(`${o.channel}: reading the delivery ledger failed`, {
        turn: turnId,
        error: String(error),
      });
    }
    return new TurnParts(turnId, ledger, new Map(earlier.map((p) => [p.partIndex, p])), o);
  }

  /** True when an earlier run of this turn delivered something: this run is a resumption. */
  get resumed(): boolean {
    return this.earlier.size > 0;
  }

  /**
   * The next part's stable key, for a surface that names its own messages (the web chat's bubble
   * ids): the same part of the same turn gets the same key after a restart, so it replaces itself.
   */
  nextKey(): string {
    return this.keyOf(this.next++);
  }

  /** Deliver the next part: `content` is what it carries (its digest says whether it changed). */
  async post(content: string, delivery: PartDelivery): Promise<string | null> {
    const index = this.next++;
    const part: PartKey = { turnId: this.turnId, partIndex: index };
    const digest = contentDigest(content);
    const before = this.earlier.get(index);
    if (before?.state === "landed" && before.platformMessageId) {
      // Already on screen, saying the same: nothing to do (an edit to identical text is an error on
      // some platforms, and a wasted call on all).
      if (before.textDigest === digest) return before.platformMessageId;
      if (await this.tryReplace(delivery, before.platformMessageId)) {
        await this.write(() => this.ledger?.markLanded(part, before.platformMessageId as string, digest));
        return before.platformMessageId;
      }
      // Deleted, or a kind of message that cannot take this content: posted anew below.
    }
    let marked = false;
    const sending = async () => {
      if (marked) return;
      marked = true;
      // Audited as the second creation actually leaves: a run cut short while it still waited its
      // turn (a platform's pacing) created nothing, and is no ambiguity of its own.
      if (before?.state === "sending")
        this.o?.audit.log("delivery", "sent", {
          channel: this.o.channel,
          reason: "ambiguous_resend",
          turn: this.turnId,
          part: index,
        });
      await this.write(() => this.ledger?.markSending(part, digest));
    };
    if (!delivery.marksSending) await sending();
    const id = await delivery.create(this.ledger ? this.keyOf(index) : undefined, sending);
    if (id) await this.write(() => this.ledger?.markLanded(part, id, digest));
    return id;
  }

  private keyOf(index: number): string {
    return `${this.turnId}#${index}`;
  }

  private async tryReplace(delivery: PartDelivery, id: string): Promise<boolean> {
    try {
      return await delivery.replace(id);
    } catch (error) {
      this.o?.logger.warn(`${this.o.channel}: editing an earlier part failed; posting it anew`, {
        error: String(error),
      });
      return false;
    }
  }

  /** A ledger write that fails costs idempotency for this part, never the delivery itself. */
  private async write(op: () => Promise<void> | undefined): Promise<void> {
    try {
      await op();
    } catch (error) {
      this.o?.logger.error(`${this.o.channel}: recording a delivery failed`, {
        turn: this.turnId,
        error: String(error),
      });
    }
  }
}
