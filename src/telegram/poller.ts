/**
 * The long-polling loop. Each batch is registered with the cursor and persisted before anything is
 * handled; updates are handed over one at a time (intake stays in order, so a chat's second message
 * sees its first one's turn) while their turns run concurrently; each update resolves in the cursor
 * once terminal. A failed poll backs off; three in a row mark the channel disconnected (with the
 * reason) until the next success. A rejected token stops the loop: retrying cannot fix it.
 */
import type { Clock } from "../messaging/base/clock.js";
import { sleep } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { UpdateCursor } from "./cursor.js";
import { apiErrorOf } from "./errors.js";
import type { UpdateHandling } from "./intake.js";
import type { TelegramOps, TgUpdate } from "./wire.js";

export const ALLOWED_UPDATES = ["message", "callback_query"] as const;
const MAX_BACKOFF_MS = 30_000;
const DISCONNECTED_AFTER = 3;

export interface PollerOptions {
  ops: TelegramOps;
  cursor: UpdateCursor;
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
  private readonly pending = new Set<Promise<void>>();
  private connected: boolean | null = null;

  constructor(private readonly o: PollerOptions) {}

  start(): void {
    this.loop ??= this.run();
  }

  get isConnected(): boolean {
    return this.connected === true;
  }

  /** Stop asking Telegram for more; in-flight turns keep running. */
  async stopIntake(): Promise<void> {
    this.abort.abort(new Error("telegram poller stopped"));
    await this.loop;
  }

  /** Wait for every handed-over update to settle (and be resolved in the cursor). */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.pending]);
    await this.o.cursor.persist();
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
            offset: this.o.cursor.offset,
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
      // Registered and persisted as a batch before any handler runs (the low-water mark covers it).
      this.o.cursor.register(updates.map((u) => u.update_id));
      await this.o.cursor.persist();
      for (const update of updates) await this.handOver(update);
    }
  }

  private async handOver(update: TgUpdate): Promise<void> {
    let handling: UpdateHandling;
    try {
      handling = this.o.handle(update);
    } catch (error) {
      this.o.logger.error("telegram: update handler threw", { error: String(error) });
      await this.o.cursor.resolve(update.update_id);
      return;
    }
    // Refusal and failure are terminal too: an update resolved only on success would replay forever.
    const settled = handling.settled
      .catch((error: unknown) => this.o.logger.error("telegram: update failed", { error: String(error) }))
      .finally(() => this.o.cursor.resolve(update.update_id));
    this.pending.add(settled);
    void settled.finally(() => this.pending.delete(settled));
    await handling.accepted.catch((error: unknown) =>
      this.o.logger.error("telegram: update intake failed", { error: String(error) }),
    );
  }
}
