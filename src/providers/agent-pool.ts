/**
 * AgentPool: a bounded set of agent processes for ONE agent configuration, shared by every session
 * of that agent. ACP lets one connection carry many sessions, so a conversation borrows a slot (a
 * lease) on a process instead of owning one. Sessions are spread over up to `maxProcesses`
 * processes (both cores busy, a crash takes fewer conversations with it), then packed up to
 * `maxSessionsPerProcess` each. Beyond capacity a conversation is never refused: the least recently
 * active IDLE session is reclaimed (closed; it resumes on its next message), and when every slot is
 * busy mid-turn the newcomer waits in line, told its place, for the first slot freed. A process
 * left holding no session exits. A process that dies takes only its own sessions with it.
 * Layer: providers.
 */
import { realClock, type Timers } from "../messaging/base/clock.js";
import { ParleyError } from "../messaging/base/errors.js";
import type { Logger } from "../messaging/base/logger.js";
import { AgentConnection, type AgentSpec } from "./acp-connection.js";
import type { AgentCapabilities, ClientInfo } from "./acp-handshake.js";
import { DEFAULTS, type ProviderLogger, toLogFunction } from "./acp-types.js";

/**
 * Defaults for a 2-core / 24 GB machine running real agents (Claude Code behind claude-agent-acp:
 * ~66 MB per adapter process + ~220 MB per live session):
 * - maxProcesses 4: two per core keeps both cores fed for a single-threaded agent (the demo agent
 *   at 100 conversations), and one crash takes at most a quarter of the live sessions; 4 idle
 *   adapters cost ~260 MB.
 * - maxSessionsPerProcess 16: 64 live sessions = 4 x 66 MB + 64 x 220 MB = ~14.3 GB at worst,
 *   leaving ~10 GB of the 24 for the OS, parley and builds. More conversations than that still get
 *   answers: idle ones are closed and resumed (session/load) when they speak again.
 * - idleTimeoutSeconds 600: a chat reply inside 10 minutes finds its session warm; after that the
 *   ~220 MB go back to the machine and the next message pays a resume of about a second, which a
 *   user coming back after ten minutes does not notice.
 * - silenceNoticeSeconds 30: real agents stream something within seconds when healthy; 30 s of
 *   nothing (an API retry loop lasts ~3 minutes) is when a user starts to wonder, and is told /stop.
 */
export const AGENT_POOL_DEFAULTS = {
  maxProcesses: 4,
  maxSessionsPerProcess: 16,
  idleTimeoutSeconds: 600,
  silenceNoticeSeconds: 30,
} as const;

/** What the pool needs from a session that holds a slot. */
export interface LeaseHolder {
  /** No turn running and nothing in flight: its session may be closed to make room. */
  isIdle(): boolean;
  /** When it last did anything (ms, pool clock): the least recently active idle session goes first. */
  lastActiveAt(): number;
  /** Give the slot back (close its ACP session, release the lease); it resumes on its next message. */
  reclaim(): Promise<void>;
}

/** A slot on one agent process. */
export interface AgentLease {
  readonly connection: AgentConnection;
  /** Give the slot back. Idempotent. */
  release(): void;
  /** The holder just went idle: a conversation waiting in line may take this slot now. */
  idle(): void;
  /** Sessions on this lease's process, this one included. */
  sessionsOnProcess(): number;
}

export interface AcquireOptions {
  /** Called when the conversation has to wait in line (1 = next), and again when its place changes. */
  onWait?: (position: number) => void;
}

export interface AgentPoolStats {
  processes: number;
  sessions: number;
  waiting: number;
  pids: number[];
}

export interface AgentPoolOptions {
  agent: AgentSpec;
  maxProcesses?: number;
  maxSessionsPerProcess?: number;
  logger?: ProviderLogger | Logger;
  timers?: Timers;
  now?: () => number;
  /** initialize must finish within this. Default 60000 (agents launched via npx are slow). */
  startTimeoutMs?: number;
  killGraceMs?: number;
  clientInfo?: ClientInfo;
}

interface Entry {
  readonly connection: AgentConnection;
  readonly leases: Set<Lease>;
  readonly ready: Promise<AgentCapabilities>;
  gone: boolean;
}

interface Waiter {
  readonly holder: LeaseHolder;
  readonly onWait: ((position: number) => void) | undefined;
  resolve(lease: AgentLease): void;
  reject(error: unknown): void;
}

class Lease implements AgentLease {
  released = false;
  reclaiming = false;
  constructor(
    readonly entry: Entry,
    readonly holder: LeaseHolder,
    private readonly pool: AgentPool,
  ) {}
  get connection(): AgentConnection {
    return this.entry.connection;
  }
  release(): void {
    if (this.released) return;
    this.released = true;
    this.pool.onRelease(this);
  }
  idle(): void {
    if (!this.released) this.pool.onIdle(this);
  }
  sessionsOnProcess(): number {
    return this.entry.leases.size;
  }
}

