/** Deterministic timers for tests: nothing fires until the test advances the clock. */
import type { Clock } from "../../src/messaging/base/clock.js";

export class ManualClock implements Clock {
  t: number;
  private seq = 0;
  private readonly due = new Map<number, { at: number; fn: () => void }>();

  constructor(start = 1_000_000) {
    this.t = start;
  }
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
  /** Fire the earliest timer due at or before `end` (moving the clock to it); false when none is. */
  protected fireNext(end: number): boolean {
    let next: [number, { at: number; fn: () => void }] | undefined;
    for (const entry of this.due) {
      if (entry[1].at <= end && (next === undefined || entry[1].at < next[1].at)) next = entry;
    }
    if (next === undefined) return false;
    this.due.delete(next[0]);
    this.t = next[1].at;
    next[1].fn();
    return true;
  }
  /** Advance, firing due timers in time order and letting each one's effects settle. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    while (this.fireNext(end)) await settle();
    this.t = end;
    await settle();
  }
}

/** Let queued promise chains and pending I/O callbacks run (a macrotask runs after all microtasks). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
