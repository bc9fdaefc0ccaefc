/**
 * What every channel harness wires the same way around its channel's start(): the memory sinks, a
 * SessionManager whose sessions each get a scripted agent, the real store in a data home, stopping
 * all of it once, one wire-level fake per test, and bounded waits for what the fake shows. A harness
 * adds only its platform's part: the section and env pointing at its fake, its start overrides, and
 * how its users talk and what they see.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, vi } from "vitest";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import type { AgentPromptCapabilities } from "../../src/messaging/files/prompt-blocks.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { ParleyStore } from "../../src/messaging/store/port.js";
import type { PipelineProvider } from "../../src/messaging/turn/pipeline.js";
import type { ScriptedProviderOptions, ScriptedTurn, ScriptStep } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { openTestStore } from "./channel-context.js";

/** The two script steps nearly every turn is made of. */
export const text = (t: string): ScriptStep => ({ type: "text", text: t });
export const done: ScriptStep = { type: "complete", stopReason: "end_turn" };

/** A fresh data home in the temp folder, named for what uses it (`parley-<name>-XXXXXX`). */
export function tempHome(name: string): string {
  return mkdtempSync(join(tmpdir(), `parley-${name}-`));
}

/** How each session's scripted agent is made. */
export interface ScriptedAgentOptions {
  /** Scripted turns for a session's provider (each session gets its own provider). */
  turns?: (key: string) => (ScriptedTurn | ScriptStep[])[];
  /** Whether the agent takes a steer mid-turn (default: it does not). */
  supportsSteer?: boolean;
  /** Further provider options for every session (agent controls: modelMenu, compaction, timers). */
  provider?: ScriptedProviderOptions;
  /** What every session's agent declares it accepts in a prompt (an image block, for instance). */
  promptCapabilities?: AgentPromptCapabilities;
}

/** The scripted agent for one session, from the harness's options. */
export function scriptedAgent(key: string, o: ScriptedAgentOptions): ScriptedProvider {
  const p = new ScriptedProvider(o.turns?.(key) ?? [], {
    ...o.provider,
    supportsSteer: o.supportsSteer ?? false,
  });
  if (o.promptCapabilities) Object.assign(p, { promptCapabilities: o.promptCapabilities });
  return p;
}

/** The shared machinery a harness hands testChannelContext (spread it in) before starting its channel. */
export interface ChannelMachinery {
  home: string;
  audit: MemoryAuditSink;
  logger: MemoryLogger;
  sessions: SessionManager<PipelineProvider>;
  /** Providers by session key, in creation order (a session started again maps to its latest). */
  providers: Map<string, ScriptedProvider>;
  /** The real store in `home` (journal, ledger, history, cursor). */
  parley: ParleyStore;
}

export async function channelMachinery(o: {
  home: string;
  /** The agent for a session key, called each time the SessionManager starts one. */
  agentFor: (key: string) => ScriptedProvider;
  /** The store's clock (absent: real time). */
  storeNow?: () => number;
}): Promise<ChannelMachinery> {
  const audit = new MemoryAuditSink();
  const logger = new MemoryLogger();
  const providers = new Map<string, ScriptedProvider>();
  const sessions = new SessionManager<PipelineProvider>({
    logger,
    audit,
    createProvider: (key) => {
      const p = o.agentFor(key);
      providers.set(key, p);
      return p;
    },
  });
  const parley = await openTestStore(o.home, o.storeNow ? { now: o.storeNow } : {});
  return { home: o.home, audit, logger, sessions, providers, parley };
}

/**
 * One scripted agent behind every session (the Slack, Discord and Teams stacks' way), with the
 * session keys it was started for, in order. Its SessionManager has no sinks of its own.
 */
