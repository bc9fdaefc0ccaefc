/**
 * The inbound feed: one `watch.subscribe` on every chat from the persisted `since_rowid`, its rows
 * handled strictly in order. The cursor is a low-water mark: it advances past every row observed
 * (dropped ones too: a cursor that tracked only delivered messages would replay every skipped row
 * on the next start), and only once the row's handling settled, i.e. the journal holds it. A row
 * whose handling failed (the journal could not take it) stops the feed: it resubscribes from the
 * cursor after a pause, and the journal drops what it already holds.
 *
 * imsg's watch has no buffer to overflow: it reads the Messages database after an exclusive
 * `since_rowid` cursor in batches of 100 per poll (steipete/imsg Sources/IMsgCore/MessageWatcher.swift),
 * so a burst arrives late, never lost. Without `since_rowid` it starts at the newest row (from now).
 * It ends a subscription whose stream failed with an `error` notification
 * (Sources/imsg/RPCServer+Handlers.swift `handleWatchSubscribe`): the feed resubscribes from the
 * cursor with capped backoff. A resubscription while the old one still runs unsubscribes it first
 * (`watch.unsubscribe`), or both would deliver. Replays (a restart between journal and cursor) are
 * skipped by a window of the last 1,024 guids before any gate; the journal's own platform-id dedupe
 * (durable across restarts) is the backstop. Every notification and row not handed on is counted
 * (`drops`).
 */
