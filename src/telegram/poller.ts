/**
 * The long-polling loop. getUpdates(offset=N) is ALSO Telegram's acknowledgement of every update
 * below N, so the offset only ever passes updates the journal holds (accept-before-ack): a batch's
 * updates are handed over one at a time (intake stays in order, so a chat's second message sees its
 * first one's turn) and each is journaled before the next; only then does the durable cursor (the
 * store's, advance-only, fsynced) move past the batch, and only then is Telegram polled again. An
 * update that could not be journaled keeps the cursor where it was: Telegram delivers the batch
 * again and the journal drops what it already holds. Turns run concurrently with later polls.
 *
 * A failed poll backs off; three in a row mark the channel disconnected (with the reason) until the
 * next success. A rejected token stops the loop: retrying cannot fix it.
 */
import type { Clock } from "../messaging/base/clock.js";
import { sleep } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { CursorStore } from "../messaging/store/port.js";
import { apiErrorOf } from "./errors.js";
import type { UpdateHandling } from "./intake.js";
import type { TelegramOps, TgUpdate } from "./wire.js";

export const ALLOWED_UPDATES = ["message", "callback_query"] as const;
/** The cursor's name in the store (an older install's cursor file is imported under it). */
export const TELEGRAM_CURSOR = "telegram.getUpdates";
const MAX_BACKOFF_MS = 30_000;
const DISCONNECTED_AFTER = 3;

export interface PollerOptions {
  ops: TelegramOps;
  /** The durable cursor; absent = kept in memory only (nothing persisted: a restart polls from 0). */
  cursor?: CursorStore;
  handle: (update: TgUpdate) => UpdateHandling;
  timeoutSeconds: number;
  clock: Clock;
  logger: Logger;
  /** Told on every change of connectedness, with a token-free reason. */
  onState?: (connected: boolean, reason?: string) => void;
}

export class UpdatePoller {
  private readonly abort = new AbortController();
  private loop: Promise<void> | null = null;
  private connected: boolean | null = null;
  /** One past the newest update every earlier one of which is journaled: what the next poll confirms. */
  private offset = 0;

  constructor(private readonly o: PollerOptions) {}

  /** Read the durable cursor, then start polling from it. */
  async start(): Promise<void> {
    if (this.loop) return;
    this.offset = (await this.o.cursor?.get(TELEGRAM_CURSOR)) ?? 0;
    this.loop ??= this.run();
  }

  /** The offset the next poll sends. */
  get nextOffset(): number {
    return this.offset;
  }

  get isConnected(): boolean {
    return this.connected === true;
  }

  /** Stop asking Telegram for more; in-flight turns keep running (their messages are journaled). */
  async stopIntake(): Promise<void> {
    this.abort.abort(new Error("telegram poller stopped"));
    await this.loop;
  }

  private setConnected(connected: boolean, reason?: string): void {
    if (this.connected === connected) return;
    this.connected = connected;
    this.o.onState?.(connected, reason);
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    let failures = 0;
    while (!signal.aborted) {
      let updates: TgUpdate[];
      try {
        updates = await this.o.ops.call<TgUpdate[]>(
          "getUpdates",
          {
            offset: this.offset,
            timeout: this.o.timeoutSeconds,
            allowed_updates: [...ALLOWED_UPDATES],
          },
          signal,
        );
        failures = 0;
        this.setConnected(true);
      } catch (error) {
        if (signal.aborted) break;
        const api = apiErrorOf(error);
        if (api?.code === 401) {
          this.o.logger.error("telegram: the bot token was rejected; polling stopped");
          this.setConnected(false, "token rejected");
          return;
        }
        failures += 1;
        const reason = api
          ? `Bot API error ${api.code}`
          : error instanceof Error
            ? error.name
            : "poll failed";
        this.o.logger.warn("telegram: getUpdates failed; backing off", { reason, failures });
        if (failures >= DISCONNECTED_AFTER) this.setConnected(false, reason);
        try {
          await sleep(this.o.clock, Math.min(MAX_BACKOFF_MS, 500 * 2 ** (failures - 1)), signal);
        } catch {
          break; // aborted while backing off: stopping
        }
        continue;
      }
      if (updates.length === 0) continue;
      let next = this.offset;
      for (const update of updates) {
        if (!(await this.handOver(update))) break;
        // An update without an id (counted by the intake) cannot move the cursor.
        if (Number.isSafeInteger(update.update_id)) next = Math.max(next, update.update_id + 1);
      }
      if (next > this.offset) await this.advance(next);
      // Something could not be journaled: wait a moment and take the batch again from the cursor.
      if (next <= (updates.at(-1)?.update_id ?? -1)) {
        try {
          await sleep(this.o.clock, 1_000, signal);
        } catch {
          break;
        }
      }
    }
  }

  /** True once the update is journaled (or dropped, refused, or finished: nothing to keep). */
  private async handOver(update: TgUpdate): Promise<boolean> {
    try {
      await this.o.handle(update).accepted;
      return true;
    } catch (error) {
      this.o.logger.error("telegram: an update could not be journaled; it will be taken again", {
        update: update.update_id,
        error: String(error),
      });
      return false;
    }
  }

  /** Move the durable cursor; a failed write keeps polling from memory (a restart re-reads, deduped). */
  private async advance(next: number): Promise<void> {
    this.offset = next;
    try {
      await this.o.cursor?.advance(TELEGRAM_CURSOR, next);
    } catch (error) {
      this.o.logger.error("telegram: persisting the getUpdates cursor failed", { error: String(error) });
    }
  }
}
