/**
 * Starts the whole Weixin channel (start()) against the iLink fake with scripted agents and the real
 * store: the same wiring the gateway uses, plain fetch on one side of the wire, only iLink faked.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect } from "vitest";
import type { Clock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import type { ChannelContext, GrantControl } from "../../src/messaging/channel/contract.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { ParleyStore } from "../../src/messaging/store/port.js";
import type { PipelineProvider } from "../../src/messaging/turn/pipeline.js";
import type { ScriptedProviderOptions, ScriptedTurn, ScriptStep } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import type { WeixinSettings } from "../../src/weixin/index.js";
import { weixinChannel } from "../../src/weixin/index.js";
import type { RunningWeixin, WeixinStartOverrides } from "../../src/weixin/start.js";
import { start as startWeixin } from "../../src/weixin/start.js";
import type { FakeIlinkOptions } from "../fakes/weixin/server.js";
import { FakeIlink } from "../fakes/weixin/server.js";
import { openTestStore, testChannelContext } from "../helpers/channel-context.js";

export const OWNER = "owner0001@im.wechat";
export const GUEST = "guest0002@im.wechat";
export const STRANGER = "stranger3@im.wechat";

export interface ChannelUnderTest {
  running: RunningWeixin;
  audit: MemoryAuditSink;
  logger: MemoryLogger;
  sessions: SessionManager<PipelineProvider>;
  providers: Map<string, ScriptedProvider>;
  home: string;
  store: ChannelContext["store"];
  parley: ParleyStore;
  stop(): Promise<void>;
}

export interface ChannelOptions {
  weixin?: Record<string, unknown>;
  turns?: (key: string) => (ScriptedTurn | ScriptStep[])[];
  supportsSteer?: boolean;
  provider?: ScriptedProviderOptions;
  home?: string;
  overrides?: WeixinStartOverrides;
  grant?: GrantControl;
  env?: Record<string, string>;
  staleAfterMs?: number;
  clock?: Clock;
}

export async function startChannel(fake: FakeIlink, o: ChannelOptions = {}): Promise<ChannelUnderTest> {
  const home = o.home ?? mkdtempSync(join(tmpdir(), "parley-weixin-"));
  const audit = new MemoryAuditSink();
  const logger = new MemoryLogger();
  const providers = new Map<string, ScriptedProvider>();
  const sessions = new SessionManager<PipelineProvider>({
    logger,
    audit,
    createProvider: (key) => {
      const p = new ScriptedProvider(o.turns?.(key) ?? [], {
        ...o.provider,
        supportsSteer: o.supportsSteer ?? false,
      });
      providers.set(key, p);
      return p;
    },
  });
  const parley = await openTestStore(home);
  const ctx = testChannelContext<WeixinSettings>(weixinChannel, {
    parley,
    section: { allowedUserIds: [OWNER, GUEST], owner: OWNER, ...o.weixin },
    env: { WEIXIN_BOT_TOKEN: fake.token, WEIXIN_API_URL: fake.origin, WEIXIN_CDN_URL: fake.cdnUrl, ...o.env },
    home,
    logger,
    audit,
    sessions,
    ...(o.grant ? { grant: o.grant } : {}),
    ...(o.staleAfterMs !== undefined ? { staleAfterMs: o.staleAfterMs } : {}),
    ...(o.clock ? { clock: o.clock } : {}),
  });
  const running = await startWeixin(ctx, { sendGapMs: 0, ...o.overrides });
  let stopped = false;
  return {
    running,
    audit,
    logger,
    sessions,
    providers,
    home,
    store: ctx.store,
    parley,
    async stop() {
      if (stopped) return;
      stopped = true;
      await running.stop();
      await sessions.closeAll();
      await parley.close();
    },
  };
}

export const text = (t: string): ScriptStep => ({ type: "text", text: t });
export const done: ScriptStep = { type: "complete", stopReason: "end_turn" };

/** One fake per test and the channels started against it, stopped afterwards (the fake last). */
export function fakeIlinkLab(options: FakeIlinkOptions = {}): {
  readonly fake: FakeIlink;
  channel(o?: ChannelOptions): Promise<ChannelUnderTest>;
} {
  let current: FakeIlink | undefined;
  const started: ChannelUnderTest[] = [];
  beforeEach(async () => {
    current = await FakeIlink.start({ lifetimeMs: 30_000, holdMs: 300, ...options });
  });
  afterEach(async () => {
    for (const c of started.splice(0)) await c.stop();
    expect(current?.overflowed).toBe(false);
    expect(current?.authFailures).toBe(0);
    await current?.stop();
    current = undefined;
  });
  return {
    get fake(): FakeIlink {
      if (!current) throw new Error("the fake runs only inside a test");
      return current;
    },
    async channel(o: ChannelOptions = {}): Promise<ChannelUnderTest> {
      const c = await startChannel(this.fake, o);
      started.push(c);
      return c;
    },
  };
}
