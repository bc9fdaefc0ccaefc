/** Shared test plumbing for the Telegram suites: a manual clock and the real client on the fake. */
import type { Clock } from "../../src/messaging/base/clock.js";
import type { PaceOptions } from "../../src/telegram/client.js";
import { createTelegramBot, telegramOps } from "../../src/telegram/client.js";
import type { TelegramOps } from "../../src/telegram/wire.js";
import type { FakeTelegram } from "../fakes/telegram/server.js";
import { ManualClock, settle } from "../helpers/manual-clock.js";

export { ManualClock, settle };

/** Poll a condition across real I/O (loopback HTTP), bounded so a broken test fails instead of hanging. */
export async function until(
  predicate: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 5000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** No pacing: integration tests that are not about pace should not wait for it. */
export const NO_PACE: Partial<PaceOptions> = { privateIntervalMs: 0, groupIntervalMs: 0 };

/** grammY's real client, paced and 429-aware, pointed at the fake. */
export function opsFor(
  fake: FakeTelegram,
  opts: { clock?: Clock; pace?: Partial<PaceOptions>; fetch?: typeof fetch } = {},
): TelegramOps {
  return telegramOps(
    createTelegramBot({
      token: fake.token,
      apiRoot: fake.apiRoot,
      ...(opts.clock ? { clock: opts.clock } : {}),
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
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
