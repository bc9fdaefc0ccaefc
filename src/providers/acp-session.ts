/**
 * PooledSession: one conversation's ACP session on a process borrowed from an AgentPool. It takes
 * a slot (waiting in line when the pool is full), opens the session (session/load of the session
 * it had, when the agent offers it, else session/new with a notice saying the context is gone),
 * routes what the agent sends for it (replayed history flagged as such), and closes it when idle,
 * when the pool reclaims the slot, or when its process dies, remembering what to resume.
 * Layer: providers.
 */
import { stat } from "node:fs/promises";
import {
  type McpServer,
  methods,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionConfigOption,
  type SessionNotification,
} from "@agentclientprotocol/sdk";
import type { TimerHandle, Timers } from "../messaging/base/clock.js";
import { ParleyError } from "../messaging/base/errors.js";
import type { ProviderEvent, SessionResumeCause } from "../messaging/turn/provider-events.js";
import { type AgentConnection, type SessionSink, withStderr } from "./acp-connection.js";
import {
  type AgentCapabilities,
  agentReason,
  asParleyError,
  errorText,
  loadSession,
  newSession,
  type OpenedSession,
} from "./acp-handshake.js";
import { type ProviderLogger, withTimeout } from "./acp-types.js";
import type { AgentLease, AgentPool, LeaseHolder } from "./agent-pool.js";

/** How long session/close may take; the slot is given back either way. */
const CLOSE_TIMEOUT_MS = 5_000;

/** What the provider above hears from its session. */
export interface SessionHandlers {
  /** A session/update; `replay` = history session/load replays (state, never turn output). */
  onUpdate(params: SessionNotification, replay: boolean): void;
  onPermission(params: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse>;
  /** The process died under the session (it resumes on the next turn). */
  onLost(error: ParleyError): void;
  /** Opened (or reopened): the config options it came with. */
  onOpened(configOptions: SessionConfigOption[]): Promise<void>;
  /** A turn or control is in flight: the session is not idle. */
  busy(): boolean;
}

export interface PooledSessionOptions {
  pool: AgentPool;
  cwd: string;
  log: ProviderLogger;
  timers: Timers;
  now: () => number;
  startTimeoutMs: number;
  idleTimeoutMs: number;
  resumeSessionId: string | undefined;
  onSessionId: ((sessionId: string) => void) | undefined;
  /** MCP servers offered to the agent with each session it opens (parley's own tools). */
  mcpServers?: () => McpServer[];
  handlers: SessionHandlers;
}

interface Attached {
  lease: AgentLease;
  sessionId: string;
  sink: SessionSink;
}

export class PooledSession implements LeaseHolder {
  private readonly o: PooledSessionOptions;
  private attached: Attached | undefined;
  private attaching: Promise<void> | undefined;
  /** The agent session to resume when the next one is opened (kept across closes). */
  private knownSessionId: string | undefined;
  /** Why the session was last closed: what a resume notice says. */
  private closedBecause: SessionResumeCause | undefined;
  /** session/load in flight for this id: its replayed history is state, never turn output. */
  private loadingId: string | undefined;
  private cwdChecked = false;
  private closed = false;
  /** Resume notices waiting for the next turn to carry them. */
  private notices: ProviderEvent[] = [];
  private lastActive: number;
  private lastPid: number | undefined;
  private idleTimer: TimerHandle | undefined;

  constructor(o: PooledSessionOptions) {
    this.o = o;
    this.knownSessionId = o.resumeSessionId;
    if (o.resumeSessionId) this.closedBecause = "replaced";
    this.lastActive = o.now();
  }

  get isAttached(): boolean {
    return this.attached !== undefined;
  }

  get sessionId(): string | undefined {
    return this.attached?.sessionId;
  }

  /** The current agent session id, else the one the next turn resumes. */
  get agentSessionId(): string | undefined {
    return this.attached?.sessionId ?? this.knownSessionId;
  }

  get connection(): AgentConnection | undefined {
    return this.attached?.lease.connection;
  }

  get pid(): number | undefined {
    return this.attached?.lease.connection.pid ?? this.lastPid;
  }

  get capabilities(): AgentCapabilities | undefined {
    return this.attached?.lease.connection.capabilities ?? this.o.pool.capabilities;
  }

  /** Sessions sharing this one's process, this one included (0 when it holds no slot). */
  sessionsOnProcess(): number {
    return this.attached?.lease.sessionsOnProcess() ?? 0;
  }

  /** Resume notices for the turn about to run (each is handed out once). */
  takeNotices(): ProviderEvent[] {
    return this.notices.splice(0);
  }

