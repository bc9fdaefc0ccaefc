/**
 * How long the store keeps what it may forget, and the one pass that applies it. Unfinished intake
 * and "sending" delivery parts are never pruned: they are a message not yet answered and the
 * evidence of a post that may or may not exist. Layer: messaging.
 */
import type { ParleyStore } from "./port.js";

const DAY_MS = 24 * 60 * 60 * 1000;

export interface RetentionPolicy {
  /**
   * Done journal rows. This IS the dedupe window: a redelivery after its row is pruned is accepted
   * again. 30 days: far past any platform's redelivery horizon (Telegram keeps updates 24 h) and
   * past a gateway left down over a long holiday, for a few hundred bytes a message.
   */
  intakeRetainDays: number;
  /** Landed delivery parts: only a resumed turn reads them, and a turn is never resumed that late. */
  deliveriesRetainDays: number;
  /**
   * `transcripts.retainDays`. 30 days by default: history for /history, a reloaded web chat page
   * and resume's replay, without turning the gateway into a permanent archive of private chats.
   * `null` keeps transcripts until purged by hand. The channel server's inbox holds the same words
   * (what its agent host was handed and sent), so it is kept exactly as long.
   */
  transcriptsRetainDays: number | null;
}

export const DEFAULT_RETENTION: Readonly<RetentionPolicy> = {
  intakeRetainDays: 30,
  deliveriesRetainDays: 30,
  transcriptsRetainDays: 30,
};

export interface RetentionResult {
  intake: number;
  deliveries: number;
  transcripts: number;
  inbox: number;
}

/** Prune everything past its retention, as of `nowMs`; resolves to how many rows each kind lost. */
export async function applyRetention(
  store: Pick<ParleyStore, "intake" | "deliveries" | "transcripts" | "inbox">,
  policy: RetentionPolicy,
  nowMs: number,
): Promise<RetentionResult> {
  for (const [name, days] of Object.entries(policy)) {
    // A negative or NaN age would prune rows from the future, i.e. everything.
    if (days !== null && !(Number.isFinite(days) && days >= 0)) {
      throw new RangeError(`${name} must be a non-negative number of days: ${days}`);
    }
  }
  const intake = await store.intake.prune(nowMs - policy.intakeRetainDays * DAY_MS);
  const deliveries = await store.deliveries.prune(nowMs - policy.deliveriesRetainDays * DAY_MS);
  const wordsBefore =
    policy.transcriptsRetainDays === null ? null : nowMs - policy.transcriptsRetainDays * DAY_MS;
  const transcripts =
    wordsBefore === null ? 0 : await store.transcripts.purge({ scope: "before", beforeMs: wordsBefore });
  const inbox = wordsBefore === null ? 0 : await store.inbox.prune(wordsBefore);
  return { intake, deliveries, transcripts, inbox };
}
