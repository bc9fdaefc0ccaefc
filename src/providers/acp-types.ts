/** Options, defaults and small shared helpers of AcpProvider. Layer: providers (messaging types). */
import type { McpServer } from "@agentclientprotocol/sdk";
import { realClock, type Timers } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { AgentPool } from "./agent-pool.js";

export type LogLevel = "debug" | "info" | "warn" | "error";
export type ProviderLogger = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => void;

export interface AcpProviderOptions {
  /** The agent executable, e.g. "gemini" or process.execPath. Resolved through PATH. */
  command: string;
  args?: string[];
  /** Added to (and overriding) parley's own environment. */
  env?: Record<string, string>;
  /**
   * The environment the agent inherits before `env` is layered on (default: parley's own). The
   * gateway passes one without parley's channel secrets, so an agent cannot read a bot token.
   */
  baseEnv?: Readonly<Record<string, string | undefined>>;
  /** Working directory of the agent and of its session; made absolute. Default: process.cwd(). */
  cwd?: string;
  /** A log function, or the messaging Logger port. Fields never carry prompt or answer text. */
  logger?: ProviderLogger | Logger;
  /** An unanswered permission request is rejected after this long. Default 5 minutes. */
  permissionTimeoutMs?: number;
  /** How long cancel() waits for the agent to end the turn before a hard stop. Default 5000. */
  cancelGraceMs?: number;
  /** SIGTERM -> SIGKILL window of a hard stop. Default 2000. */
  killGraceMs?: number;
  /** initialize, and then session/new or session/load, must each finish within this. Default 60000 (npx is slow). */
  startTimeoutMs?: number;
  clientInfo?: { name: string; version: string; title?: string };
  /** Timers for the permission, cancel, startup, idle and silence deadlines (default: real, unref'd). */
  timers?: Timers;
  /** Milliseconds now (default Date.now): when the session was last active. */
  now?: () => number;
  /**
   * The pool of agent processes this session borrows a slot from (shared by every session of the
   * same agent). Absent: a private pool of one process for this provider alone, which close() stops.
   */
  pool?: AgentPool;
  /** An agent session id to resume (session/load) instead of starting a new one. */
  resumeSessionId?: string;
  /** Told each new agent session id (to persist it with the conversation). */
  onSessionId?: (sessionId: string) => void;
  /**
   * The conversation's last messages as one text block, asked for when a session that should have
   * been restored opened fresh instead: the block goes ahead of the prompt, so the agent is not
   * left without the context it lost. Absent, or resolving undefined: nothing is replayed.
   */
  replayContext?: () => Promise<{ text: string; messages: number } | undefined>;
  /**
   * MCP servers offered with every session/new and session/load (parley's send_message and
   * send_file for this conversation). Asked each time a session opens: a token may be per process.
   */
  mcpServers?: () => McpServer[];
  /** Close the agent session after this long without a turn (it resumes on the next). 0 = never (default). */
  idleTimeoutMs?: number;
  /** Emit a `silence` event after this long without agent output during a turn. 0 = never. Default 30000. */
  silenceNoticeMs?: number;
}

export const DEFAULTS = {
  permissionTimeoutMs: 5 * 60_000,
  cancelGraceMs: 5_000,
  killGraceMs: 2_000,
  startTimeoutMs: 60_000,
  silenceNoticeMs: 30_000,
} as const;

/** The ACP version parley speaks; v2 changes session/prompt semantics, so only 1 is accepted. */
export const ACP_PROTOCOL_VERSION = 1;

/** The steering extension (agent-protocols.md): request name and the idle guard. */
export const STEERING_METHOD = "_session/steering";

/** Warnings and errors to stderr, so a default-constructed provider never fails silently. */
export const defaultLogger: ProviderLogger = (level, msg, fields) => {
  if (level === "warn" || level === "error") {
    console.error(`[parley:acp] ${level}: ${msg}`, fields ?? "");
  }
};

export function toLogFunction(logger: ProviderLogger | Logger | undefined): ProviderLogger {
  if (logger === undefined) return defaultLogger;
  if (typeof logger === "function") return logger;
  return (level, msg, fields) => logger[level](msg, fields);
}

/** Resolves with the promise's value, or undefined once `ms` have passed. */
export async function withTimeout<T>(
  promise: Promise<T>,
  ms: number,
  timers: Timers = realClock,
): Promise<T | undefined> {
  let handle: unknown;
  const timeout = new Promise<undefined>((resolve) => {
    handle = timers.setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    timers.clearTimeout(handle);
  }
}