export function oneAgentForEverySession(o: {
  turns?: (ScriptedTurn | ScriptStep[])[];
  provider?: ScriptedProviderOptions;
}): {
  provider: ScriptedProvider;
  startedKeys: string[];
  sessions: SessionManager<PipelineProvider>;
} {
  const provider = new ScriptedProvider(o.turns ?? [], o.provider ?? {});
  const startedKeys: string[] = [];
  const sessions = new SessionManager<PipelineProvider>({
    createProvider: (key) => {
      startedKeys.push(key);
      return provider;
    },
  });
  return { provider, startedKeys, sessions };
}

/** A channel started on the machinery, as tests drive it. */
export interface StartedChannel<R> extends ChannelMachinery {
  running: R;
  /** Stops the channel, then its agents, then its store; a second call does nothing. */
  stop(): Promise<void>;
}

/** A started channel that can also die like a killed process. */
export interface CrashableChannel<R> extends StartedChannel<R> {
  /**
   * The process dies: no more messages taken, the connection dropped, open turns abandoned (never
   * settled); stop() afterwards only releases the test's handles (its agents and store).
   */
  crash(): Promise<void>;
}

export function startedChannel<R extends { stop(): Promise<void> }>(
  m: ChannelMachinery,
  running: R,
): StartedChannel<R> {
  return { ...m, running, stop: stopOnce(m, running, () => false) };
}

/** `kill` is what dying does to this channel: stop taking messages and drop the connection. */
export function crashableChannel<R extends { stop(): Promise<void> }>(
  m: ChannelMachinery,
  running: R,
  kill: (running: R) => Promise<void>,
): CrashableChannel<R> {
  let crashed = false;
  return {
    ...m,
    running,
    stop: stopOnce(m, running, () => crashed),
    async crash() {
      crashed = true;
      await kill(running);
    },
  };
}

function stopOnce(
  m: ChannelMachinery,
  running: { stop(): Promise<void> },
  crashed: () => boolean,
): () => Promise<void> {
  let stopped = false;
  return async () => {
    if (stopped) return;
    stopped = true;
    // A crashed channel's turns are abandoned, never settled: only its agents and store close.
    if (!crashed()) await running.stop();
    await m.sessions.closeAll();
    await m.parley.close();
  };
}

/**
 * One wire-level fake per test and the channels started against it, stopped after the test (the fake
 * last, once `check` has looked at it: its bounded logs never overflowed, say). Registers the hooks;
 * call at module level.
 */
export function fakePerTest<F, C extends { stop(): Promise<void> }>(o: {
  /** What the fake is called in the error for using it outside a test. */
  name: string;
  start(): Promise<F>;
  stop(fake: F): Promise<void>;
  check?(fake: F): void;
}): { readonly fake: F; stopAfterTest(channel: C): C } {
  let current: F | undefined;
  const started: C[] = [];
  beforeEach(async () => {
    current = await o.start();
  });
  afterEach(async () => {
    for (const c of started.splice(0)) await c.stop();
    if (current !== undefined) {
      o.check?.(current);
      await o.stop(current);
    }
    current = undefined;
  });
  return {
    get fake(): F {
      if (current === undefined) throw new Error(`${o.name} runs only inside a test`);
      return current;
    },
    stopAfterTest(channel: C): C {
      started.push(channel);
      return channel;
    },
  };
}

/** Wait (bounded, polling every 10 ms; no fixed sleeps) until `check` holds, or fail naming `what`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeout = 8_000,
): Promise<void> {
  await vi.waitFor(
    async () => {
      if (!(await check())) throw new Error(`still waiting for ${what}`);
    },
    { timeout, interval: 10 },
  );
}

/**
 * Wait (bounded) until some line a user could read matches `pattern` (a string: contains it); the
 * failure lists every line shown so far.
 */
export async function untilShown(visible: () => string[], pattern: RegExp | string): Promise<void> {
  await vi.waitFor(
    () => {
      const all = visible();
      const hit =
        typeof pattern === "string" ? all.some((v) => v.includes(pattern)) : all.some((v) => pattern.test(v));
      if (!hit) throw new Error(`not shown yet: ${pattern}\n${all.join("\n---\n")}`);
    },
    { timeout: 8000, interval: 10 },
  );
}
