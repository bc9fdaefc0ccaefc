/**
 * SessionManager: per-session semaphore, the provider pool keyed by session key, steer, the
 * cooperative-then-fatal stop, and the agent session each key resumes (a replacement provider after
 * a failed turn, a crash or a hard stop is seeded with its predecessor's agent session id). Cancel is cooperative first because on a shared runtime a hard kill
 * can take a co-tenant down; escalation happens only after the soft-stop budget passes unacked.
 */

import type { Logger } from "../base/logger.js";
import { silentLogger } from "../base/logger.js";
import type { Release } from "../base/mutex.js";
import { Mutex } from "../base/mutex.js";
import type { AuditSink } from "../security/audit.js";

/** The provider surface SessionManager needs (a Provider satisfies it). */
export interface ManagedProvider {
  start(): Promise<void>;
  hasActiveTurn(): boolean;
  readonly supportsSteer: boolean;
  steer(text: string): Promise<boolean>;
  cancel(opts?: { waitAckTimeout?: number }): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * What a new provider is given: the agent session to resume (the previous provider's, after a
 * failed turn, a crash or a hard stop; or one the caller persisted across a restart), and the
 * callback it reports each new agent session id to.
 */
export interface ProviderSeed {
  resumeSessionId?: string;
  onAgentSessionId: (agentSessionId: string) => void;
}

/**
 * Where a session's agent session id outlives the process (the store): recalled before a session's
 * first provider is created, so a restarted gateway resumes the conversation's agent session.
 */
export interface AgentSessionMemory {
  recall(sessionKey: string): Promise<string | undefined>;
  /** The session was discarded (/new): its agent session must not be resumed after a restart. */
  forget(sessionKey: string): void;
}

export interface SessionManagerOptions<P extends ManagedProvider> {
  createProvider: (sessionKey: string, seed: ProviderSeed) => P;
  /** Told every agent session id a session's provider opens, to persist with the conversation. */
  onAgentSessionId?: (sessionKey: string, agentSessionId: string) => void;
  memory?: AgentSessionMemory;
  /** Soft-stop budget in ms (default 10 s, clamped to [0.5 s, 60 s]). */
  softStopBudgetMs?: number;
  logger?: Logger;
  audit?: AuditSink;
}

/** Method syntax on purpose: a SessionManager<Specific> must still pass as a SessionManager<ManagedProvider>. */
interface CarriedSetting<P> {
  apply(provider: P): Promise<unknown>;
}

export type StopOutcome = "idle" | "cancelled" | "hard_stopped";

const clampBudget = (ms: number) => Math.min(60_000, Math.max(500, ms));

export class SessionManager<P extends ManagedProvider = ManagedProvider> {
  private readonly locks = new Map<string, Mutex>();
  private readonly providers = new Map<string, Promise<P>>();
  // Per session: settings the user chose that a replacement agent must be given again.
  private readonly carried = new Map<string, Map<string, CarriedSetting<P>>>();
  // Per session: the agent session a replacement provider resumes (kept across hard stops).
  private readonly agentSessions = new Map<string, string>();
  // Keys whose persisted agent session was looked up already (or discarded): never looked up again.
  private readonly recalled = new Set<string>();
  private readonly opts: SessionManagerOptions<P>;
  private readonly log: Logger;
  readonly softStopBudgetMs: number;

  constructor(options: SessionManagerOptions<P>) {
    this.opts = options;
    this.log = options.logger ?? silentLogger;
    this.softStopBudgetMs = clampBudget(options.softStopBudgetMs ?? 10_000);
  }

  private lock(key: string): Mutex {
    let m = this.locks.get(key);
    if (!m) {
      m = new Mutex();
      this.locks.set(key, m);
    }
    return m;
  }

  acquire(key: string): Promise<Release> {
    return this.lock(key).acquire();
  }

  tryAcquire(key: string): Release | null {
    return this.lock(key).tryAcquire();
  }

  /** True from acquire to release, INCLUDING post-turn bookkeeping: never a steer gate on its own. */
  isBusy(key: string): boolean {
    return this.locks.get(key)?.locked ?? false;
  }

  /** The pooled provider for a session, started once. A failed start is not cached. */
  provider(key: string): Promise<P> {
    let p = this.providers.get(key);
    if (!p) {
      p = this.create(key);
      this.providers.set(key, p);
      p.catch(() => {
        if (this.providers.get(key) === p) this.providers.delete(key);
      });
    }
    return p;
  }

  private async create(key: string): Promise<P> {
    await this.recall(key);
    const resumeSessionId = this.agentSessions.get(key);
    const created = this.opts.createProvider(key, {
      ...(resumeSessionId !== undefined && { resumeSessionId }),
      onAgentSessionId: (id) => this.noteAgentSession(key, id),
    });
    await created.start();
    await this.restore(key, created);
    return created;
  }

  /** Once per key and process: the agent session a previous process left for this session, if any. */
  private async recall(key: string): Promise<void> {
    const memory = this.opts.memory;
    if (!memory || this.recalled.has(key) || this.agentSessions.has(key)) return;
    this.recalled.add(key);
    try {
      const id = await memory.recall(key);
      if (id !== undefined && !this.agentSessions.has(key)) this.resumeFrom(key, id);
    } catch (error) {
      // A fresh agent session instead (it says so): the conversation goes on.
      this.log.warn("recalling the agent session failed", { session: key, error: String(error) });
    }
  }

