/**
 * The getupdates long poll. The cursor (`get_updates_buf`, opaque) only ever passes messages the
 * journal holds: a batch's messages are handed over one at a time, each journaled before the next,
 * and only then is the new cursor stored (durable) and sent on the next poll. A message that could
 * not be journaled keeps the old cursor: iLink delivers the batch again and the journal drops what
 * it already holds. The server's suggested timeout (`longpolling_timeout_ms`) bounds the next poll.
 *
 * `-14` pauses every call (pause.ts): the loop sleeps out the pause and then tries ONE poll (no
 * burst, never a hot loop). Other failures back off exponentially; a poll must have gone well for a
 * while (the minimum-healthy guard) before a new failure starts the curve from the bottom again.
 */
import type { Clock } from "../messaging/base/clock.js";
import { sleep } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import { ReconnectGuard } from "../messaging/base/reconnect-guard.js";
import type { InboundDrops } from "../messaging/channel/inbound-drops.js";
import type { IlinkClient } from "./client.js";
import { IlinkApiError, SessionExpiredError, SessionPausedError } from "./errors.js";
import type { SessionPause } from "./pause.js";
import type { PeerState } from "./peers.js";

/** Used until the server suggests one. */
export const DEFAULT_POLL_TIMEOUT_MS = 35_000;
/** A suggestion outside this range is not followed. */
const MIN_SUGGESTED_MS = 1_000;
const MAX_SUGGESTED_MS = 120_000;
/** Never retry a failed poll sooner than this, even after a healthy stretch. */
const MIN_RETRY_MS = 1_000;

export type PollHealth = { healthy: true } | { healthy: false; reason: string };

export interface PollerOptions {
  client: IlinkClient;
  peers: PeerState;
  pause: SessionPause;
  /** Resolves once the message is journaled (or needed no journal); rejects when it could not be. */
  handle: (raw: unknown) => Promise<void>;
  /** Where an answer's `msgs` that is not a list is counted (its messages cannot be read). */
  drops: InboundDrops;
  clock: Clock;
  logger: Logger;
  onHealth?: (health: PollHealth) => void;
  backoff?: { baseMs?: number; maxMs?: number; minHealthyMs?: number };
}

export class UpdatesPoller {
  private readonly abort = new AbortController();
  private loop: Promise<void> | null = null;
  private timeoutMs = DEFAULT_POLL_TIMEOUT_MS;
  private readonly guard: ReconnectGuard;
  private up = false;
  private health: PollHealth = { healthy: true };
  /** Polls sent so far (for tests and doctor: a pause must not become a burst). */
  polls = 0;

  constructor(private readonly o: PollerOptions) {
    this.guard = new ReconnectGuard({
      clock: o.clock,
      baseMs: o.backoff?.baseMs ?? 1_000,
      maxMs: o.backoff?.maxMs ?? 60_000,
      minHealthyMs: o.backoff?.minHealthyMs ?? 30_000,
    });
  }

  start(): void {
    this.loop ??= this.run();
  }

  get currentHealth(): PollHealth {
    return this.health;
  }

  /** The long-poll bound the next call uses (the server's suggestion once it made one). */
  get pollTimeoutMs(): number {
    return this.timeoutMs;
  }

  async stop(): Promise<void> {
    this.abort.abort(new Error("weixin poller stopped"));
    await this.loop;
  }

  private setHealth(health: PollHealth): void {
    const same =
      health.healthy === this.health.healthy &&
      (health.healthy || (!this.health.healthy && this.health.reason === health.reason));
    this.health = health;
    if (!same) this.o.onHealth?.(health);
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      const paused = this.o.pause.remainingMs();
      if (paused > 0) {
        this.setHealth({ healthy: false, reason: "session expired (-14): paused; relink may be needed" });
        if (!(await this.wait(paused))) break;
        continue;
      }
      let answer: Awaited<ReturnType<IlinkClient["getUpdates"]>>;
      try {
        this.polls += 1;
        answer = await this.o.client.getUpdates(this.o.peers.updatesCursor, this.timeoutMs, signal);
      } catch (error) {
        if (signal.aborted) break;
        // The pause is the loop's to sleep out, at the top.
        if (error instanceof SessionExpiredError || error instanceof SessionPausedError) continue;
        this.guard.closed();
        this.up = false;
        const reason = error instanceof IlinkApiError ? `iLink error ${error.code}` : (error as Error).name;
        this.setHealth({ healthy: false, reason: `getupdates failed (${reason}); retrying` });
        this.o.logger.warn("weixin: getupdates failed; backing off", { reason });
        if (!(await this.wait(Math.max(MIN_RETRY_MS, this.guard.delayMs())))) break;
        continue;
      }
      if (!this.up) {
        this.up = true;
        this.guard.opened();
      }
      this.setHealth({ healthy: true });
      const suggested = answer.longpolling_timeout_ms;
      if (typeof suggested === "number" && suggested >= MIN_SUGGESTED_MS && suggested <= MAX_SUGGESTED_MS)
        this.timeoutMs = suggested;
      const msgs = Array.isArray(answer.msgs) ? answer.msgs : [];
      // Absent is an empty batch; anything else that is no list holds messages nobody can read.
      if (answer.msgs !== undefined && answer.msgs !== null && !Array.isArray(answer.msgs))
        this.o.drops.record({ reason: "unknown_shape", shape: `getupdates.msgs:${typeof answer.msgs}` });
      let journaled = true;
      for (const m of msgs) {
        try {
          await this.o.handle(m);
        } catch (error) {
          journaled = false;
          this.o.logger.error("weixin: a message could not be journaled; the batch will be taken again", {
            error: String(error),
          });
          break;
        }
      }
      const next = answer.get_updates_buf;
      if (journaled && typeof next === "string" && next !== "") await this.o.peers.advanceCursor(next);
      if (!journaled && !(await this.wait(MIN_RETRY_MS))) break;
    }
  }

  /** Sleep unless stopping; false when stopped. */
  private async wait(ms: number): Promise<boolean> {
    try {
      await sleep(this.o.clock, ms, this.abort.signal);
      return true;
    } catch {
      return false;
    }
  }
}
