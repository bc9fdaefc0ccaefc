/**
 * The imsg child: spawned by argv (never a shell) as `<cliPath> rpc [--db <dbPath>]`, spoken to
 * through the framing (rpc.ts). Its stderr goes to the debug log, redacted. Closing stdin is the
 * quiescent stop (imsg exits when its input ends); a child that dies on its own is started again
 * with capped backoff, and `onStarted` runs after every start that answered the status snapshot
 * (the watch resubscribes there). The child gets a minimal environment: no secret of the gateway's
 * reaches it.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { Clock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { InboundDrops } from "../messaging/channel/inbound-drops.js";
import { redactAll } from "../messaging/security/redact.js";
import { RpcLink } from "./rpc.js";
import { type ImsgStatus, parseStatus } from "./wire.js";

/** What the child may see of the environment: enough to find itself and its home, nothing secret. */
const CHILD_ENV_KEYS = ["PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TMPDIR"] as const;
/** How long a quiescent stop waits for the child to exit after its stdin closed, before SIGKILL. */
const STOP_GRACE_MS = 3_000;

export interface ImsgClientOptions {
  cliPath: string;
  dbPath?: string | undefined;
  clock: Clock;
  logger: Logger;
  onNotification(method: string, params: unknown): void;
  /** Where a line the link skips is counted; absent only for doctor's probe (it subscribes to nothing). */
  drops?: InboundDrops | undefined;
  /** After every start (the first and each restart) whose status snapshot answered. */
  onStarted(status: ImsgStatus, restarted: boolean): Promise<void>;
  /** Told when the child is up (true) or down (false, with why). */
  onState?(running: boolean, reason?: string): void;
  restartFirstMs?: number;
  restartMaxMs?: number;
  requestTimeoutMs?: number;
}

/** The argv a child is started with (exported for doctor, which runs the same command). */
export function imsgArgv(cliPath: string, dbPath?: string): { file: string; args: string[] } {
  return { file: cliPath, args: ["rpc", ...(dbPath ? ["--db", dbPath] : [])] };
}

export function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const key of CHILD_ENV_KEYS) if (process.env[key] !== undefined) env[key] = process.env[key];
  return env;
}

export class ImsgClient {
  private child: ChildProcessWithoutNullStreams | null = null;
  private link: RpcLink | null = null;
  private stopping = false;
  private backoffMs: number;
  private restartTimer: unknown = null;
  private started = 0;
  private latest: ImsgStatus | null = null;

  constructor(private readonly o: ImsgClientOptions) {
    this.backoffMs = o.restartFirstMs ?? 500;
  }

  /** The latest status snapshot (null before the first answered). */
  get status(): ImsgStatus | null {
    return this.latest;
  }

  /** Spawn and read the status snapshot; rejects when the first start fails (not found, not answering). */
  async start(): Promise<ImsgStatus> {
    return this.launch();
  }

  request(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    if (!this.link) return Promise.reject(new Error("imsg is not running"));
    return this.link.request(method, params);
  }

  /** Quiescent stop: stdin closed, the child given a moment to exit, then killed. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer !== null) this.o.clock.clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.stdin.end();
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  }

  private async launch(): Promise<ImsgStatus> {
    const { file, args } = imsgArgv(this.o.cliPath, this.o.dbPath);
    const child = spawn(file, args, { stdio: ["pipe", "pipe", "pipe"], env: childEnv(), shell: false });
    this.child = child;
    const link = new RpcLink({
      write: (line) => {
        child.stdin.write(`${line}\n`);
      },
      onNotification: (method, params) => this.o.onNotification(method, params),
      drops: this.o.drops,
      clock: this.o.clock,
      ...(this.o.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: this.o.requestTimeoutMs }),
    });
    this.link = link;
    child.stdout.on("data", (chunk: Buffer) => link.feed(chunk));
    // A write after the child died must not crash the gateway: the link reports it as closed.
    child.stdin.on("error", (error) => this.o.logger.debug("imsg: stdin", { error: String(error) }));
    createInterface({ input: child.stderr }).on("line", (line) =>
      this.o.logger.debug("imsg stderr", { line: redactAll(line) }),
    );
    const failed = new Promise<never>((_, reject) => {
      child.once("error", (error) => reject(error));
      child.once("exit", (code, signal) => reject(new Error(`exited (${signal ?? code}) before answering`)));
    });
    child.once("exit", (code, signal) => this.exited(child, link, `exited (${signal ?? code})`));
    child.once("error", (error) => this.exited(child, link, String(error)));
    const status = parseStatus(await Promise.race([link.request("status"), failed]));
    this.latest = status;
    const restarted = this.started > 0;
    this.started += 1;
    this.backoffMs = this.o.restartFirstMs ?? 500;
    this.o.onState?.(true);
    await this.o.onStarted(status, restarted);
    return status;
  }

  private exited(child: ChildProcessWithoutNullStreams, link: RpcLink, reason: string): void {
    link.close(reason);
    if (this.child !== child) return;
    this.child = null;
    this.link = null;
    if (this.stopping) return;
    this.o.onState?.(false, reason);
    this.o.logger.warn(`imsg: ${reason}; restarting in ${this.backoffMs} ms`);
    const wait = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.o.restartMaxMs ?? 30_000);
    this.restartTimer = this.o.clock.setTimeout(() => {
      this.restartTimer = null;
      if (this.stopping) return;
      this.launch().catch((error: unknown) => {
        this.o.logger.warn("imsg: restart failed", { error: String(error) });
        // A child that spawned but never answered is ended; its exit schedules the next try.
        this.child?.kill("SIGKILL");
      });
    }, wait);
  }
}
