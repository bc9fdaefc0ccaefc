/** The logging port. Fields must never carry secrets; the gateway backs it with pino. */
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const noop = () => {};
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };

/** A logger that records entries: tests assert on what was logged. */
export class MemoryLogger implements Logger {
  readonly entries: { level: "debug" | "info" | "warn" | "error"; message: string; fields: LogFields }[] = [];
  debug(message: string, fields: LogFields = {}): void {
    this.entries.push({ level: "debug", message, fields });
  }
  info(message: string, fields: LogFields = {}): void {
    this.entries.push({ level: "info", message, fields });
  }
  warn(message: string, fields: LogFields = {}): void {
    this.entries.push({ level: "warn", message, fields });
  }
  error(message: string, fields: LogFields = {}): void {
    this.entries.push({ level: "error", message, fields });
  }
}
