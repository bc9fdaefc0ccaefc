/**
 * Albums: Telegram delivers a media group (several photos or files sent together) as one message
 * per item, each carrying the same media_group_id and usually only the first one the caption. A
 * user expects one answer per album, so the items of one conversation's album are collected and
 * handed on as ONE message once no further item arrived for a short settle time (on the injected
 * clock), bounded by a total wait and by Telegram's ten items per album.
 *
 * Order is kept: anything else from the same conversation (a text, a command, another album)
 * flushes the pending album first, so an album is never answered after a message sent behind it.
 */
import type { Timers } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { Handled } from "../messaging/channel/surface.js";
import { TELEGRAM_MAX_MEDIA_GROUP } from "./limits.js";

/** Quiet time after the latest item before the album is complete (items come within a second). */
export const ALBUM_SETTLE_MS = 1_000;
/** However the items trickle in, an album waits at most this long after its first one. */
export const ALBUM_MAX_WAIT_MS = 5_000;

export interface AlbumOptions<T> {
  timers: Timers & { now(): number };
  logger: Logger;
  /** Route the collected items (in arrival order) as one message; resolves once routed. */
  flush: (items: T[]) => Promise<Handled>;
  settleMs?: number;
  maxWaitMs?: number;
  maxItems?: number;
}

interface Pending<T> {
  group: string;
  items: T[];
  firstAt: number;
  timer: unknown;
  /** Settles with the album's turn: every item's update is terminal only then. */
  done: Promise<void>;
  finish: (outcome: { error?: unknown }) => void;
}

export class AlbumCollector<T> {
  /** At most one pending album per conversation (route). */
  private readonly pending = new Map<string, Pending<T>>();
  private readonly settleMs: number;
  private readonly maxWaitMs: number;
  private readonly maxItems: number;

  constructor(private readonly o: AlbumOptions<T>) {
    this.settleMs = o.settleMs ?? ALBUM_SETTLE_MS;
    this.maxWaitMs = o.maxWaitMs ?? ALBUM_MAX_WAIT_MS;
    this.maxItems = o.maxItems ?? TELEGRAM_MAX_MEDIA_GROUP;
  }

  /** How many conversations have an album waiting. */
  get size(): number {
    return this.pending.size;
  }

  /** How many items are held, across every waiting album. */
  get held(): number {
    let n = 0;
    for (const album of this.pending.values()) n += album.items.length;
    return n;
  }

  /**
   * Collect one item of album `group` in conversation `route`. Resolves once the item is held (or,
   * when it completes the album, once the album is routed); the returned turn ends with the
   * album's turn.
   */
  async add(route: string, group: string, item: T): Promise<Handled> {
    const current = this.pending.get(route);
    // Another album in this conversation: the earlier one is complete, and goes first.
    if (current && current.group !== group) await this.flush(route);
    let album = this.pending.get(route);
    if (!album) {
      let finish: Pending<T>["finish"] = () => {};
      const done = new Promise<void>((resolve, reject) => {
        finish = ({ error }) => (error === undefined ? resolve() : reject(error));
      });
      album = { group, items: [], firstAt: this.o.timers.now(), timer: undefined, done, finish };
      this.pending.set(route, album);
    }
    album.items.push(item);
    const turn = album.done;
    if (album.items.length >= this.maxItems) await this.flush(route);
    else this.arm(route, album);
    return { turn };
  }

  /** Route this conversation's pending album now (something else from it arrived). */
  async flush(route: string): Promise<void> {
    const album = this.pending.get(route);
    if (!album) return;
    this.pending.delete(route);
    this.o.timers.clearTimeout(album.timer);
    try {
      const { turn } = await this.o.flush(album.items);
      turn.then(
        () => album.finish({}),
        (error: unknown) => album.finish({ error }),
      );
    } catch (error) {
      this.o.logger.error("telegram: routing an album failed", { error: String(error) });
      album.finish({ error });
    }
  }

  /** Shutdown: every pending album is routed as it stands (its items were accepted from Telegram). */
  async flushAll(): Promise<void> {
    await Promise.all([...this.pending.keys()].map((route) => this.flush(route)));
  }

  private arm(route: string, album: Pending<T>): void {
    this.o.timers.clearTimeout(album.timer);
    const left = album.firstAt + this.maxWaitMs - this.o.timers.now();
    album.timer = this.o.timers.setTimeout(
      () => {
        // The same album still pending (not flushed and replaced meanwhile).
        if (this.pending.get(route) === album) void this.flush(route);
      },
      Math.max(0, Math.min(this.settleMs, left)),
    );
  }
}
