/**
 * Starts the whole Telegram channel (startTelegram) against the fake Bot API with scripted agents:
 * the same wiring the gateway uses, with only the network boundary faked.
 */
import { expect } from "vitest";
import type { Clock } from "../../src/messaging/base/clock.js";
import type { ChannelContext, GrantControl } from "../../src/messaging/channel/contract.js";
import type { InboundDropLedger } from "../../src/messaging/channel/inbound-drops.js";
import type { TelegramSettings } from "../../src/telegram/index.js";
import { telegramChannel } from "../../src/telegram/index.js";
import type { RunningTelegram, TelegramStartOverrides } from "../../src/telegram/start.js";
import { start as startTelegram } from "../../src/telegram/start.js";
import { FakeTelegram } from "../fakes/telegram/server.js";
import { testChannelContext } from "../helpers/channel-context.js";
import type { ScriptedAgentOptions, StartedChannel } from "../helpers/channel-under-test.js";
import {
  channelMachinery,
  fakePerTest,
  scriptedAgent,
  startedChannel,
  tempHome,
} from "../helpers/channel-under-test.js";
import { NO_PACE } from "./helpers.js";

export { done, text } from "../helpers/channel-under-test.js";

export const OWNER = 42;

export interface ChannelUnderTest extends StartedChannel<RunningTelegram> {
  store: ChannelContext["store"];
  /** What the channel reported as not turned into a message, per reason. */
  dropLedger: InboundDropLedger;
}

export interface ChannelOptions extends ScriptedAgentOptions {
  telegram?: Record<string, unknown>;
  home?: string;
  overrides?: TelegramStartOverrides & { clock?: Clock };
  grant?: GrantControl;
  queueMode?: "steer" | "queue";
  /** Over the default env (the fake's token and API root). */
  env?: Record<string, string>;
}

export async function startChannel(fake: FakeTelegram, o: ChannelOptions = {}): Promise<ChannelUnderTest> {
  const { clock, ...overrides } = o.overrides ?? {};
  const machinery = await channelMachinery({
    home: o.home ?? tempHome("tg"),
    agentFor: (key) => scriptedAgent(key, o),
    ...(clock ? { storeNow: () => clock.now() } : {}),
  });
  const ctx = testChannelContext<TelegramSettings>(telegramChannel, {
    ...machinery,
    section: { allowedUserIds: [String(OWNER)], pollTimeoutSeconds: 1, ...o.telegram },
    env: { TELEGRAM_BOT_TOKEN: fake.token, TELEGRAM_API_ROOT: fake.apiRoot, ...o.env },
    queueMode: o.queueMode ?? "steer",
    ...(clock ? { clock } : {}),
    ...(o.grant ? { grant: o.grant } : {}),
  });
  const running = await startTelegram(ctx, {
    pace: NO_PACE,
    renderer: { throttleMs: 0 },
    ...overrides,
  });
  return { ...startedChannel(machinery, running), store: ctx.store, dropLedger: ctx.dropLedger };
}

/**
 * One fake Bot API per test and the channels started against it, stopped afterwards (the fake last,
 * after checking it never overflowed its bounded logs). Registers the hooks; call at module level.
 */
export function fakeTelegramLab(): {
  readonly fake: FakeTelegram;
  channel(o?: ChannelOptions): Promise<ChannelUnderTest>;
} {
  const lab = fakePerTest<FakeTelegram, ChannelUnderTest>({
    name: "the fake Bot API",
    start: () => FakeTelegram.start({ lifetimeMs: 30_000 }),
    stop: (fake) => fake.stop(),
    check: (fake) => expect(fake.overflowed).toBe(false),
  });
  return {
    get fake(): FakeTelegram {
      return lab.fake;
    },
    async channel(o: ChannelOptions = {}): Promise<ChannelUnderTest> {
      return lab.stopAfterTest(await startChannel(lab.fake, o));
    },
  };
}
