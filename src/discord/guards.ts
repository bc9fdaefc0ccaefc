/**
 * The two guards the spec demands beyond what discord.js already does. Both are pure state over an
 * injected clock, so their tests need no real time.
 *
 * InvalidRequestBreaker: Discord blocks the whole IP for an hour once it sees 10,000 invalid
 * requests (401, 403, and 429s that are not "shared") in 10 minutes. @discordjs/rest only COUNTS
 * them (a warning event); it keeps sending. A block costs the whole channel rather than one call,
 * so the breaker trips well below the ceiling and refuses every send during a cool-off.
 *
 * ReconnectGuard (the kit's, src/messaging/base/reconnect-guard.ts): @discordjs/ws reconnects 500 ms
 * after any recoverable close, forever, so a gateway that accepts and then closes at once would be
 * hammered twice a second without it.
 */
import type { Clock } from "../messaging/base/clock.js";

export interface BreakerOptions {
  clock: Pick<Clock, "now">;
  /** Invalid responses inside `windowMs` that trip the breaker (Discord's ceiling is 10,000). */
  threshold?: number;
  windowMs?: number;
  coolOffMs?: number;
}

export class InvalidRequestBreaker {
  private readonly stamps: number[] = [];
  private openUntil = 0;
  private readonly threshold: number;
  private readonly windowMs: number;
  private readonly coolOffMs: number;

  constructor(private readonly o: BreakerOptions) {
    this.threshold = o.threshold ?? 1_000;
    this.windowMs = o.windowMs ?? 10 * 60_000;
    this.coolOffMs = o.coolOffMs ?? 5 * 60_000;
  }

  /** Feed every response status; `scope` is X-RateLimit-Scope (a "shared" 429 is not ours to count). */
  record(status: number, scope?: string | null): void {
    const invalid = status === 401 || status === 403 || (status === 429 && scope !== "shared");
    if (!invalid) return;
    const now = this.o.clock.now();
    this.stamps.push(now);
    while (this.stamps.length > 0 && (this.stamps[0] as number) <= now - this.windowMs) this.stamps.shift();
    if (this.stamps.length >= this.threshold) {
      this.openUntil = now + this.coolOffMs;
      this.stamps.length = 0;
    }
  }

  /** True while sending is refused. */
  isOpen(): boolean {
    return this.o.clock.now() < this.openUntil;
  }

  /** Milliseconds of cool-off left (0 when closed). */
  remainingMs(): number {
    return Math.max(0, this.openUntil - this.o.clock.now());
  }
}

export { ReconnectGuard, type ReconnectGuardOptions } from "../messaging/base/reconnect-guard.js";
