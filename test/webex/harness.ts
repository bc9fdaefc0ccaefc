/**
 * Starts the whole Webex channel (start()) against the loopback fake with scripted agents and the
 * real store: the gateway's wiring with only the network boundary faked.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, vi } from "vitest";
import type { Clock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { ParleyStore } from "../../src/messaging/store/port.js";
import type { PipelineProvider } from "../../src/messaging/turn/pipeline.js";
import type { ScriptedProviderOptions, ScriptedTurn, ScriptStep } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import type { WebexSettings } from "../../src/webex/index.js";
import { webexChannel } from "../../src/webex/index.js";
import type { RunningWebex, WebexStartOverrides } from "../../src/webex/start.js";
import { start as startWebex } from "../../src/webex/start.js";
import { FakeWebex } from "../fakes/webex/server.js";
import { openTestStore, testChannelContext } from "../helpers/channel-context.js";

export const ALICE = "alice@example.com";
export const DM = "room-alice";

export interface WebexUnderTest {
  running: RunningWebex;
  audit: MemoryAuditSink;
  logger: MemoryLogger;
  providers: ScriptedProvider[];
  home: string;
  parley: ParleyStore;
  stop(): Promise<void>;
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
  const home = o.home ?? mkdtempSync(join(tmpdir(), "parley-webex-"));
  const audit = new MemoryAuditSink();
  const logger = new MemoryLogger();
  const providers: ScriptedProvider[] = [];
  const sessions = new SessionManager<PipelineProvider>({
    logger,
    audit,
    createProvider: () => {
      const p = new ScriptedProvider(o.turns ?? [], o.provider ?? {});
      providers.push(p);
      return p;
    },
  });
  const parley = await openTestStore(home);
  const ctx = testChannelContext<WebexSettings>(webexChannel, {
    parley,
    section: { allowedEmails: [ALICE], apiUrl: fake.apiUrl, u2cUrl: fake.u2cUrl, ...o.webex },
    env: { ...o.env, WEBEX_BOT_TOKEN: fake.token },
    home,
    logger,
    audit,
    sessions,
    ...(o.clock ? { clock: o.clock } : {}),
  });
  const running = await startWebex(ctx, { statusStartMs: 0, ...o.overrides });
  let stopped = false;
  return {
    running,
    audit,
    logger,
    providers,
    home,
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

/** Wait until `check` holds (polling the fake; no fixed sleeps). */
export function until(check: () => boolean, what: string, timeout = 8000): Promise<void> {
  return vi.waitFor(
    () => {
      if (!check()) throw new Error(`still waiting for ${what}`);
    },
    { timeout, interval: 10 },
  );
}

/**
 * One fake Webex per test (with Alice's direct room) and the channels started against it, stopped
 * afterwards, the fake last. Registers the hooks; call at module level.
 */
export function webexLab(): {
  readonly fake: FakeWebex;
  channel(o?: WebexOptions): Promise<WebexUnderTest>;
} {
  let current: FakeWebex | undefined;
  const started: WebexUnderTest[] = [];
  beforeEach(async () => {
    current = await new FakeWebex({ lifetimeMs: 30_000 }).start();
    current.addRoom(DM, "direct");
  });
  afterEach(async () => {
    for (const c of started.splice(0)) await c.stop();
    await current?.close();
    current = undefined;
  });
  const fakeNow = (): FakeWebex => {
    if (!current) throw new Error("webexLab: no fake outside a test");
    return current;
  };
  return {
    get fake() {
      return fakeNow();
    },
    async channel(o: WebexOptions = {}) {
      const c = await startWebexChannel(fakeNow(), o);
      started.push(c);
      return c;
    },
  };
}
