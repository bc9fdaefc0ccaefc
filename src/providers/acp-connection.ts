/**
 * AgentConnection: one agent subprocess and its ACP client connection, shared by many sessions.
 * It spawns the agent, runs `initialize` once, and routes what the agent sends to the session it
 * names (session/update in arrival order, session/request_permission), so several AcpProviders can
 * borrow the same process. When the process dies every session on it is told, and only those.
 * Layer: providers (SDK client side + acp-process.ts).
 */
import {
  type ClientConnection,
  client,
  methods,
  ndJsonStream,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
} from "@agentclientprotocol/sdk";
import type { Timers } from "../messaging/base/clock.js";
import { ParleyError } from "../messaging/base/errors.js";
import { redactAll } from "../messaging/security/index.js";
import { type AgentCapabilities, asParleyError, type ClientInfo, initializeAgent } from "./acp-handshake.js";
import { AgentProcess } from "./acp-process.js";
import { type ProviderLogger, withTimeout } from "./acp-types.js";

/** How to launch an agent: what one pool of processes is keyed by. */
export interface AgentSpec {
  command: string;
  args: string[];
  env?: Record<string, string>;
  baseEnv?: Readonly<Record<string, string | undefined>>;
  /** The process's working directory (absolute). */
  cwd: string;
}

/** One session's side of the routing: what the connection calls for that session id. */
export interface SessionSink {
  /** A session/update for this session, on the connection's ordered chain. */
  onUpdate(params: SessionNotification): void;
  onPermission(params: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse>;
  /** The process died or broke the protocol: the session is gone with it. */
  onConnectionLost(error: ParleyError): void;
}

export interface AgentConnectionOptions {
  logger: ProviderLogger;
  timers: Timers;
  startTimeoutMs: number;
  killGraceMs: number;
  clientInfo: ClientInfo;
}

/** Updates for a session id nobody has claimed yet are held (bounded) until it is attached. */
const MAX_HELD_UPDATES = 64;
const MAX_HELD_SESSIONS = 16;

let nextConnectionId = 0;

export class AgentConnection {
  readonly id = ++nextConnectionId;
  readonly spec: AgentSpec;
  private readonly opts: AgentConnectionOptions;
  private proc: AgentProcess | undefined;
  private conn: ClientConnection | undefined;
  private caps: AgentCapabilities | undefined;
  private starting: Promise<AgentCapabilities> | undefined;
  private readonly sinks = new Map<string, SessionSink>();
  /** Held updates of not-yet-attached sessions (session/new's answer can trail its first updates). */
  private readonly held = new Map<string, SessionNotification[]>();
  /** The SDK runs notification handlers concurrently; this chain applies them in arrival order. */
  private chain: Promise<void> = Promise.resolve();
  private lostError: ParleyError | undefined;
  private failStart: ((error: ParleyError) => void) | undefined;
  private terminated: Promise<void> | undefined;
  /** Called once when the process is gone (exit, kill, protocol failure). */
  onLost: ((error: ParleyError) => void) | undefined;

  constructor(spec: AgentSpec, opts: AgentConnectionOptions) {
    this.spec = spec;
    this.opts = opts;
  }

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  /** Resolves once the process is gone (at once if it never started). */
  exited(): Promise<void> {
    return this.proc ? this.proc.exited.then(() => undefined) : Promise.resolve();
  }

  /** Started and not lost: sessions may be opened on it. */
  get alive(): boolean {
    return this.caps !== undefined && this.lostError === undefined && this.terminated === undefined;
  }

  get lost(): ParleyError | undefined {
    return this.lostError;
  }

  get capabilities(): AgentCapabilities | undefined {
    return this.caps;
  }

  /** The SDK connection, for session requests; throws once the process is gone. */
  get client(): ClientConnection {
    if (!this.conn || this.lostError || this.terminated) {
      throw this.lostError ?? new ParleyError("PROVIDER_EXITED", "the agent process is closed");
    }
    return this.conn;
  }