import type { Clock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { InboundDrops } from "../messaging/channel/inbound-drops.js";
import type { CursorStore } from "../messaging/store/port.js";
import type { ImsgCalls } from "./transport.js";
import { type ImsgMessage, parseMessage, parseWatchError } from "./wire.js";

/** The cursor's name in the store. */
export const IMESSAGE_CURSOR = "imessage.watch";
/** Guids remembered for replay dedupe: ten of imsg's poll batches (100 rows each). */
export const DEDUPE_WINDOW = 1024;
/** After this long without an ended subscription, resubscription backoff starts from its first step again. */
const QUIET_RESET_MS = 60_000;

export interface WatchFeedOptions {
  imsg: ImsgCalls;
  /** Absent: kept in memory only (a restart watches from now). */
  cursor?: CursorStore | undefined;
  clock: Clock;
  logger: Logger;
  drops: InboundDrops;
  /** Settles once the row is journaled or dropped; rejects when the journal could not take it. */
  handle(row: ImsgMessage): Promise<void>;
  resubscribeFirstMs?: number;
  resubscribeMaxMs?: number;
}

/** The last N guids seen, oldest forgotten first. */
export class GuidWindow {
  private readonly seen = new Set<string>();

  constructor(private readonly size = DEDUPE_WINDOW) {}

  has(guid: string): boolean {
    return this.seen.has(guid);
  }

  add(guid: string): void {
    this.seen.delete(guid);
    this.seen.add(guid);
    if (this.seen.size > this.size) {
      const oldest = this.seen.values().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
  }
}

export class WatchFeed {
  /** Every row at or below this is handled (or the subscription started after it). */
  private low: number | undefined;
  private subscription: number | null = null;
  /** Bumped on every (re)subscription: rows of an ended one still queued are discarded. */
  private generation = 0;
  private chain: Promise<void> = Promise.resolve();
  private readonly window = new GuidWindow();
  private backoffMs: number;
  private timer: unknown = null;
  private stopped = false;
  private lastEndAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly o: WatchFeedOptions) {
    this.backoffMs = o.resubscribeFirstMs ?? 250;
  }

  /** Read the durable cursor (before the first subscription). */
  async load(): Promise<void> {
    this.low = await this.o.cursor?.get(IMESSAGE_CURSOR);
  }

  /** The cursor the next subscription starts from (undefined: from now). */
  get cursor(): number | undefined {
    return this.low;
  }

  /** Subscribe from the cursor (the child just started, or a resubscription is due). */
  async subscribe(since: number | undefined = this.low): Promise<void> {
    if (this.stopped) return;
    this.generation += 1;
    const previous = this.subscription;
    this.subscription = null;
    if (previous !== null)
      await this.o.imsg.request("watch.unsubscribe", { subscription: previous }).catch((error: unknown) => {
        // Its rows still come; they name the old subscription and are counted stale, not handled.
        this.o.logger.warn("imessage: unsubscribing the previous watch failed", { error: String(error) });
      });
    const result = (await this.o.imsg.request("watch.subscribe", {
      ...(since === undefined ? {} : { since_rowid: since }),
      attachments: false,
    })) as { subscription?: unknown } | null;
    this.subscription = typeof result?.subscription === "number" ? result.subscription : null;
    this.o.logger.info(`imessage: watching from row ${since ?? "now"}`);
  }

  /** A new child started: the old subscription died with the old child, so none is unsubscribed. */
  async onChildStarted(): Promise<void> {
    this.subscription = null;
    await this.subscribe();
  }

  /** The child's notifications. */
  onNotification(method: string, params: unknown): void {
    if (method === "message") this.onMessage(params);
    else if (method === "error") this.onWatchError(params);
    else this.o.drops.record({ reason: "unknown_shape", shape: `notification ${method.slice(0, 64)}` });
  }

  private onMessage(params: unknown): void {
    const n = parseMessage(params);
    if (!n) this.o.drops.record({ reason: "unknown_shape", shape: "message" });
    else if (this.isStale(n.subscription)) this.stale(n.message.guid);
    else this.enqueue(n.message, this.generation);
  }

  private onWatchError(params: unknown): void {
    const n = parseWatchError(params);
    if (!n) this.o.drops.record({ reason: "unknown_shape", shape: "error" });
    else if (this.isStale(n.subscription)) this.stale();
    else {
      this.o.logger.warn(`imessage: the watch ended with an error; resubscribing (${n.message})`);
      this.lastEndAt = this.o.clock.now();
      this.endAfterQueued();
    }
  }

  /** A notification naming a subscription other than the current one (an ended one's leftovers). */
  private isStale(subscription: number | undefined): boolean {
    return subscription !== undefined && this.subscription !== null && subscription !== this.subscription;
  }

  /** Counted: the next subscription starts at the cursor, so a row of an ended one comes again. */
  private stale(guid?: string): void {
    this.o.drops.record({ reason: "stale_subscription", ...(guid ? { fields: { guid } } : {}) });
  }

  /**
   * The subscription ended: rows already delivered are still handled in order, then the feed
   * resubscribes from the cursor they advanced.
   */
  private endAfterQueued(): void {
    this.subscription = null;
    const generation = this.generation;
    this.chain = this.chain.then(() => {
      if (generation === this.generation) this.resubscribeLater(this.low);
    });
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.o.clock.clearTimeout(this.timer);
  }

  /** Resolves once every row delivered so far is handled (tests, shutdown). */
  idle(): Promise<void> {
    return this.chain;
  }

  private enqueue(row: ImsgMessage, generation: number): void {
    this.chain = this.chain.then(async () => {
      if (this.stopped) return;
      if (generation !== this.generation) {
        this.stale(row.guid);
        return;
      }
      if (this.window.has(row.guid)) this.o.drops.record({ reason: "duplicate", fields: { guid: row.guid } });
      else {
        try {
          await this.o.handle(row);
        } catch (error) {
          // Not journaled: the cursor stays, the rest of this subscription is discarded, and the
          // feed takes everything from the cursor again after a pause.
          this.o.logger.error("imessage: a message could not be journaled; resubscribing", {
            error: String(error),
          });
          this.generation += 1;
          this.resubscribeLater(this.low);
          return;
        }
        this.window.add(row.guid);
      }
      // Consecutive ended watches back off further; a quiet minute since the last one starts afresh.
      if (this.o.clock.now() - this.lastEndAt > QUIET_RESET_MS)
        this.backoffMs = this.o.resubscribeFirstMs ?? 250;
      await this.advance(row.rowid);
    });
  }

  private async advance(rowid: number): Promise<void> {
    if (this.low !== undefined && rowid <= this.low) return;
    this.low = rowid;
    try {
      await this.o.cursor?.advance(IMESSAGE_CURSOR, rowid);
    } catch (error) {
      // In memory it moved; a restart reads the older value and the journal drops the replays.
      this.o.logger.warn("imessage: the watch cursor could not be stored", { error: String(error) });
    }
  }

  private resubscribeLater(since: number | undefined): void {
    if (this.stopped || this.timer !== null) return;
    const wait = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.o.resubscribeMaxMs ?? 30_000);
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = null;
      this.subscribe(since).then(
        () => undefined,
        (error: unknown) => {
          this.o.logger.warn("imessage: resubscribing failed", { error: String(error) });
          this.resubscribeLater(since);
        },
      );
    }, wait);
  }
}
