/**
 * The imsg child: spawned by argv (never a shell) as `<cliPath> rpc [--db <dbPath>]`, spoken to
 * through the framing (rpc.ts). Its stderr goes to the debug log, redacted. Closing stdin is the
 * quiescent stop (imsg exits when its input ends); a child that dies on its own is started again
 * with capped backoff, and `onStarted` runs after every start whose handshake answered (the watch
 * resubscribes there). imsg's rpc mode has no status method (steipete/imsg Sources/imsg/RPCServer.swift
 * dispatches none), so a start asks two real things: `imsg status --json` once, for the version and
 * the rpc methods the binary lists (`rpc_methods`), and `chats.list` over the new child as the
 * handshake (a child whose database did not open answers every request with an error,
 * Sources/imsg/RPCStartupErrorServer.swift, so the handshake names the reason). The children get a
 * minimal environment: no secret of the gateway's reaches them.
 */
import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { Clock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { InboundDrops } from "../messaging/channel/inbound-drops.js";
import { redactAll } from "../messaging/security/redact.js";
import { RpcLink } from "./rpc.js";
import { type ImsgStatus, parseStatus, UNKNOWN_STATUS } from "./wire.js";

/** What the child may see of the environment: enough to find itself and its home, nothing secret. */
const CHILD_ENV_KEYS = ["PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TMPDIR"] as const;
/** How long a quiescent stop waits for the child to exit after its stdin closed, before SIGKILL. */
const STOP_GRACE_MS = 3_000;
/** `imsg status --json` probes the bridge with a 3 s timeout of its own; past this it is wedged. */
const STATUS_TIMEOUT_MS = 10_000;
/** A status report is one JSON line; anything far larger is not one. */
const STATUS_MAX_BYTES = 1024 * 1024;

export interface ImsgClientOptions {
  cliPath: string;
  dbPath?: string | undefined;
  clock: Clock;
  logger: Logger;
  onNotification(method: string, params: unknown): void;
  /** Where a line the link skips is counted; absent only for doctor's probe (it subscribes to nothing). */
  drops?: InboundDrops | undefined;
  /** After every start (the first and each restart) whose handshake answered. */
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

/** The argv of the capability report (a separate, short-lived run: not part of the rpc mode). */
export function statusArgv(cliPath: string): { file: string; args: string[] } {
  return { file: cliPath, args: ["status", "--json"] };
}

/** `imsg status --json`, parsed; rejects when it cannot run or prints no JSON object. */
export function readStatus(cliPath: string): Promise<ImsgStatus> {
  const { file, args } = statusArgv(cliPath);
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { env: childEnv(), shell: false, timeout: STATUS_TIMEOUT_MS, maxBuffer: STATUS_MAX_BYTES },
      (error, stdout) => {
        if (error) return reject(error);
        try {
          resolve(parseStatus(JSON.parse(String(stdout).trim())));
        } catch (parseError) {
          reject(new Error(`imsg status --json printed no JSON: ${String(parseError)}`));
        }
      },
    );
  });
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

  /** The latest status report (null before the first start). */
  get status(): ImsgStatus | null {
    return this.latest;
  }

  /** Read the status report, spawn and handshake; rejects when the first start fails (not found, not answering). */
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
    const status = await readStatus(this.o.cliPath).catch((error: unknown) => {
      // An install without the report still runs rpc; only the optional signals stay off.
      this.o.logger.warn("imsg: `status --json` failed; typing and read receipts stay off", {
        error: String(error),
      });
      return UNKNOWN_STATUS;
    });
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
    // The smallest real request that needs the database open: the handshake.
    await Promise.race([link.request("chats.list", { limit: 1 }), failed]);
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