  /** Spawn + initialize, once. A failure carries the agent's first stderr lines, redacted. */
  start(): Promise<AgentCapabilities> {
    this.starting ??= this.doStart();
    return this.starting;
  }

  attach(sessionId: string, sink: SessionSink): void {
    this.sinks.set(sessionId, sink);
    const held = this.held.get(sessionId);
    this.held.delete(sessionId);
    // On the chain, so the held updates are applied before anything that arrives after this call.
    for (const params of held ?? []) this.enqueue(() => sink.onUpdate(params));
  }

  detach(sessionId: string, sink: SessionSink): void {
    if (this.sinks.get(sessionId) === sink) this.sinks.delete(sessionId);
    this.held.delete(sessionId);
  }

  /** Runs `step` on the ordered chain, after every update already received has been applied. */
  enqueue(step: () => void): void {
    this.chain = this.chain.then(step).catch((err: unknown) => {
      this.opts.logger("error", "applying an agent update failed", { error: String(err) });
    });
  }

  /**
   * Runs `step` after every message already received has been applied. The SDK dispatches each
   * message through a chain of async handlers, so a response can overtake the notifications sent
   * before it by a few microtasks; one macrotask lets all of those land on the chain first.
   */
  afterDispatch(step: () => void): void {
    setImmediate(() => this.enqueue(step));
  }

  /**
   * The process's own error once the connection dropped: a closed connection is a symptom, so this
   * waits (bounded) for the exit or protocol failure that caused it. Undefined while it is healthy.
   */
  async lossCause(graceMs: number): Promise<ParleyError | undefined> {
    if (!this.lostError && this.conn?.signal.aborted && this.proc && !this.terminated) {
      await withTimeout(this.proc.exited, graceMs);
    }
    return this.lostError;
  }

  /** Hard stop, idempotent: close the connection, stdin EOF, SIGTERM, SIGKILL after the grace. */
  terminate(): Promise<void> {
    this.terminated ??= (async () => {
      this.failStart?.(new ParleyError("PROVIDER_EXITED", "agent closed during startup"));
      this.conn?.close();
      await this.proc?.terminate(this.opts.killGraceMs);
    })();
    return this.terminated;
  }

  private async doStart(): Promise<AgentCapabilities> {
    let proc: AgentProcess;
    try {
      proc = new AgentProcess({
        command: this.spec.command,
        args: this.spec.args,
        env: this.spec.env,
        ...(this.spec.baseEnv ? { baseEnv: this.spec.baseEnv } : {}),
        cwd: this.spec.cwd,
        logger: this.opts.logger,
        onFatal: (error) => this.onFatal(error),
      });
    } catch (err) {
      // spawn throws synchronously for invalid arguments (e.g. a NUL byte in an arg).
      const error = new ParleyError("PROVIDER_SPAWN_FAILED", `could not start agent "${this.spec.command}"`, {
        cause: err,
      });
      this.lostError = error;
      throw error;
    }
    this.proc = proc;
    this.conn = client({ name: "parley" })
      .onRequest(methods.client.session.requestPermission, ({ params, signal }) =>
        this.onPermission(params, signal),
      )
      .onNotification(methods.client.session.update, ({ params }) => this.enqueue(() => this.route(params)))
      .connect(ndJsonStream(proc.stdin, proc.stdout));
    const guard = new Promise<never>((_, reject) => {
      this.failStart = reject;
      if (this.lostError) reject(this.lostError);
    });
    const timer = this.opts.timers.setTimeout(
      () =>
        this.failStart?.(
          new ParleyError(
            "PROVIDER_TIMEOUT",
            `agent did not answer initialize within ${this.opts.startTimeoutMs} ms`,
          ),
        ),
      this.opts.startTimeoutMs,
    );
    try {
      const caps = await Promise.race([initializeAgent(this.conn, this.opts.clientInfo), guard]);
      if (this.terminated) throw new ParleyError("PROVIDER_EXITED", "agent closed during startup");
      this.caps = caps;
      this.opts.logger("info", "agent process started", {
        pid: proc.pid,
        agent: caps.agentName,
        loadSession: caps.loadSession,
      });
      return caps;
    } catch (err) {
      // A closed connection is a symptom; wait briefly for the exit or spawn error that caused it
      // (which also gives a dying agent a moment to finish its last words on stderr).
      if (!this.lostError && (this.conn.signal.aborted || !(err instanceof ParleyError))) {
        await withTimeout(proc.exited, 500);
      }
      const cause = this.lostError ?? asParleyError(err, "agent handshake failed");
      const error = withStderr(cause, proc.stderrHead);
      this.lostError ??= error;
      this.opts.logger("error", "agent failed to start", {
        command: this.spec.command,
        error: error.message,
      });
      await this.terminate();
      throw error;
    } finally {
      this.opts.timers.clearTimeout(timer);
      this.failStart = undefined;
    }
  }

