/**
 * Inbound frames a channel does not turn into a message, counted and audited: nothing is dropped
 * silently. Every channel reports each such frame (an unknown shape, a missing id, a bot's echo, a
 * stranger, a duplicate…) with a reason; the ledger counts it per channel and reason, audits it (the
 * gateway's denial window folds repeats into one row), logs an unknown shape at warn once per shape,
 * and writes the counts to the store, where `parley doctor` reads them. Layer: messaging.
 */
import type { Logger } from "../base/logger.js";
import type { AuditFields, AuditSink } from "../security/audit.js";
import type { InboundDropStore, InboundDropTotal } from "../store/port.js";

/**
 * Why a frame did not become a message. The common ones are named; a channel may give its own
 * (snake_case, short): the reason is a grouping key for the operator, not a closed protocol.
 */
export type InboundDropReason =
  | "unknown_shape"
  | "missing_id"
  | "bot_echo"
  | "stranger"
  | "duplicate"
  | "empty"
  | "unparseable"
  | (string & {});

export interface InboundDrop {
  reason: InboundDropReason;
  /** The audit row's operation; "inbound" unless the channel already names this path otherwise. */
  operation?: string;
  /** "denied" for a stranger, "dropped" for everything else, unless given. */
  outcome?: "dropped" | "denied" | "refused";
  user?: string;
  conversation?: string;
  /** For an unknown shape: what it was (an event type), so the warn line says which. */
  shape?: string;
  /** Further audit fields (ids, kinds; never a secret or message text). */
  fields?: AuditFields;
}

export type { InboundDropTotal };

/** A press on a button parley did not draw, or no longer shows (`kind`: the platform's press form). */
export function unknownPress(user: string, conversation: string, kind: string): InboundDrop {
  return { reason: "unknown_press", user, conversation, fields: { kind } };
}

/** What a channel holds: its own name is already bound. */
export interface InboundDrops {
  record(drop: InboundDrop): void;
}

/** Distinct unknown shapes remembered for the warn-once rule; past it every one warns (bounded memory). */
const MAX_WARNED_SHAPES = 1_000;

export interface InboundDropLedgerOptions {
  audit: AuditSink;
  logger: Logger;
  /** Where the counts are kept for doctor; absent in tests of one part (counted in memory only). */
  store?: InboundDropStore;
  now?: () => number;
}

/** One per gateway; `forChannel` hands each channel its bound reporter. */
export class InboundDropLedger {
  private readonly totals = new Map<string, InboundDropTotal>();
  private readonly warnedShapes = new Set<string>();
  /** Counts not yet written to the store, by the same key. */
  private pending = new Map<string, InboundDropTotal>();
  private scheduled = false;
  private chain: Promise<void> = Promise.resolve();
  private readonly now: () => number;

  constructor(private readonly o: InboundDropLedgerOptions) {
    this.now = o.now ?? Date.now;
  }

  forChannel(channel: string): InboundDrops {
    return { record: (drop) => this.record(channel, drop) };
  }

  record(channel: string, drop: InboundDrop): void {
    const at = this.now();
    this.bump(this.totals, channel, drop.reason, at);
    const outcome = drop.outcome ?? (drop.reason === "stranger" ? "denied" : "dropped");
    this.o.audit.log(drop.operation ?? "inbound", outcome, {
      ...drop.fields,
      channel,
      reason: drop.reason,
      user: drop.user,
      conversation: drop.conversation,
      shape: drop.shape,
    });
    if (drop.reason === "unknown_shape") this.warnOnce(channel, drop.shape ?? "(unnamed)");
    if (this.o.store) this.queue(channel, drop.reason, at);
  }

  /** This process's counts since start, per channel and reason. */
  counts(channel?: string): InboundDropTotal[] {
    return [...this.totals.values()]
      .filter((t) => channel === undefined || t.channel === channel)
      .map((t) => ({ ...t }));
  }

  /** How many of `reason` this channel dropped since start (0 when none). */
  count(channel: string, reason: string): number {
    return this.totals.get(keyOf(channel, reason))?.count ?? 0;
  }

  /** Resolves once every count so far is written (or its failure logged). */
  flush(): Promise<void> {
    return this.chain;
  }

  private warnOnce(channel: string, shape: string): void {
    const key = keyOf(channel, shape);
    if (this.warnedShapes.has(key)) return;
    if (this.warnedShapes.size < MAX_WARNED_SHAPES) this.warnedShapes.add(key);
    this.o.logger.warn(`${channel}: an inbound frame of a shape parley does not know was dropped`, { shape });
  }

  private bump(into: Map<string, InboundDropTotal>, channel: string, reason: string, at: number): void {
    const key = keyOf(channel, reason);
    const total = into.get(key);
    if (total) {
      total.count += 1;
      total.lastAtMs = at;
    } else into.set(key, { channel, reason, count: 1, lastAtMs: at });
  }

  /** Counts of one tick go to the store as one batch: a flood costs one write per tick, not per frame. */
  private queue(channel: string, reason: string, at: number): void {
    this.bump(this.pending, channel, reason, at);
    if (this.scheduled) return;
    this.scheduled = true;
    this.chain = this.chain.then(async () => {
      this.scheduled = false;
      const batch = [...this.pending.values()];
      this.pending = new Map();
      try {
        await this.o.store?.add(batch);
      } catch (error) {
        this.o.logger.error("inbound drop counts could not be written", { error: String(error) });
      }
    });
  }
}

function keyOf(channel: string, reason: string): string {
  return `${channel}\u0000${reason}`;
}
