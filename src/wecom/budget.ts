/**
 * The push budget: WeCom accepts a bounded number of aibot_send_msg per conversation per minute, and
 * a push past it is refused outright (the user then misses a command's answer or a part of a long
 * reply). So pushes are spent from a sliding one-minute window per conversation, and a push that
 * would overdraw it WAITS for the window to free instead of being sent to be refused. Clock injected.
 */
import { WECOM_PUSHES_PER_MINUTE } from "./limits.js";

const WINDOW_MS = 60_000;

export class PushBudget {
  private readonly spent = new Map<string, number[]>();

  constructor(
    private readonly now: () => number,
    private readonly perMinute: number = WECOM_PUSHES_PER_MINUTE,
  ) {}

  /**
   * Spend one push for `chatId` now and return 0, or (without spending) how long until one frees.
   * Callers wait that long and ask again: the window may have been spent by another push meanwhile.
   */
  take(chatId: string): number {
    const now = this.now();
    const times = (this.spent.get(chatId) ?? []).filter((t) => now - t < WINDOW_MS);
    if (times.length < this.perMinute) {
      times.push(now);
      this.spent.set(chatId, times);
      return 0;
    }
    this.spent.set(chatId, times);
    return (times[0] as number) + WINDOW_MS - now;
  }
}