  /** A notice that belongs to a later turn (e.g. one a hidden compaction turn received). */
  keepNotice(event: ProviderEvent): void {
    this.notices.push(event);
  }

  /** Single flight: a slot plus an open session. `wait` false returns without one when the pool is full. */
  async ensure(wait: boolean, onWait?: (position: number) => void): Promise<void> {
    for (;;) {
      if (this.closed) throw new ParleyError("PROVIDER_EXITED", "provider is closed");
      if (this.attached?.lease.connection.alive) return;
      if (this.attached) this.forget(); // its process died while nobody was looking
      if (!this.attaching) {
        const attempt = this.attach(wait, onWait);
        const guarded = attempt.finally(() => {
          if (this.attaching === guarded) this.attaching = undefined;
        });
        this.attaching = guarded;
        await guarded;
        if (!wait || this.attached) return;
        continue;
      }
      await this.attaching;
      if (!wait) return;
    }
  }

  /** Closes the session (session/close when offered) and gives the slot back; it resumes later. */
  async detach(because: SessionResumeCause | "closed"): Promise<void> {
    const at = this.attached;
    if (because === "closed") this.closed = true;
    if (!at) return;
    this.forget();
    if (because !== "closed") this.closedBecause = because;
    const connection = at.lease.connection;
    try {
      if (connection.alive && connection.capabilities?.closeSession) {
        const closing = connection.client.agent.request(methods.agent.session.close, {
          sessionId: at.sessionId,
        });
        closing.catch(() => {});
        await withTimeout(closing, CLOSE_TIMEOUT_MS, this.o.timers);
      }
    } catch (err) {
      this.o.log("debug", "session/close failed", { error: errorText(err) });
    } finally {
      connection.detach(at.sessionId, at.sink);
      at.lease.release();
    }
    this.o.log("info", "agent session closed", { reason: because, pid: connection.pid });
  }

  /** Stops its process outright (it was this session's alone and stopped answering). */
  async kill(): Promise<void> {
    const connection = this.attached?.lease.connection;
    this.forget();
    this.closedBecause = "agent_exited";
    await connection?.terminate();
  }

  /** Gives the slot back without talking to the agent (it is gone, or its pool is being closed). */
  forget(): void {
    const at = this.attached;
    this.attached = undefined;
    this.o.timers.clearTimeout(this.idleTimer);
    if (!at) return;
    at.lease.connection.detach(at.sessionId, at.sink);
    at.lease.release();
  }

  markClosed(): void {
    this.closed = true;
    this.o.timers.clearTimeout(this.idleTimer);
  }

  /** Activity: the idle clock restarts (and is stopped while a turn runs: see pause). */
  touch(): void {
    this.lastActive = this.o.now();
    this.o.timers.clearTimeout(this.idleTimer);
    const ms = this.o.idleTimeoutMs;
    if (ms <= 0 || !this.attached) return;
    this.idleTimer = this.o.timers.setTimeout(() => {
      if (this.isIdle()) void this.detach("idle");
    }, ms);
  }

  /** A turn starts: no idle close under it. */
  pauseIdle(): void {
    this.o.timers.clearTimeout(this.idleTimer);
  }

  /** The turn ended: a conversation waiting in line may take this slot now. */
  turnEnded(): void {
    this.touch();
    this.attached?.lease.idle();
  }

  // ---- LeaseHolder -------------------------------------------------------------------------------

  isIdle(): boolean {
    return this.attached !== undefined && this.attaching === undefined && !this.o.handlers.busy();
  }

  lastActiveAt(): number {
    return this.lastActive;
  }

  async reclaim(): Promise<void> {
    await this.detach("capacity");
  }

  // ---- internals ---------------------------------------------------------------------------------

  private async attach(wait: boolean, onWait?: (position: number) => void): Promise<void> {
    await this.checkCwd();
    const pool = this.o.pool;
    const lease = wait ? await pool.acquire(this, onWait ? { onWait } : {}) : await pool.tryAcquire(this);
    if (!lease) {
      this.o.log("info", "no free agent now; the first prompt waits for one");
      return;
    }
    if (this.closed) {
      lease.release();
      throw new ParleyError("PROVIDER_EXITED", "provider is closed");
    }
    this.lastPid = lease.connection.pid;
    try {
      await this.open(lease);
    } catch (err) {
      lease.release();
      throw err;
    }
  }

