/**
 * Starts the whole Feishu channel (start()) against the fake with scripted agents and the real store:
 * the same wiring the gateway uses, the real SDK on both sides of the wire, only Feishu faked.
 */
import { expect } from "vitest";
import type { FeishuSettings } from "../../src/feishu/index.js";
import { feishuChannel } from "../../src/feishu/index.js";
import type { FeishuStartOverrides, RunningFeishu } from "../../src/feishu/start.js";
import { start as startFeishu } from "../../src/feishu/start.js";
import type { Clock } from "../../src/messaging/base/clock.js";
import type { ChannelContext, GrantControl } from "../../src/messaging/channel/contract.js";
import type { InboundDropLedger } from "../../src/messaging/channel/inbound-drops.js";
import type { RotationPolicy } from "../../src/messaging/session/keys.js";
import type { FakeFeishuOptions } from "../fakes/feishu/server.js";
import { FakeFeishu } from "../fakes/feishu/server.js";
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

export const OWNER = { openId: "ou_owner000000000000000000000000001", name: "Olivia" };
export const GUEST = { openId: "ou_guest000000000000000000000000002", name: "Gus" };
export const STRANGER = { openId: "ou_stranger0000000000000000000000003", name: "Sam" };
export const GROUP = "oc_group0000000000000000000000000001";

export interface ChannelUnderTest extends StartedChannel<RunningFeishu> {
  store: ChannelContext["store"];
  /** The drop ledger the channel reports to (counts per reason). */
  drops: InboundDropLedger;
}

export interface ChannelOptions extends ScriptedAgentOptions {
  feishu?: Record<string, unknown>;
  home?: string;
  overrides?: FeishuStartOverrides;
  grant?: GrantControl;
  env?: Record<string, string>;
  /** An unfinished message older than this is not run again after a restart (default 15 min). */
  staleAfterMs?: number;
  clock?: Clock;
  rotation?: RotationPolicy;
}

export async function startChannel(fake: FakeFeishu, o: ChannelOptions = {}): Promise<ChannelUnderTest> {
  const home = o.home ?? tempHome("feishu");
  const machinery = await channelMachinery({ home, agentFor: (key) => scriptedAgent(key, o) });
  const ctx = testChannelContext<FeishuSettings>(feishuChannel, {
    ...machinery,
    section: { allowedOpenIds: [OWNER.openId, GUEST.openId], owner: OWNER.openId, ...o.feishu },
    env: {
      FEISHU_APP_ID: fake.appId,
      FEISHU_APP_SECRET: fake.appSecret,
      FEISHU_DOMAIN: fake.origin,
      ...o.env,
    },
    ...(o.grant ? { grant: o.grant } : {}),
    ...(o.staleAfterMs !== undefined ? { staleAfterMs: o.staleAfterMs } : {}),
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.rotation ? { rotation: o.rotation } : {}),
  });
  const running = await startFeishu(ctx, { connection: { restartFirstMs: 200 }, ...o.overrides });
  return { ...startedChannel(machinery, running), store: ctx.store, drops: ctx.dropLedger };
}

/** What a user can read in a chat: the bot's messages there, as rendered, in order. */
export function shown(fake: FakeFeishu, chatId?: string): string[] {
  return fake.botMessages(chatId).map((m) => m.visible);
}

/** The p2p chat the fake gives a person's DM. */
export const dmChat = (who: { openId: string }) => `oc_p2p_${who.openId.slice(3)}`;

/**
 * One fake per test and the channels started against it, stopped afterwards (the fake last, after
 * checking it never overflowed its bounded logs). Registers the hooks; call at module level.
 */
export function fakeFeishuLab(options: FakeFeishuOptions = {}): {
  readonly fake: FakeFeishu;
  channel(o?: ChannelOptions): Promise<ChannelUnderTest>;
  /** Started, with the long connection up and ready for events. */
  connected(o?: ChannelOptions): Promise<ChannelUnderTest>;
} {
  const lab = fakePerTest<FakeFeishu, ChannelUnderTest>({
    name: "the fake",
    start: () => FakeFeishu.start({ lifetimeMs: 30_000, ...options }),
    stop: (fake) => fake.stop(),
    check: (fake) => {
      expect(fake.overflowed).toBe(false);
      expect(fake.refused).toBe(0);
    },
  });
  return {
    get fake(): FakeFeishu {
      return lab.fake;
    },
    async channel(o: ChannelOptions = {}): Promise<ChannelUnderTest> {
      return lab.stopAfterTest(await startChannel(lab.fake, o));
    },
    async connected(o: ChannelOptions = {}): Promise<ChannelUnderTest> {
      const before = this.fake.ws.connections;
      const c = await this.channel(o);
      await this.fake.waitFor(
        () => this.fake.ws.connections > before && this.fake.ws.ready.size > 0,
        5000,
        "the long connection",
      );
      return c;
    },
  };
}
