/**
 * The minimum-healthy reconnect guard, for any channel holding a long-lived socket: a connection
 * must live at least `minHealthyMs` for its close to reset the backoff counter, so a peer that
 * accepts and then closes at once stays on the exponential curve instead of being hammered at the
 * SDK's fixed retry rate (a ban, not just CPU, on platforms that count invalid connects). Pure state
 * over an injected clock. Layer: messaging (base).
 */
import type { Clock } from "./clock.js";

export interface ReconnectGuardOptions {
  clock: Pick<Clock, "now">;
  minHealthyMs?: number;
  baseMs?: number;
  maxMs?: number;
}

export class ReconnectGuard {
  private failures = 0;
  private openedAt: number | null = null;
  readonly minHealthyMs: number;
  private readonly baseMs: number;
  private readonly maxMs: number;

  constructor(private readonly o: ReconnectGuardOptions) {
    this.minHealthyMs = o.minHealthyMs ?? 30_000;
    this.baseMs = o.baseMs ?? 1_000;
    this.maxMs = o.maxMs ?? 60_000;
  }

  /** The connection is up (its handshake completed: READY, hello). */
  opened(): void {
    this.openedAt = this.o.clock.now();
  }

  /** The connection closed; only a connection that lived long enough resets the curve. */
  closed(): void {
    const lived = this.openedAt === null ? 0 : this.o.clock.now() - this.openedAt;
    this.openedAt = null;
    this.failures = lived >= this.minHealthyMs ? 0 : this.failures + 1;
  }

  /** How long to wait before the next connection attempt (0 after a healthy close). */
  delayMs(): number {
    if (this.failures === 0) return 0;
    return Math.min(this.maxMs, this.baseMs * 2 ** (this.failures - 1));
  }
}
