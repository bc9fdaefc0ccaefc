/**
 * The agent subprocess behind AcpProvider: spawn, stdio as web streams, stdout line validation,
 * stderr draining, exit tracking and the stdin-end -> SIGTERM -> SIGKILL escalation.
 * Layer: providers (node:child_process + messaging/errors only; knows nothing about ACP methods).
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { Readable as NodeReadable } from "node:stream";
import { DEFAULT_MAX_MESSAGE_BYTES } from "@agentclientprotocol/sdk";
import { ParleyError } from "../messaging/base/errors.js";
import { type ProviderLogger, withTimeout } from "./acp-types.js";

export interface AgentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface AgentProcessOptions {
  command: string;
  args: string[];
  env: Record<string, string> | undefined;
  /** The environment the agent starts from (default: parley's own). */
  baseEnv?: Readonly<Record<string, string | undefined>>;
  cwd: string;
  logger: ProviderLogger;
  /** First fatal condition: spawn failure, non-JSON stdout, or the process exiting. */
  onFatal: (error: ParleyError) => void;
}

const NEWLINE = 0x0a;
/** How many of the agent's first stderr lines are kept to explain a failed start. */
export const STDERR_HEAD_LINES = 5;
const STDERR_LINE_CHARS = 300;
/** Bounded wait after SIGKILL: a process stuck in uninterruptible sleep must not hang close(). */
const AFTER_KILL_WAIT_MS = 2_000;

export class AgentProcess {
  readonly pid: number | undefined;
  /** stdout after line validation: only JSON object lines pass, each newline-terminated. */
  readonly stdout: ReadableStream<Uint8Array>;
  readonly stdin: WritableStream<Uint8Array>;
  /** Resolves once the process is gone (and reaped), or at once when it never started. */
  readonly exited: Promise<AgentExit>;
  private exitInfo: AgentExit | undefined;
  private readonly child: ChildProcess;
  private readonly opts: AgentProcessOptions;
  private terminating: Promise<AgentExit> | undefined;
  /** The first STDERR_HEAD_LINES non-empty stderr lines (each bounded): why a start failed. */
  readonly stderrHead: string[] = [];

  constructor(opts: AgentProcessOptions) {
    this.opts = opts;
    // Own process group on POSIX so a wrapper (npx, a shell) and its children are stopped together.
    const detached = process.platform !== "win32";
    this.child = spawn(opts.command, opts.args, {
      cwd: opts.cwd,
      env: { ...(opts.baseEnv ?? process.env), ...opts.env },
      stdio: ["pipe", "pipe", "pipe"],
      detached,
      windowsHide: true,
    });
    this.pid = this.child.pid;
    const { stdin, stdout, stderr } = this.child;
    if (!stdin || !stdout || !stderr) {
      throw new ParleyError("PROVIDER_SPAWN_FAILED", `could not open stdio pipes to "${opts.command}"`);
    }
    this.exited = new Promise<AgentExit>((resolve) => {
      this.child.once("exit", (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
        opts.onFatal(
          new ParleyError(
            "PROVIDER_EXITED",
            `agent "${opts.command}" exited (${describeExit(this.exitInfo)})`,
          ),
        );
      });
      this.child.once("error", (err: NodeJS.ErrnoException) => {
        // 'error' with a pid is a failed kill/send on a live process, not a spawn failure.
        if (this.child.pid !== undefined) {
          opts.logger("warn", "agent process error", { error: err.message });
          return;
        }
        this.exitInfo = { code: null, signal: null };
        resolve(this.exitInfo);
        opts.onFatal(spawnError(opts.command, err));
      });
    });
    // A write to a dead agent raises EPIPE on stdin; without a listener Node would crash parley.
    stdin.on("error", (err) => opts.logger("debug", "agent stdin error", { error: err.message }));
    this.stdin = webWritable(stdin);
    this.stdout = NodeReadable.toWeb(stdout).pipeThrough(this.lineValidator()) as ReadableStream<Uint8Array>;
    drainStderr(stderr, opts.logger, (line) => {
      if (this.stderrHead.length < STDERR_HEAD_LINES) this.stderrHead.push(line.slice(0, STDERR_LINE_CHARS));
    });
  }

  get hasExited(): boolean {
    return this.exitInfo !== undefined;
  }

  get exitStatus(): AgentExit | undefined {
    return this.exitInfo;
  }

  /** Hard stop, idempotent: end stdin, SIGTERM, SIGKILL after killGraceMs; resolves once reaped. */
  terminate(killGraceMs: number): Promise<AgentExit> {
    this.terminating ??= this.escalate(killGraceMs);
    return this.terminating;
  }

  private async escalate(killGraceMs: number): Promise<AgentExit> {
    if (this.exitInfo) return this.exitInfo;
    this.child.stdin?.end();
    this.signal("SIGTERM");
    const termed = await withTimeout(this.exited, killGraceMs);
    if (termed) return termed;
    this.opts.logger("warn", "agent ignored SIGTERM; sending SIGKILL", { pid: this.pid, killGraceMs });
    this.signal("SIGKILL");
    const killed = await withTimeout(this.exited, AFTER_KILL_WAIT_MS);
    if (killed) return killed;
    this.opts.logger("error", "agent did not exit after SIGKILL", { pid: this.pid });
    return { code: null, signal: null };
  }

