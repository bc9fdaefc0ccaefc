/**
 * Starts the whole Webex channel (start()) against the loopback fake with scripted agents and the
 * real store: the gateway's wiring with only the network boundary faked.
 */
import type { Clock } from "../../src/messaging/base/clock.js";
import type { InboundDropLedger } from "../../src/messaging/channel/inbound-drops.js";
import type { ScriptedProviderOptions, ScriptedTurn, ScriptStep } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import type { WebexSettings } from "../../src/webex/index.js";
import { webexChannel } from "../../src/webex/index.js";
import type { RunningWebex, WebexStartOverrides } from "../../src/webex/start.js";
import { start as startWebex } from "../../src/webex/start.js";
import { FakeWebex } from "../fakes/webex/server.js";
import { testChannelContext } from "../helpers/channel-context.js";
import type { StartedChannel } from "../helpers/channel-under-test.js";
import { channelMachinery, fakePerTest, startedChannel, tempHome } from "../helpers/channel-under-test.js";

export { done, text, until } from "../helpers/channel-under-test.js";

export const ALICE = "alice@example.com";
export const DM = "room-alice";

/** Its agents are listed in creation order: every session of a Webex test runs the same script. */
export interface WebexUnderTest extends Omit<StartedChannel<RunningWebex>, "providers"> {
  providers: ScriptedProvider[];
  /** Every frame that did not become a message, counted per reason. */
  dropLedger: InboundDropLedger;
}

export interface WebexOptions {
  webex?: Record<string, unknown>;
  turns?: (ScriptedTurn | ScriptStep[])[];
  provider?: ScriptedProviderOptions;
  home?: string;
  overrides?: WebexStartOverrides;
  clock?: Clock;
  /** More of the environment (HTTPS_PROXY, NO_PROXY); the token is always the fake's. */
  env?: Record<string, string>;
}

export async function startWebexChannel(fake: FakeWebex, o: WebexOptions = {}): Promise<WebexUnderTest> {
  const providers: ScriptedProvider[] = [];
  const machinery = await channelMachinery({
    home: o.home ?? tempHome("webex"),
    agentFor: () => {
      const p = new ScriptedProvider(o.turns ?? [], o.provider ?? {});
      providers.push(p);
      return p;
    },
  });
  const ctx = testChannelContext<WebexSettings>(webexChannel, {
    ...machinery,
    section: { allowedEmails: [ALICE], apiUrl: fake.apiUrl, u2cUrl: fake.u2cUrl, ...o.webex },
    env: { ...o.env, WEBEX_BOT_TOKEN: fake.token },
    ...(o.clock ? { clock: o.clock } : {}),
  });
  const running = await startWebex(ctx, { statusStartMs: 0, ...o.overrides });
  return { ...startedChannel(machinery, running), providers, dropLedger: ctx.dropLedger };
}

/**
 * One fake Webex per test (with Alice's direct room) and the channels started against it, stopped
 * afterwards, the fake last. Registers the hooks; call at module level.
 */
export function webexLab(): {
  readonly fake: FakeWebex;
  channel(o?: WebexOptions): Promise<WebexUnderTest>;
} {
  const lab = fakePerTest<FakeWebex, WebexUnderTest>({
    name: "webexLab's fake",
    start: async () => {
      const fake = await new FakeWebex({ lifetimeMs: 30_000 }).start();
      fake.addRoom(DM, "direct");
      return fake;
    },
    stop: (fake) => fake.close(),
  });
  return {
    get fake() {
      return lab.fake;
    },
    async channel(o: WebexOptions = {}) {
      return lab.stopAfterTest(await startWebexChannel(lab.fake, o));
    },
  };
}
