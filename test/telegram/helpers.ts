/** Shared test plumbing for the Telegram suites: a manual clock and the real client on the fake. */
import type { Clock } from "../../src/messaging/clock.js";
import type { PaceOptions } from "../../src/telegram/client.js";
import { createTelegramBot, telegramOps } from "../../src/telegram/client.js";
import type { TelegramOps } from "../../src/telegram/wire.js";
import type { FakeTelegram } from "../fakes/telegram/server.js";

/** Deterministic timers: nothing fires until the test advances the clock. */
export class ManualClock implements Clock {
  t = 1_000_000;
  private seq = 0;
  private readonly due = new Map<number, { at: number; fn: () => void }>();
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    this.seq += 1;
    this.due.set(this.seq, { at: this.t + ms, fn });
    return this.seq;
  }
  clearTimeout(handle: unknown): void {
    this.due.delete(handle as number);
  }
  get pending(): number {
    return this.due.size;
  }
  /** The delays currently armed, relative to now. */
  pendingDelays(): number[] {
    return [...this.due.values()].map((d) => d.at - this.t).sort((a, b) => a - b);
  }
  /** Advance, firing due timers in time order and letting each one's effects settle. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.due) {
        if (entry[1].at <= end && (next === undefined || entry[1].at < next[1].at)) next = entry;
      }
      if (next === undefined) break;
      this.due.delete(next[0]);
      this.t = next[1].at;
      next[1].fn();
      await settle();
    }
    this.t = end;
    await settle();
  }
}

/** Let queued promise chains and pending I/O callbacks run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Poll a condition across real I/O (loopback HTTP), bounded so a broken test fails instead of hanging. */
export async function until(predicate: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** No pacing: integration tests that are not about pace should not wait for it. */
export const NO_PACE: Partial<PaceOptions> = { privateIntervalMs: 0, groupIntervalMs: 0 };

/** grammY's real client, paced and 429-aware, pointed at the fake. */
export function opsFor(
  fake: FakeTelegram,
  opts: { clock?: Clock; pace?: Partial<PaceOptions> } = {},
): TelegramOps {
  return telegramOps(
    createTelegramBot({
      token: fake.token,
      apiRoot: fake.apiRoot,
      ...(opts.clock ? { clock: opts.clock } : {}),
      pace: opts.pace ?? NO_PACE,
    }),
  );
}

/** Fire due manual-clock timers and let real I/O run, until `predicate` holds (bounded). */
export async function pump(
  clock: ManualClock,
  predicate: () => boolean,
  what: string,
  timeoutMs = 5000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await clock.advance(0);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