  /** First stderr lines of the agent, redacted: what a start failure shows besides its error. */
  stderrHead(): string[] {
    return (this.proc?.stderrHead ?? []).map((line) => redactAll(line));
  }

  private route(params: SessionNotification): void {
    const sink = this.sinks.get(params.sessionId);
    if (sink) {
      sink.onUpdate(params);
      return;
    }
    let held = this.held.get(params.sessionId);
    if (!held) {
      if (this.held.size >= MAX_HELD_SESSIONS) {
        const oldest = this.held.keys().next().value;
        if (oldest !== undefined) this.held.delete(oldest);
      }
      held = [];
      this.held.set(params.sessionId, held);
    }
    if (held.length < MAX_HELD_UPDATES) held.push(params);
    else
      this.opts.logger("debug", "update for an unattached session dropped", { sessionId: params.sessionId });
  }

  private async onPermission(
    params: RequestPermissionRequest,
    signal: AbortSignal,
  ): Promise<RequestPermissionResponse> {
    const sink = this.sinks.get(params.sessionId);
    // Nobody holds that session: silence must never approve.
    if (!sink) return { outcome: { outcome: "cancelled" } };
    return sink.onPermission(params, signal);
  }

  /** Spawn failure, non-JSON stdout or process exit: every session on this process is lost. */
  private onFatal(error: ParleyError): void {
    if (this.lostError) {
      this.opts.logger("debug", "agent stopped", { reason: error.message });
      return;
    }
    this.lostError = error;
    if (this.terminated) {
      this.opts.logger("debug", "agent stopped", { reason: error.message });
    } else {
      this.opts.logger("error", "agent failed", { code: error.code, error: error.message, pid: this.pid });
    }
    this.failStart?.(error);
    if (error.code !== "PROVIDER_EXITED") void this.proc?.terminate(this.opts.killGraceMs);
    this.onLost?.(error);
    // Let output the agent wrote before dying reach its sessions first (stdout may lag the exit).
    const flushed = error.code === "PROVIDER_EXITED" && this.conn ? this.conn.closed : Promise.resolve();
    void withTimeout(flushed, 1_000).then(() =>
      this.afterDispatch(() => {
        const sinks = [...this.sinks.values()];
        this.sinks.clear();
        this.held.clear();
        for (const sink of sinks) sink.onConnectionLost(error);
      }),
    );
  }
}

/** The start error plus the agent's first stderr lines, redacted and bounded: why it did not start. */
export function withStderr(error: ParleyError, head: readonly string[]): ParleyError {
  const lines = head.map((l) => redactAll(l).trim()).filter((l) => l !== "");
  if (lines.length === 0) return error;
  const detail = lines.slice(0, 3).join(" | ").slice(0, 300);
  return new ParleyError(error.code, `${error.message}; agent stderr: ${detail}`, { cause: error });
}
