/**
 * Audit: every allow/deny decision leaves a record. Fields never carry secrets or model-authored
 * destinations (a URL or path the model wrote is an exfiltration channel into the log); callers pass
 * ids, kinds and reasons. Values are coerced to primitives and long strings are clipped.
 */
import { appendFile, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { clip } from "../text/clip.js";

export type AuditOutcome =
  | "allowed"
  | "denied"
  | "approved"
  | "auto_approved"
  | "dropped"
  | "refused"
  | "granted"
  | "revoked"
  | "expired"
  | "failed"
  | "sent";

export type AuditFields = Record<string, string | number | boolean | null | undefined>;

export interface AuditRecord {
  ts: string;
  operation: string;
  outcome: AuditOutcome;
  fields: Record<string, string | number | boolean | null>;
}

export interface AuditSink {
  log(operation: string, outcome: AuditOutcome, fields?: AuditFields): void;
}

const MAX_FIELD_CHARS = 200;

/** Clip and drop undefined so a record is bounded and JSON-stable. */
export function sanitizeAuditFields(fields: AuditFields = {}): AuditRecord["fields"] {
  const out: AuditRecord["fields"] = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    out[key] = typeof value === "string" ? clip(value, MAX_FIELD_CHARS + 1) : value;
  }
  return out;
}

/** In-memory sink: tests and the conformance suite read `records`. */
export class MemoryAuditSink implements AuditSink {
  readonly records: AuditRecord[] = [];
  constructor(private readonly now: () => Date = () => new Date()) {}
  log(operation: string, outcome: AuditOutcome, fields?: AuditFields): void {
    this.records.push({
      ts: this.now().toISOString(),
      operation,
      outcome,
      fields: sanitizeAuditFields(fields),
    });
  }
  find(operation: string, outcome?: AuditOutcome): AuditRecord[] {
    return this.records.filter(
      (r) => r.operation === operation && (outcome === undefined || r.outcome === outcome),
    );
  }
}

/**
 * JSONL file sink. Writes are queued in order and never block the caller (audit must not stall a
 * turn); a failed write is reported to `onError`, never swallowed. `flush()` awaits the queue.
 */
export class JsonlAuditSink implements AuditSink {
  private chain: Promise<void> = Promise.resolve();
  private dirReady = false;
  constructor(
    readonly path: string,
    private readonly onError: (error: unknown) => void = (error) => {
      process.stderr.write(`parley: audit write failed: ${String(error)}\n`);
    },
    private readonly now: () => Date = () => new Date(),
  ) {}

  log(operation: string, outcome: AuditOutcome, fields?: AuditFields): void {
    const record: AuditRecord = {
      ts: this.now().toISOString(),
      operation,
      outcome,
      fields: sanitizeAuditFields(fields),
    };
    const line = `${JSON.stringify(record)}\n`;
    this.chain = this.chain.then(async () => {
      try {
        if (!this.dirReady) {
          await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
          this.dirReady = true;
        }
        await appendFile(this.path, line, { mode: 0o600 });
      } catch (error) {
        this.onError(error);
      }
    });
  }

  flush(): Promise<void> {
    return this.chain;
  }
}

/** A sink that fans out to several (e.g. the JSONL file and an in-memory ring for /status). */
export class TeeAuditSink implements AuditSink {
  constructor(private readonly sinks: readonly AuditSink[]) {}
  log(operation: string, outcome: AuditOutcome, fields?: AuditFields): void {
    for (const sink of this.sinks) sink.log(operation, outcome, fields);
  }
}