export class AgentPool {
  readonly maxProcesses: number;
  readonly maxSessionsPerProcess: number;
  private readonly opts: AgentPoolOptions;
  private readonly log: ProviderLogger;
  private readonly timers: Timers;
  private readonly entries: Entry[] = [];
  private readonly waiters: Waiter[] = [];
  private caps: AgentCapabilities | undefined;
  private closed = false;
  /** Processes told to exit and not yet reaped: close() waits for them too. */
  private readonly retiring = new Set<Promise<void>>();
  /** Processes lost (exit, protocol failure) but maybe not yet reaped: close() makes sure. */
  private readonly lostEntries = new Set<Entry>();

  constructor(opts: AgentPoolOptions) {
    this.opts = opts;
    this.log = toLogFunction(opts.logger);
    this.timers = opts.timers ?? realClock;
    this.maxProcesses = Math.max(1, Math.floor(opts.maxProcesses ?? AGENT_POOL_DEFAULTS.maxProcesses));
    this.maxSessionsPerProcess = Math.max(
      1,
      Math.floor(opts.maxSessionsPerProcess ?? AGENT_POOL_DEFAULTS.maxSessionsPerProcess),
    );
  }

  get agent(): AgentSpec {
    return this.opts.agent;
  }

  /** What the agent said in `initialize` (the last process that started); undefined before any. */
  get capabilities(): AgentCapabilities | undefined {
    return this.caps;
  }

  stats(): AgentPoolStats {
    const live = this.entries.filter((e) => !e.gone);
    return {
      processes: live.length,
      sessions: live.reduce((n, e) => n + e.leases.size, 0),
      waiting: this.waiters.length,
      pids: live.flatMap((e) => (e.connection.pid === undefined ? [] : [e.connection.pid])),
    };
  }

  /**
   * A slot for `holder`: at once when a process has room (or may be started), after reclaiming an
   * idle session when the pool is full, else in line. Rejects only when the agent cannot start
   * (with its error) or the pool is closed.
   */
  async acquire(holder: LeaseHolder, opts: AcquireOptions = {}): Promise<AgentLease> {
    for (;;) {
      if (this.closed) throw new ParleyError("PROVIDER_EXITED", "the agent pool is closed");
      const entry = this.findSlot();
      if (entry) return this.grant(entry, holder);
      const victim = this.idleVictim();
      if (!victim) break;
      await this.reclaim(victim);
    }
    return new Promise<AgentLease>((resolve, reject) => {
      this.waiters.push({ holder, onWait: opts.onWait, resolve, reject });
      this.log("info", "conversation waits for a free agent", { waiting: this.waiters.length });
      opts.onWait?.(this.waiters.length);
    });
  }

  /** A slot only if one is free (or an idle session can give one up) without waiting in line. */
  async tryAcquire(holder: LeaseHolder): Promise<AgentLease | undefined> {
    for (;;) {
      if (this.closed) throw new ParleyError("PROVIDER_EXITED", "the agent pool is closed");
      const entry = this.findSlot();
      if (entry) return this.grant(entry, holder);
      const victim = this.idleVictim();
      if (!victim) return undefined;
      await this.reclaim(victim);
    }
  }

  /**
   * Starts up to `count` processes now (never past maxProcesses) so the first conversations skip
   * the agent's cold start. A warm process that gets no session within `unusedMs` (> 0) exits, like
   * any process that holds none. Resolves when they answered `initialize`; a start failure is thrown.
   */
  async prewarm(count: number, unusedMs: number): Promise<void> {
    const started: Entry[] = [];
    while (started.length < count && this.entries.length < this.maxProcesses && !this.closed) {
      const entry = this.spawn();
      started.push(entry);
      if (unusedMs > 0) {
        this.timers.setTimeout(() => {
          if (!entry.gone && entry.leases.size === 0) this.retire(entry, "warm but unused");
        }, unusedMs);
      }
    }
    await Promise.all(started.map((e) => e.ready));
  }

  /** Stops every process and refuses further acquires; waiting conversations are rejected. */
  async close(): Promise<void> {
    this.closed = true;
    const error = new ParleyError("PROVIDER_EXITED", "the agent pool is closed");
    for (const waiter of this.waiters.splice(0)) waiter.reject(error);
    const entries = this.entries.splice(0);
    for (const e of entries) e.gone = true;
    const lost = [...this.lostEntries];
    await Promise.allSettled([
      ...[...entries, ...lost].map((e) => e.connection.terminate()),
      ...this.retiring,
    ]);
  }