  /** The agent session id this session's agent has (or will resume); undefined when none yet. */
  agentSessionId(key: string): string | undefined {
    return this.agentSessions.get(key);
  }

  /**
   * Resume this agent session the next time a provider is created for `key` (e.g. the id persisted
   * with the conversation, after a restart). Has no effect on a provider already running.
   */
  resumeFrom(key: string, agentSessionId: string): void {
    this.agentSessions.set(key, agentSessionId);
  }

  private noteAgentSession(key: string, agentSessionId: string): void {
    if (this.agentSessions.get(key) === agentSessionId) return;
    this.agentSessions.set(key, agentSessionId);
    try {
      this.opts.onAgentSessionId?.(key, agentSessionId);
    } catch (error) {
      this.log.warn("persisting the agent session id failed", { session: key, error: String(error) });
    }
  }

  /**
   * Remember a setting the user chose for this session (e.g. its model) so that a REPLACEMENT agent
   * (after a crash or a hard stop) is given it again before anyone uses it; `evict` hands it to the
   * next conversation's key when told one (`/new`). In memory only: a gateway restart starts agents
   * on their defaults.
   */
  carryOver(key: string, name: string, apply: (provider: P) => Promise<unknown>): void {
    let settings = this.carried.get(key);
    if (!settings) {
      settings = new Map();
      this.carried.set(key, settings);
    }
    settings.set(name, { apply });
  }

  private async restore(key: string, provider: P): Promise<void> {
    for (const [name, setting] of this.carried.get(key) ?? []) {
      try {
        await setting.apply(provider);
      } catch (error) {
        // The agent still works on its default; the user is not blocked by a setting that lapsed.
        this.log.warn("could not restore a session setting on the new agent", {
          session: key,
          setting: name,
          error: String(error),
        });
        this.opts.audit?.log("session_setting_restore", "failed", { session: key, setting: name });
      }
    }
  }

  /** The provider if one is running, without creating one. */
  async existingProvider(key: string): Promise<P | undefined> {
    const p = this.providers.get(key);
    if (!p) return undefined;
    try {
      return await p;
    } catch {
      return undefined;
    }
  }

  async hasActiveTurn(key: string): Promise<boolean> {
    return (await this.existingProvider(key))?.hasActiveTurn() ?? false;
  }

  /** Steer only into a genuinely live turn; otherwise the caller falls through to the queue. */
  async steer(key: string, text: string): Promise<boolean> {
    const provider = await this.existingProvider(key);
    if (!provider?.supportsSteer || !provider.hasActiveTurn()) return false;
    return provider.steer(text);
  }

  /**
   * Cooperative cancel; waits the soft-stop budget for the ack, then escalates to a hard stop with
   * an eager respawn so the next message starts cleanly.
   */
  async stopTurn(key: string, opts: { budgetMs?: number } = {}): Promise<StopOutcome> {
    const provider = await this.existingProvider(key);
    if (!provider?.hasActiveTurn()) return "idle";
    const budget = clampBudget(opts.budgetMs ?? this.softStopBudgetMs);
    let acked = false;
    try {
      acked = await provider.cancel({ waitAckTimeout: budget });
    } catch (error) {
      this.log.warn("cancel failed; escalating", { session: key, error: String(error) });
    }
    if (acked) {
      this.opts.audit?.log("turn_stop", "allowed", { session: key, mode: "cooperative" });
      return "cancelled";
    }
    await this.hardStop(key);
    this.opts.audit?.log("turn_stop", "allowed", { session: key, mode: "hard" });
    return "hard_stopped";
  }

  /** Kill the session's provider and eagerly respawn a fresh one. */
  async hardStop(key: string): Promise<void> {
    const provider = await this.existingProvider(key);
    this.providers.delete(key);
    if (provider) {
      try {
        await provider.close();
      } catch (error) {
        this.log.error("provider close failed", { session: key, error: String(error) });
      }
    }
    // Eager respawn: the next message should not pay the cold start after a kill.
    this.provider(key).catch((error) =>
      this.log.warn("respawn failed", { session: key, error: String(error) }),
    );
  }

  /** Drop a session's provider without respawning (e.g. /new): its agent session is not resumed. */
  async evict(key: string, opts: { carryTo?: string } = {}): Promise<void> {
    const provider = await this.existingProvider(key);
    this.providers.delete(key);
    this.agentSessions.delete(key);
    this.recalled.add(key);
    try {
      this.opts.memory?.forget(key);
    } catch (error) {
      this.log.warn("forgetting the agent session failed", { session: key, error: String(error) });
    }
    // A fresh conversation (/new) keeps what the user chose for the agent (its model), not its context.
    const settings = this.carried.get(key);
    if (settings && opts.carryTo !== undefined && opts.carryTo !== key)
      this.carried.set(opts.carryTo, settings);
    this.carried.delete(key);
    await provider?.close();
  }

  activeKeys(): string[] {
    return [...this.providers.keys()];
  }

  /** Shutdown: every provider closed; agent session ids are kept (a restart resumes them). */
  async closeAll(): Promise<void> {
    const all = [...this.providers.keys()];
    await Promise.allSettled(
      all.map(async (key) => {
        const provider = await this.existingProvider(key);
        this.providers.delete(key);
        await provider?.close();
      }),
    );
  }
}