  private signal(sig: NodeJS.Signals): void {
    const pid = this.pid;
    if (pid === undefined || this.exitInfo) return;
    try {
      // Negative pid = the whole process group (see `detached` above).
      process.kill(process.platform === "win32" ? pid : -pid, sig);
    } catch (err) {
      this.opts.logger("debug", "group signal failed; signalling the pid", { sig, error: String(err) });
      try {
        this.child.kill(sig);
      } catch (inner) {
        this.opts.logger("warn", "could not signal agent", { sig, error: String(inner) });
      }
    }
  }

  /**
   * Passes only lines that parse as a JSON object. The SDK answers a non-JSON line with a parse
   * error and drops it, so a broken agent would otherwise leave the turn hanging; here it is fatal.
   */
  private lineValidator(): TransformStream<Uint8Array, Uint8Array> {
    const decoder = new TextDecoder();
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    let failed = false;
    const fail = (why: string, fields: Record<string, unknown>): void => {
      failed = true;
      this.opts.logger("error", "agent wrote a non-protocol line to stdout", fields);
      this.opts.onFatal(new ParleyError("PROVIDER_PROTOCOL", `agent "${this.opts.command}" ${why}`));
    };
    const check = (line: Uint8Array, out: TransformStreamDefaultController<Uint8Array>): void => {
      const text = decoder.decode(line).trim();
      if (text === "" || failed) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        // The preview goes to the log only: an error message may reach a chat.
        fail("wrote non-JSON output on stdout (its protocol channel)", {
          bytes: line.byteLength,
          preview: text.slice(0, 80),
        });
        return;
      }
      out.enqueue(line);
      out.enqueue(Uint8Array.of(NEWLINE));
    };
    const takePending = (tail: Uint8Array): Uint8Array => {
      if (pending.length === 0) return tail;
      const line = new Uint8Array(pendingBytes + tail.byteLength);
      let at = 0;
      for (const part of [...pending, tail]) {
        line.set(part, at);
        at += part.byteLength;
      }
      pending = [];
      pendingBytes = 0;
      return line;
    };
    return new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk, out) => {
        let start = 0;
        let nl = chunk.indexOf(NEWLINE, start);
        while (nl !== -1) {
          check(takePending(chunk.subarray(start, nl)), out);
          start = nl + 1;
          nl = chunk.indexOf(NEWLINE, start);
        }
        if (start < chunk.byteLength) {
          pending.push(chunk.slice(start));
          pendingBytes += chunk.byteLength - start;
          if (pendingBytes > DEFAULT_MAX_MESSAGE_BYTES && !failed) {
            pending = [];
            pendingBytes = 0;
            fail("sent a message larger than the protocol limit", { limit: DEFAULT_MAX_MESSAGE_BYTES });
          }
        }
      },
      flush: (out) => {
        if (pendingBytes > 0) check(takePending(new Uint8Array(0)), out);
      },
    });
  }
}

export function describeExit(exit: AgentExit): string {
  if (exit.signal) return `signal ${exit.signal}`;
  return exit.code === null ? "unknown status" : `code ${exit.code}`;
}

function spawnError(command: string, err: NodeJS.ErrnoException): ParleyError {
  const why =
    err.code === "ENOENT"
      ? "command not found (ENOENT)"
      : err.code === "EACCES"
        ? "permission denied (EACCES)"
        : (err.code ?? "spawn error");
  return new ParleyError("PROVIDER_SPAWN_FAILED", `could not start agent "${command}": ${why}`, {
    cause: err,
  });
}

function webWritable(stdin: Writable): WritableStream<Uint8Array> {
  return new WritableStream<Uint8Array>({
    write: (chunk) =>
      new Promise<void>((resolve, reject) => {
        if (stdin.destroyed || stdin.writableEnded) {
          reject(new Error("agent stdin is closed"));
          return;
        }
        stdin.write(chunk, (err) => (err ? reject(err) : resolve()));
      }),
    close: () => {
      stdin.end();
    },
  });
}

/** stderr is the agent's log: drained so a chatty agent never blocks on a full pipe, never parsed. */
function drainStderr(stderr: Readable, logger: ProviderLogger, onLine: (line: string) => void): void {
  let partial = "";
  stderr.setEncoding("utf8");
  stderr.on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    if (partial.length > 8_192) {
      lines.push(partial);
      partial = "";
    }
    for (const line of lines) {
      if (line.trim() === "") continue;
      logger("debug", "agent stderr", { line });
      onLine(line);
    }
  });
  stderr.on("end", () => {
    if (partial.trim() === "") return;
    logger("debug", "agent stderr", { line: partial });
    onLine(partial);
  });
  stderr.on("error", (err) => logger("debug", "agent stderr error", { error: err.message }));
}
