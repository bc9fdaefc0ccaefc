/**
 * The gateway's Logger: pino, one JSON line per entry on stderr (stdout carries only the operator's
 * announcements). Log lines carry agent and user text (an agent's stderr, a refused frame, an error
 * quoting a payload), so every string in a line is redacted before it is written: the known secret
 * values parley was given are cut out verbatim, then the shared credential redaction runs. Fields
 * named like secrets are censored as a last backstop.
 */
import pino from "pino";
import type { Logger } from "../messaging/base/logger.js";
import { redactAll } from "../messaging/security/index.js";

export const LOG_SECRET_MARKER = "[redacted]";
/** A nested field deeper than this is written as a marker: a log line is not a data dump. */
const MAX_DEPTH = 6;

export interface LoggerOptions {
  /** Secret values parley holds (bot tokens): removed wherever they appear, whatever their shape. */
  secrets?: readonly string[];
}

export function createLogger(
  level: "debug" | "info" | "warn" | "error",
  destination: NodeJS.WritableStream = process.stderr,
  options: LoggerOptions = {},
): Logger {
  const log = pino(
    {
      level,
      base: { app: "parley" },
      redact: {
        paths: [
          "token",
          "*.token",
          "authorization",
          "*.authorization",
          "password",
          "*.password",
          "secret",
          "*.secret",
          "env",
          "*.env",
        ],
        censor: LOG_SECRET_MARKER,
      },
    },
    destination,
  );
  const scrub = logScrubber(options.secrets ?? []);
  const line = (message: string, fields: Record<string, unknown> | undefined) =>
    [scrub(fields ?? {}) as Record<string, unknown>, scrub(message) as string] as const;
  return {
    debug: (message, fields) => log.debug(...line(message, fields)),
    info: (message, fields) => log.info(...line(message, fields)),
    warn: (message, fields) => log.warn(...line(message, fields)),
    error: (message, fields) => log.error(...line(message, fields)),
  };
}

/** Every string in a value, redacted: known secrets verbatim first, then the shared redaction. */
export function logScrubber(secrets: readonly string[]): (value: unknown) => unknown {
  // Short values would cut ordinary words out of every line; real tokens are long.
  const known = [...new Set(secrets.map((s) => s.trim()).filter((s) => s.length >= 8))].sort(
    (a, b) => b.length - a.length,
  );
  const text = (s: string) =>
    redactAll(known.reduce((acc, secret) => acc.split(secret).join(LOG_SECRET_MARKER), s));
  const walk = (value: unknown, depth: number): unknown => {
    if (typeof value === "string") return text(value);
    if (value instanceof Error) return text(String(value));
    if (value === null || typeof value !== "object") return value;
    if (depth >= MAX_DEPTH) return "[nested]";
    if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = walk(v, depth + 1);
    return out;
  };
  return (value) => walk(value, 0);
}
