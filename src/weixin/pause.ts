/**
 * The session pause. iLink answers `-14` when the bot's session expired; calling again at once only
 * earns more `-14`s (and, Tencent's own plugin suggests, a longer ban), so every call, polling and
 * sending alike, is refused locally for `weixin.sessionPauseMinutes`. The pause ends on its own:
 * the next poll tries once, and a second `-14` starts a new pause (never a hot loop).
 */
import type { Clock } from "../messaging/base/clock.js";

export interface PauseState {
  /** Epoch ms the pause ends; 0 when not paused. */
  until: number;
}

export class SessionPause {
  private until = 0;

  constructor(
    private readonly o: {
      clock: Pick<Clock, "now">;
      minutes: number;
      /** Told when a pause starts (`until` > 0) and when it is found over (`until` 0). */
      onChange?: (state: PauseState) => void;
    },
  ) {}

  /** A `-14` arrived: pause every call from now. */
  trip(): void {
    this.until = this.o.clock.now() + this.o.minutes * 60_000;
    this.o.onChange?.({ until: this.until });
  }

  /** A pause an earlier run recorded and that has not ended: a restart must not cut it short. */
  restore(until: number): void {
    if (until > this.o.clock.now()) this.until = until;
  }

  /** Milliseconds the pause still runs; 0 when calls may go. */
  remainingMs(): number {
    if (this.until === 0) return 0;
    const left = this.until - this.o.clock.now();
    if (left > 0) return left;
    this.until = 0;
    this.o.onChange?.({ until: 0 });
    return 0;
  }

  get pausedUntil(): number {
    return this.remainingMs() > 0 ? this.until : 0;
  }
}