  // ---- called by leases ------------------------------------------------------------------------

  onRelease(lease: Lease): void {
    const { entry } = lease;
    entry.leases.delete(lease);
    if (this.serveWaiters()) return;
    if (!entry.gone && entry.leases.size === 0) this.retire(entry, "it holds no session");
  }

  onIdle(lease: Lease): void {
    if (this.waiters.length > 0 && !lease.reclaiming) void this.reclaim(lease);
  }

  // ---- internals -------------------------------------------------------------------------------

  /** The least loaded process with room; a new one while under maxProcesses and none is empty. */
  private findSlot(): Entry | undefined {
    let least: Entry | undefined;
    for (const e of this.entries) {
      if (e.gone || e.leases.size >= this.maxSessionsPerProcess) continue;
      if (!least || e.leases.size < least.leases.size) least = e;
    }
    if ((!least || least.leases.size > 0) && this.entries.length < this.maxProcesses) return this.spawn();
    return least;
  }

  private spawn(): Entry {
    const connection = new AgentConnection(this.opts.agent, {
      logger: this.log,
      timers: this.timers,
      startTimeoutMs: this.opts.startTimeoutMs ?? DEFAULTS.startTimeoutMs,
      killGraceMs: this.opts.killGraceMs ?? DEFAULTS.killGraceMs,
      clientInfo: this.opts.clientInfo ?? { name: "parley", version: "0.1.0" },
    });
    const entry: Entry = { connection, leases: new Set(), ready: connection.start(), gone: false };
    connection.onLost = (error) => {
      if (entry.gone) return;
      this.log("warn", "agent process lost; its sessions resume elsewhere on their next message", {
        pid: connection.pid,
        sessions: entry.leases.size,
        error: error.message,
      });
      // Not terminated here: output it wrote before failing must still reach its sessions.
      this.remove(entry);
      const gone = connection.exited().finally(() => this.retiring.delete(gone));
      this.retiring.add(gone);
      this.lostEntries.add(entry);
      void gone.then(() => this.lostEntries.delete(entry));
      this.serveWaiters();
    };
    entry.ready.then(
      (caps) => {
        this.caps = caps;
      },
      () => this.remove(entry),
    );
    this.entries.push(entry);
    return entry;
  }

  private async grant(entry: Entry, holder: LeaseHolder): Promise<AgentLease> {
    const lease = new Lease(entry, holder, this);
    entry.leases.add(lease);
    try {
      await entry.ready;
    } catch (error) {
      lease.released = true;
      entry.leases.delete(lease);
      throw error;
    }
    if (entry.gone) {
      // Died between its start and this grant: try again on another process.
      lease.released = true;
      entry.leases.delete(lease);
      return this.acquire(holder);
    }
    return lease;
  }

  /** Hands free slots to conversations in line; true when at least one was served. */
  private serveWaiters(): boolean {
    let served = false;
    while (this.waiters.length > 0) {
      const entry = this.findSlot();
      if (!entry) break;
      const waiter = this.waiters.shift() as Waiter;
      served = true;
      this.grant(entry, waiter.holder).then(waiter.resolve, waiter.reject);
    }
    if (served) {
      for (const [i, w] of this.waiters.entries()) w.onWait?.(i + 1);
    }
    // Still people in line: idle sessions make room for them.
    for (let i = 0; i < this.waiters.length; i++) {
      const victim = this.idleVictim();
      if (!victim) break;
      void this.reclaim(victim);
    }
    return served;
  }

  private idleVictim(): Lease | undefined {
    let victim: Lease | undefined;
    for (const e of this.entries) {
      if (e.gone) continue;
      for (const lease of e.leases) {
        if (lease.reclaiming || !lease.holder.isIdle()) continue;
        if (!victim || lease.holder.lastActiveAt() < victim.holder.lastActiveAt()) victim = lease;
      }
    }
    return victim;
  }

  private async reclaim(lease: Lease): Promise<void> {
    lease.reclaiming = true;
    this.log("info", "closing an idle session to make room", { pid: lease.connection.pid });
    try {
      await lease.holder.reclaim();
    } catch (error) {
      this.log("warn", "reclaiming an idle session failed", { error: String(error) });
    } finally {
      // Whatever the holder did, the slot is free now.
      lease.release();
    }
  }

  private retire(entry: Entry, why: string): void {
    this.log("info", `agent process exits: ${why}`, { pid: entry.connection.pid });
    this.remove(entry);
    const stopping = entry.connection.terminate().finally(() => this.retiring.delete(stopping));
    this.retiring.add(stopping);
  }

  private remove(entry: Entry): void {
    entry.gone = true;
    const at = this.entries.indexOf(entry);
    if (at >= 0) this.entries.splice(at, 1);
  }
}
