/**
 * The own-message ledger: what this process sent, so an echo of it that the watch reports WITHOUT
 * `is_from_me` (a self-chat, where the allow-listed handle is the account parley sends as and the
 * attribution lands asynchronously) is not taken for the user's words and answered, without end.
 *
 * One record per sent message, holding the body it went out with and the guid imsg reported (when
 * it did); a match on either consumes the record whole, so one echo spends one record. A record's
 * TTL starts when its send resolved, never when it was issued, and an unresolved record is never
 * pruned or evicted: the echo of a slow send arrives before its result. A failed send leaves none.
 * The transport consults it LAST (after the is_from_me drop and the group and allow-list gates;
 * see transport.ts): consuming is a side effect no row that is dropped anyway may spend.
 */
import type { Clock } from "../messaging/base/clock.js";

/** How long after its send resolved an unattributed echo is still recognised. */
export const OWN_ECHO_TTL_MS = 60_000;
/** Resolved records kept at most (the oldest resolved go first; unresolved ones are never evicted). */
const MAX_RESOLVED = 512;

interface SentRecord {
  readonly body: string;
  guid?: string;
  /** When the send resolved; undefined while it is still in flight. */
  resolvedAt?: number;
}

export interface Sending {
  /** The send landed (with the guid imsg reported, if any): the TTL starts now. */
  landed(guid?: string): void;
  /** The send failed: nothing went out, so nothing can echo. */
  failed(): void;
}

/** The body as compared: Messages may trim the ends and normalize line breaks. */
const comparable = (text: string) => text.replace(/\r\n?/g, "\n").trim();

export class OwnMessageLedger {
  private records: SentRecord[] = [];

  constructor(
    private readonly clock: Pick<Clock, "now">,
    private readonly ttlMs = OWN_ECHO_TTL_MS,
  ) {}

  /** Recorded as the send leaves (its echo may come back before its result). */
  sending(body: string): Sending {
    const record: SentRecord = { body: comparable(body) };
    this.records.push(record);
    return {
      landed: (guid) => {
        if (guid) record.guid = guid;
        record.resolvedAt = this.clock.now();
        this.prune();
      },
      failed: () => {
        this.records = this.records.filter((r) => r !== record);
      },
    };
  }

  /** Is this row an echo of ours? True consumes the record it matched (by guid first, then body). */
  consume(row: { guid: string; text: string }): boolean {
    this.prune();
    const body = comparable(row.text);
    const byGuid = this.records.findIndex((r) => r.guid !== undefined && r.guid === row.guid);
    const index = byGuid !== -1 ? byGuid : this.records.findIndex((r) => r.body === body);
    if (index === -1) return false;
    this.records.splice(index, 1);
    return true;
  }

  /** Records held now (for tests and doctor-style introspection). */
  get size(): number {
    return this.records.length;
  }

  private prune(): void {
    const now = this.clock.now();
    this.records = this.records.filter((r) => r.resolvedAt === undefined || now - r.resolvedAt < this.ttlMs);
    let resolved = this.records.filter((r) => r.resolvedAt !== undefined).length;
    if (resolved <= MAX_RESOLVED) return;
    this.records = this.records.filter((r) => {
      if (r.resolvedAt === undefined || resolved <= MAX_RESOLVED) return true;
      resolved -= 1;
      return false;
    });
  }
}