  /** session/load of the known session when the agent can, else session/new (and a notice saying so). */
  private async open(lease: AgentLease): Promise<void> {
    const connection = lease.connection;
    const caps = connection.capabilities as AgentCapabilities;
    const sink = this.sinkFor();
    const resumeId = this.knownSessionId;
    const cause = this.closedBecause ?? "replaced";
    let opened: OpenedSession | undefined;
    let fresh: string | undefined;
    if (resumeId !== undefined && caps.loadSession) {
      this.loadingId = resumeId;
      connection.attach(resumeId, sink);
      try {
        opened = await this.bounded(
          loadSession(connection.client, resumeId, this.o.cwd, this.o.mcpServers?.() ?? []),
          "session/load",
          lease,
        );
      } catch (err) {
        connection.detach(resumeId, sink);
        if (!connection.alive) throw connection.lost ?? err;
        this.o.log("warn", "the agent could not load the session; starting a fresh one", {
          error: errorText(err),
        });
        fresh = `the agent could not restore the earlier session (${agentReason(err)})`;
      } finally {
        // After every replayed update has been applied (they arrive before the answer).
        await new Promise<void>((resolve) =>
          connection.afterDispatch(() => {
            this.loadingId = undefined;
            resolve();
          }),
        );
      }
    } else if (resumeId !== undefined) {
      fresh = "this agent cannot restore an earlier session";
    }
    if (!opened) {
      try {
        opened = await this.bounded(
          newSession(connection.client, this.o.cwd, this.o.mcpServers?.() ?? []),
          "session/new",
          lease,
        );
      } catch (err) {
        // An agent that starts but cannot open a session often says why only on stderr.
        throw withStderr(asParleyError(err, "agent rejected session/new"), connection.stderrHead());
      }
      connection.attach(opened.sessionId, sink);
    }
    this.attached = { lease, sessionId: opened.sessionId, sink };
    this.closedBecause = undefined;
    if (resumeId !== undefined) {
      this.notices.push(
        fresh === undefined
          ? {
              type: "session_resume",
              outcome: "restored",
              cause,
              reason: "the earlier conversation was restored",
            }
          : { type: "session_resume", outcome: "fresh", cause, reason: fresh },
      );
    }
    if (opened.sessionId !== this.knownSessionId) {
      this.knownSessionId = opened.sessionId;
      this.o.onSessionId?.(opened.sessionId);
    }
    this.o.log("info", resumeId && !fresh ? "agent session restored" : "agent session started", {
      pid: connection.pid,
      agent: caps.agentName,
      steering: caps.steering,
    });
    await this.o.handlers.onOpened(opened.configOptions);
    this.touch();
  }

  /** A session request bounded by the start timeout, failing with the process's own error if it died. */
  private async bounded<T>(request: Promise<T>, what: string, lease: AgentLease): Promise<T> {
    request.catch(() => {}); // the race below reports it; a late failure has nobody to tell
    const result = await withTimeout(
      request.then((value) => ({ value })),
      this.o.startTimeoutMs,
      this.o.timers,
    ).catch((err: unknown) => {
      throw lease.connection.lost ?? err;
    });
    if (!result) {
      throw new ParleyError(
        "PROVIDER_TIMEOUT",
        `agent did not answer ${what} within ${this.o.startTimeoutMs} ms`,
      );
    }
    return result.value;
  }

  /** Routes for one opening of the session: a stale sink (an earlier opening) hears nothing. */
  private sinkFor(): SessionSink {
    const current = () => this.attached?.sink === sink;
    const sink: SessionSink = {
      onUpdate: (params) => {
        const replay = params.sessionId === this.loadingId;
        if (replay || current()) this.o.handlers.onUpdate(params, replay);
        else this.o.log("debug", "update for a closed session dropped", { sessionId: params.sessionId });
      },
      onPermission: async (params, signal) =>
        current() ? this.o.handlers.onPermission(params, signal) : { outcome: { outcome: "cancelled" } },
      onConnectionLost: (error) => {
        if (!current()) return;
        this.forget();
        this.closedBecause = "agent_exited";
        this.o.handlers.onLost(error);
      },
    };
    return sink;
  }

  private async checkCwd(): Promise<void> {
    if (this.cwdChecked) return;
    // Checked first: a missing cwd makes spawn report ENOENT, which reads as "command not found".
    const isDir = await stat(this.o.cwd).then(
      (s) => s.isDirectory(),
      () => false,
    );
    if (!isDir) {
      throw new ParleyError("PROVIDER_SPAWN_FAILED", `agent working directory does not exist: ${this.o.cwd}`);
    }
    this.cwdChecked = true;
  }
}
