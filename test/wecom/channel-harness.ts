/**
 * Starts the whole WeCom channel (start()) against the loopback fake with scripted agents and the
 * real store: the gateway's wiring, with only the network boundary faked.
 */
import type { Clock } from "../../src/messaging/base/clock.js";
import type { GrantControl } from "../../src/messaging/channel/contract.js";
import type { InboundDropLedger } from "../../src/messaging/channel/inbound-drops.js";
import type { ScriptedProviderOptions, ScriptedTurn, ScriptStep } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import type { WeComSettings } from "../../src/wecom/index.js";
import { wecomChannel } from "../../src/wecom/index.js";
import type { RunningWeCom, WeComStartOverrides } from "../../src/wecom/start.js";
import { start as startWeCom } from "../../src/wecom/start.js";
import type { FakeWeComOptions } from "../fakes/wecom/server.js";
import { FakeWeCom } from "../fakes/wecom/server.js";
import { testChannelContext } from "../helpers/channel-context.js";
import type { CrashableChannel } from "../helpers/channel-under-test.js";
import { channelMachinery, crashableChannel, fakePerTest, tempHome } from "../helpers/channel-under-test.js";

export { done, text } from "../helpers/channel-under-test.js";

export const OWNER = "zhangsan";
export const GUEST = "lisi";

export type WeComUnderTest = CrashableChannel<RunningWeCom> & {
  /** The channel's inbound drops (ctx.drops), counted per reason. */
  dropLedger: InboundDropLedger;
};

export interface WeComChannelOptions {
  wecom?: Record<string, unknown>;
  turns?: (key: string) => (ScriptedTurn | ScriptStep[])[];
  provider?: ScriptedProviderOptions;
  /** The n-th provider created for a session (from 1), over `turns`/`provider`. */
  makeProvider?: (key: string, n: number) => ScriptedProvider | undefined;
  home?: string;
  clock?: Clock;
  overrides?: WeComStartOverrides;
  grant?: GrantControl;
  env?: Record<string, string>;
  ingestTmpRoot?: string;
}

export async function startWeComChannel(
  fake: FakeWeCom,
  o: WeComChannelOptions = {},
): Promise<WeComUnderTest> {
  const made = new Map<string, number>();
  const machinery = await channelMachinery({
    home: o.home ?? tempHome("wecom"),
    // Unlike the other channels' harnesses, these agents take a steer unless `provider` says not.
    agentFor: (key) => {
      made.set(key, (made.get(key) ?? 0) + 1);
      return (
        o.makeProvider?.(key, made.get(key) ?? 1) ??
        new ScriptedProvider(o.turns?.(key) ?? [], { supportsSteer: true, ...o.provider })
      );
    },
    ...(o.clock ? { storeNow: () => o.clock?.now() ?? 0 } : {}),
  });
  const ctx = testChannelContext<WeComSettings>(wecomChannel, {
    ...machinery,
    section: { allowedUsers: [OWNER, GUEST], owner: OWNER, ...o.wecom },
    env: {
      WECOM_BOT_ID: fake.botId,
      WECOM_SECRET: fake.secret,
      WECOM_WS_URL: fake.wsUrl,
      WECOM_MEDIA_HOSTS: fake.origin,
      ...o.env,
    },
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.grant ? { grant: o.grant } : {}),
    ...(o.ingestTmpRoot ? { pipeline: { ingestTmpRoot: o.ingestTmpRoot } } : {}),
  });
  const running = await startWeCom(ctx, { throttleMs: 0, ...o.overrides });
  const crashable = crashableChannel(machinery, running, async (r) => {
    await r.intake.stop();
    await r.client.close();
  });
  return Object.assign(crashable, { dropLedger: ctx.dropLedger });
}

/** One fake per test and the channels started against it, stopped afterwards. Call at module level. */
export function fakeWeComLab(o: FakeWeComOptions = {}): {
  readonly fake: FakeWeCom;
  channel(c?: WeComChannelOptions): Promise<WeComUnderTest>;
} {
  const lab = fakePerTest<FakeWeCom, WeComUnderTest>({
    name: "the fake",
    start: () => FakeWeCom.start({ lifetimeMs: 60_000, ...o }),
    stop: (fake) => fake.stop(),
  });
  return {
    get fake(): FakeWeCom {
      return lab.fake;
    },
    async channel(c = {}) {
      return lab.stopAfterTest(await startWeComChannel(lab.fake, c));
    },
  };
}
