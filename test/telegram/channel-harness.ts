/**
 * Starts the whole Telegram channel (startTelegram) against the fake Bot API with scripted agents:
 * the same wiring the gateway uses, with only the network boundary faked.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect } from "vitest";
import type { Clock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import type { ChannelContext, GrantControl } from "../../src/messaging/channel/contract.js";
import type { AgentPromptCapabilities } from "../../src/messaging/files/prompt-blocks.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { ParleyStore } from "../../src/messaging/store/port.js";
import type { PipelineProvider } from "../../src/messaging/turn/pipeline.js";
import type { ScriptedProviderOptions, ScriptedTurn, ScriptStep } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import type { TelegramSettings } from "../../src/telegram/index.js";
import { telegramChannel } from "../../src/telegram/index.js";
import type { RunningTelegram, TelegramStartOverrides } from "../../src/telegram/start.js";
import { start as startTelegram } from "../../src/telegram/start.js";
import { FakeTelegram } from "../fakes/telegram/server.js";
import { openTestStore, testChannelContext } from "../helpers/channel-context.js";
import { NO_PACE } from "./helpers.js";

export const OWNER = 42;

export interface ChannelUnderTest {
  running: RunningTelegram;
  audit: MemoryAuditSink;
  logger: MemoryLogger;
  sessions: SessionManager<PipelineProvider>;
  /** Providers by session key, in creation order. */
  providers: Map<string, ScriptedProvider>;
  home: string;
  store: ChannelContext["store"];
  /** The real store in `home` (journal, ledger, history, cursor). */
  parley: ParleyStore;
  stop(): Promise<void>;
}

export interface ChannelOptions {
  telegram?: Record<string, unknown>;
  /** Scripted turns for a session's provider (each session gets its own provider). */
  turns?: (key: string) => (ScriptedTurn | ScriptStep[])[];
  supportsSteer?: boolean;
  /** Further provider options for every session (agent controls: modelMenu, compaction, timers). */
  provider?: ScriptedProviderOptions;
  home?: string;
  overrides?: TelegramStartOverrides & { clock?: Clock };
  grant?: GrantControl;
  queueMode?: "steer" | "queue";
  /** Over the default env (the fake's token and API root). */
  env?: Record<string, string>;
  /** What every session's agent declares it accepts in a prompt (an image block, for instance). */
  promptCapabilities?: AgentPromptCapabilities;
}

export async function startChannel(fake: FakeTelegram, o: ChannelOptions = {}): Promise<ChannelUnderTest> {
  const home = o.home ?? mkdtempSync(join(tmpdir(), "parley-tg-"));
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
      if (o.promptCapabilities) Object.assign(p, { promptCapabilities: o.promptCapabilities });
      providers.set(key, p);
      return p;
    },
  });
  const { clock, ...overrides } = o.overrides ?? {};
  const parley = await openTestStore(home, clock ? { now: () => clock.now() } : {});
  const ctx = testChannelContext<TelegramSettings>(telegramChannel, {
    parley,
    section: { allowedUserIds: [String(OWNER)], pollTimeoutSeconds: 1, ...o.telegram },
    env: { TELEGRAM_BOT_TOKEN: fake.token, TELEGRAM_API_ROOT: fake.apiRoot, ...o.env },
    home,
    logger,
    audit,
    sessions,
    queueMode: o.queueMode ?? "steer",
    ...(clock ? { clock } : {}),
    ...(o.grant ? { grant: o.grant } : {}),
  });
  const running = await startTelegram(ctx, {
    pace: NO_PACE,
    renderer: { throttleMs: 0 },
    ...overrides,
  });
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

/**
 * One fake Bot API per test and the channels started against it, stopped afterwards (the fake last,
 * after checking it never overflowed its bounded logs). Registers the hooks; call at module level.
 */
export function fakeTelegramLab(): {
  readonly fake: FakeTelegram;
  channel(o?: ChannelOptions): Promise<ChannelUnderTest>;
} {
  let current: FakeTelegram | undefined;
  const started: ChannelUnderTest[] = [];
  beforeEach(async () => {
    current = await FakeTelegram.start({ lifetimeMs: 30_000 });
  });
  afterEach(async () => {
    for (const c of started.splice(0)) await c.stop();
    expect(current?.overflowed).toBe(false);
    await current?.stop();
    current = undefined;
  });
  return {
    get fake(): FakeTelegram {
      if (!current) throw new Error("the fake Bot API runs only inside a test");
      return current;
    },
    async channel(o: ChannelOptions = {}): Promise<ChannelUnderTest> {
      const c = await startChannel(this.fake, o);
      started.push(c);
      return c;
    },
  };
}
