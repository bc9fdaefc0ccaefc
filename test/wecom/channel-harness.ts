/**
 * Starts the whole WeCom channel (start()) against the loopback fake with scripted agents and the
 * real store: the gateway's wiring, with only the network boundary faked.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import type { Clock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import type { GrantControl } from "../../src/messaging/channel/contract.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { ParleyStore } from "../../src/messaging/store/port.js";
import type { PipelineProvider } from "../../src/messaging/turn/pipeline.js";
import type { ScriptedProviderOptions, ScriptedTurn, ScriptStep } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import type { WeComSettings } from "../../src/wecom/index.js";
import { wecomChannel } from "../../src/wecom/index.js";
import type { RunningWeCom, WeComStartOverrides } from "../../src/wecom/start.js";
import { start as startWeCom } from "../../src/wecom/start.js";
import type { FakeWeComOptions } from "../fakes/wecom/server.js";
import { FakeWeCom } from "../fakes/wecom/server.js";
import { openTestStore, testChannelContext } from "../helpers/channel-context.js";

export const OWNER = "zhangsan";
export const GUEST = "lisi";

export interface WeComUnderTest {
  running: RunningWeCom;
  audit: MemoryAuditSink;
  logger: MemoryLogger;
  sessions: SessionManager<PipelineProvider>;
  providers: Map<string, ScriptedProvider>;
  home: string;
  parley: ParleyStore;
  stop(): Promise<void>;
  /**
   * The process dies: no more callbacks, the socket dropped, open turns abandoned (never settled);
   * stop() afterwards only releases the test's handles.
   */
  crash(): Promise<void>;
}

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
  const home = o.home ?? mkdtempSync(join(tmpdir(), "parley-wecom-"));
  const audit = new MemoryAuditSink();
  const logger = new MemoryLogger();
  const providers = new Map<string, ScriptedProvider>();
  const made = new Map<string, number>();
  const sessions = new SessionManager<PipelineProvider>({
    logger,
    audit,
    createProvider: (key) => {
      made.set(key, (made.get(key) ?? 0) + 1);
      const p =
        o.makeProvider?.(key, made.get(key) ?? 1) ??
        new ScriptedProvider(o.turns?.(key) ?? [], { supportsSteer: true, ...o.provider });
      providers.set(key, p);
      return p;
    },
  });
  const parley = await openTestStore(home, o.clock ? { now: () => o.clock?.now() ?? 0 } : {});
  const ctx = testChannelContext<WeComSettings>(wecomChannel, {
    parley,
    section: { allowedUsers: [OWNER, GUEST], owner: OWNER, ...o.wecom },
    env: {
      WECOM_BOT_ID: fake.botId,
      WECOM_SECRET: fake.secret,
      WECOM_WS_URL: fake.wsUrl,
      WECOM_MEDIA_HOSTS: fake.origin,
      ...o.env,
    },
    home,
    logger,
    audit,
    sessions,
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.grant ? { grant: o.grant } : {}),
    ...(o.ingestTmpRoot ? { pipeline: { ingestTmpRoot: o.ingestTmpRoot } } : {}),
  });
  const running = await startWeCom(ctx, { throttleMs: 0, ...o.overrides });
  let stopped = false;
  let crashed = false;
  return {
    running,
    audit,
    logger,
    sessions,
    providers,
    home,
    parley,
    async stop() {
      if (stopped) return;
      stopped = true;
      // A crashed process settles nothing: only the test's own handles are released.
      if (!crashed) await running.stop();
      await sessions.closeAll();
      await parley.close();
    },
    async crash() {
      crashed = true;
      await running.intake.stop();
      await running.client.close();
    },
  };
}

export const text = (t: string): ScriptStep => ({ type: "text", text: t });
export const done: ScriptStep = { type: "complete", stopReason: "end_turn" };

/** One fake per test and the channels started against it, stopped afterwards. Call at module level. */
export function fakeWeComLab(o: FakeWeComOptions = {}): {
  readonly fake: FakeWeCom;
  channel(c?: WeComChannelOptions): Promise<WeComUnderTest>;
} {
  let current: FakeWeCom | undefined;
  const started: WeComUnderTest[] = [];
  beforeEach(async () => {
    current = await FakeWeCom.start({ lifetimeMs: 60_000, ...o });
  });
  afterEach(async () => {
    for (const c of started.splice(0)) await c.stop();
    await current?.stop();
    current = undefined;
  });
  return {
    get fake(): FakeWeCom {
      if (!current) throw new Error("no fake running");
      return current;
    },
    async channel(c = {}) {
      if (!current) throw new Error("no fake running");
      const ch = await startWeComChannel(current, c);
      started.push(ch);
      return ch;
    },
  };
}
