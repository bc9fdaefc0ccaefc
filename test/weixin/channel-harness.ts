/**
 * Starts the whole Weixin channel (start()) against the iLink fake with scripted agents and the real
 * store: the same wiring the gateway uses, plain fetch on one side of the wire, only iLink faked.
 */
import { expect } from "vitest";
import type { Clock } from "../../src/messaging/base/clock.js";
import type { ChannelContext, GrantControl } from "../../src/messaging/channel/contract.js";
import type { InboundDropLedger } from "../../src/messaging/channel/inbound-drops.js";
import type { WeixinSettings } from "../../src/weixin/index.js";
import { weixinChannel } from "../../src/weixin/index.js";
import type { RunningWeixin, WeixinStartOverrides } from "../../src/weixin/start.js";
import { start as startWeixin } from "../../src/weixin/start.js";
import type { FakeIlinkOptions } from "../fakes/weixin/server.js";
import { FakeIlink } from "../fakes/weixin/server.js";
import { testChannelContext } from "../helpers/channel-context.js";
import type { ScriptedAgentOptions, StartedChannel } from "../helpers/channel-under-test.js";
import {
  channelMachinery,
  fakePerTest,
  scriptedAgent,
  startedChannel,
  tempHome,
} from "../helpers/channel-under-test.js";

export { done, text } from "../helpers/channel-under-test.js";

export const OWNER = "owner0001@im.wechat";
export const GUEST = "guest0002@im.wechat";
export const STRANGER = "stranger3@im.wechat";

export interface ChannelUnderTest extends StartedChannel<RunningWeixin> {
  store: ChannelContext["store"];
  /** The drop ledger the channel reports to (counts per reason). */
  drops: InboundDropLedger;
}

export interface ChannelOptions extends ScriptedAgentOptions {
  weixin?: Record<string, unknown>;
  home?: string;
  overrides?: WeixinStartOverrides;
  grant?: GrantControl;
  env?: Record<string, string>;
  staleAfterMs?: number;
  clock?: Clock;
}

export async function startChannel(fake: FakeIlink, o: ChannelOptions = {}): Promise<ChannelUnderTest> {
  const home = o.home ?? tempHome("weixin");
  const machinery = await channelMachinery({ home, agentFor: (key) => scriptedAgent(key, o) });
  const ctx = testChannelContext<WeixinSettings>(weixinChannel, {
    ...machinery,
    section: { allowedUserIds: [OWNER, GUEST], owner: OWNER, ...o.weixin },
    env: { WEIXIN_BOT_TOKEN: fake.token, WEIXIN_API_URL: fake.origin, WEIXIN_CDN_URL: fake.cdnUrl, ...o.env },
    ...(o.grant ? { grant: o.grant } : {}),
    ...(o.staleAfterMs !== undefined ? { staleAfterMs: o.staleAfterMs } : {}),
    ...(o.clock ? { clock: o.clock } : {}),
  });
  const running = await startWeixin(ctx, { sendGapMs: 0, ...o.overrides });
  return { ...startedChannel(machinery, running), store: ctx.store, drops: ctx.dropLedger };
}

/** One fake per test and the channels started against it, stopped afterwards (the fake last). */
export function fakeIlinkLab(options: FakeIlinkOptions = {}): {
  readonly fake: FakeIlink;
  channel(o?: ChannelOptions): Promise<ChannelUnderTest>;
} {
  const lab = fakePerTest<FakeIlink, ChannelUnderTest>({
    name: "the fake",
    start: () => FakeIlink.start({ lifetimeMs: 30_000, holdMs: 300, ...options }),
    stop: (fake) => fake.stop(),
    check: (fake) => {
      expect(fake.overflowed).toBe(false);
      expect(fake.authFailures).toBe(0);
    },
  });
  return {
    get fake(): FakeIlink {
      return lab.fake;
    },
    async channel(o: ChannelOptions = {}): Promise<ChannelUnderTest> {
      return lab.stopAfterTest(await startChannel(lab.fake, o));
    },
  };
}
