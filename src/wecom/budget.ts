/**
 * The push budget: WeCom accepts 30 aibot_send_msg a minute and 1,000 an hour per conversation
 * (limits.ts), and a push past either is refused outright (45009: the user would miss a command's
 * answer or a part of a long reply). So pushes are spent from two sliding windows per conversation,
 * each kept a margin longer than WeCom's (it counts on its own receipt clock), and a push that would
 * overdraw one WAITS for it to free instead of being sent to be refused: the whole answer arriving
 * late beats a part of it never arriving. Clock injected.
 */
import { WECOM_PUSH_WINDOW_MARGIN_MS, WECOM_PUSHES_PER_HOUR, WECOM_PUSHES_PER_MINUTE } from "./limits.js";

export interface PushWindow {
  /** The platform's window; the budget keeps `WECOM_PUSH_WINDOW_MARGIN_MS` on top of it. */
  ms: number;
  max: number;
}

export const WECOM_PUSH_WINDOWS: readonly PushWindow[] = [
  { ms: 60_000, max: WECOM_PUSHES_PER_MINUTE },
  { ms: 3_600_000, max: WECOM_PUSHES_PER_HOUR },
];

/** The earliest time at or after `now` a push fits every window, given the pushes spent (ascending). */
function earliestSlot(spent: readonly number[], now: number, windows: readonly PushWindow[]): number {
  let at = now;
  for (const w of windows) {
    const span = w.ms + WECOM_PUSH_WINDOW_MARGIN_MS;
    // The window ending at `at` may hold max-1 earlier pushes: the max-th newest must have left it.
    const blocking = spent.length >= w.max ? (spent[spent.length - w.max] as number) : undefined;
    if (blocking !== undefined) at = Math.max(at, blocking + span);
  }
  return at;
}

export class PushBudget {
  private readonly spent = new Map<string, number[]>();
  private readonly longest: number;

  constructor(
    private readonly now: () => number,
    private readonly windows: readonly PushWindow[] = WECOM_PUSH_WINDOWS,
  ) {
    this.longest = Math.max(...windows.map((w) => w.ms + WECOM_PUSH_WINDOW_MARGIN_MS));
  }

  /**
   * Spend one push for `chatId` now and return 0, or (without spending) how long until one frees.
   * Callers wait that long and ask again: the window may have been spent by another push meanwhile.
   */
  take(chatId: string): number {
    const now = this.now();
    const times = this.live(chatId, now);
    const at = earliestSlot(times, now, this.windows);
    if (at > now) return at - now;
    times.push(now);
    this.spent.set(chatId, times);
    return 0;
  }

  /** How long from now until `count` more pushes into `chatId` could all have gone out (spends nothing). */
  delayFor(chatId: string, count: number): number {
    const now = this.now();
    const times = [...this.live(chatId, now)];
    let at = now;
    for (let i = 0; i < count; i++) {
      at = earliestSlot(times, at, this.windows);
      times.push(at);
    }
    return at - now;
  }

  /** The pushes still inside the longest window (older ones can block nothing), pruned in place. */
  private live(chatId: string, now: number): number[] {
    const times = (this.spent.get(chatId) ?? []).filter((t) => now - t < this.longest);
    if (times.length === 0) this.spent.delete(chatId);
    else this.spent.set(chatId, times);
    return times;
  }
}
