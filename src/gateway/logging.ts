/**
 * The gateway's Logger: pino, one JSON line per entry on stderr (stdout carries only the operator's
 * announcements). Fields named like secrets are censored as a backstop; callers never pass secrets.
 */
import pino from "pino";
import type { Logger } from "../messaging/base/logger.js";

export function createLogger(
  level: "debug" | "info" | "warn" | "error",
  destination: NodeJS.WritableStream = process.stderr,
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
        censor: "[redacted]",
      },
    },
    destination,
  );
  return {
    debug: (message, fields) => log.debug(fields ?? {}, message),
    info: (message, fields) => log.info(fields ?? {}, message),
    warn: (message, fields) => log.warn(fields ?? {}, message),
    error: (message, fields) => log.error(fields ?? {}, message),
  };
}
