/**
 * Starts the whole Feishu channel (start()) against the fake with scripted agents and the real store:
 * the same wiring the gateway uses, the real SDK on both sides of the wire, only Feishu faked.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect } from "vitest";
import type { FeishuSettings } from "../../src/feishu/index.js";
import { feishuChannel } from "../../src/feishu/index.js";
import type { FeishuStartOverrides, RunningFeishu } from "../../src/feishu/start.js";
import { start as startFeishu } from "../../src/feishu/start.js";
import type { Clock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import type { ChannelContext, GrantControl } from "../../src/messaging/channel/contract.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import type { RotationPolicy } from "../../src/messaging/session/keys.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { ParleyStore } from "../../src/messaging/store/port.js";
import type { PipelineProvider } from "../../src/messaging/turn/pipeline.js";
import type { ScriptedProviderOptions, ScriptedTurn, ScriptStep } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import type { FakeFeishuOptions } from "../fakes/feishu/server.js";
import { FakeFeishu } from "../fakes/feishu/server.js";
import { openTestStore, testChannelContext } from "../helpers/channel-context.js";

export const OWNER = { openId: "ou_owner000000000000000000000000001", name: "Olivia" };
export const GUEST = { openId: "ou_guest000000000000000000000000002", name: "Gus" };
export const STRANGER = { openId: "ou_stranger0000000000000000000000003", name: "Sam" };
export const GROUP = "oc_group0000000000000000000000000001";

export interface ChannelUnderTest {
  running: RunningFeishu;
  audit: MemoryAuditSink;
  logger: MemoryLogger;
  sessions: SessionManager<PipelineProvider>;
  /** Providers by session key, in creation order. */
  providers: Map<string, ScriptedProvider>;
  home: string;
  store: ChannelContext["store"];
  parley: ParleyStore;
  stop(): Promise<void>;
}

export interface ChannelOptions {
  feishu?: Record<string, unknown>;
  turns?: (key: string) => (ScriptedTurn | ScriptStep[])[];
  supportsSteer?: boolean;
  provider?: ScriptedProviderOptions;
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
  const home = o.home ?? mkdtempSync(join(tmpdir(), "parley-feishu-"));
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
  const ctx = testChannelContext<FeishuSettings>(feishuChannel, {
    parley,
    section: { allowedOpenIds: [OWNER.openId, GUEST.openId], owner: OWNER.openId, ...o.feishu },
    env: {
      FEISHU_APP_ID: fake.appId,
      FEISHU_APP_SECRET: fake.appSecret,
      FEISHU_DOMAIN: fake.origin,
      ...o.env,
    },
    home,
    logger,
    audit,
    sessions,
    ...(o.grant ? { grant: o.grant } : {}),
    ...(o.staleAfterMs !== undefined ? { staleAfterMs: o.staleAfterMs } : {}),
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.rotation ? { rotation: o.rotation } : {}),
  });
  const running = await startFeishu(ctx, { connection: { restartFirstMs: 200 }, ...o.overrides });
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
  let current: FakeFeishu | undefined;
  const started: ChannelUnderTest[] = [];
  beforeEach(async () => {
    current = await FakeFeishu.start({ lifetimeMs: 30_000, ...options });
  });
  afterEach(async () => {
    for (const c of started.splice(0)) await c.stop();
    expect(current?.overflowed).toBe(false);
    await current?.stop();
    current = undefined;
  });
  return {
    get fake(): FakeFeishu {
      if (!current) throw new Error("the fake runs only inside a test");
      return current;
    },
    async channel(o: ChannelOptions = {}): Promise<ChannelUnderTest> {
      const c = await startChannel(this.fake, o);
      started.push(c);
      return c;
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
