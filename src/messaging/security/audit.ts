/**
 * Audit: every allow/deny decision leaves a record. Fields never carry secrets or model-authored
 * destinations (a URL or path the model wrote is an exfiltration channel into the log); callers pass
 * ids, kinds and reasons. Values are coerced to primitives and long strings are clipped.
 */
import { appendFile, mkdir, rename, rm, stat } from "node:fs/promises";
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

/** Past this size the JSONL file is rotated (audit.jsonl → .1 → .2 …): strangers cannot fill the disk. */
export const DEFAULT_AUDIT_MAX_BYTES = 10 * 1024 * 1024;
/** Rotated files kept besides the live one. */
export const DEFAULT_AUDIT_KEEP = 3;

/**
 * JSONL file sink. Writes are queued in order and never block the caller (audit must not stall a
 * turn); a failed write is reported to `onError`, never swallowed. `flush()` awaits the queue. The
 * file rotates by size, so its disk use is bounded by (keep + 1) × maxBytes.
 */
export class JsonlAuditSink implements AuditSink {
  private chain: Promise<void> = Promise.resolve();
  private dirReady = false;
  private size: number | undefined;
  private readonly maxBytes: number;
  private readonly keep: number;
  constructor(
    readonly path: string,
    private readonly onError: (error: unknown) => void = (error) => {
      process.stderr.write(`parley: audit write failed: ${String(error)}\n`);
    },
    private readonly now: () => Date = () => new Date(),
    rotation: { maxBytes?: number; keep?: number } = {},
  ) {
    this.maxBytes = rotation.maxBytes ?? DEFAULT_AUDIT_MAX_BYTES;
    this.keep = Math.max(1, rotation.keep ?? DEFAULT_AUDIT_KEEP);
  }

  /** audit.jsonl.{keep-1} → .{keep}, …, audit.jsonl → .1; the oldest falls off. */
  private async rotate(): Promise<void> {
    await rm(`${this.path}.${this.keep}`, { force: true });
    for (let i = this.keep - 1; i >= 1; i--)
      await rename(`${this.path}.${i}`, `${this.path}.${i + 1}`).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
      });
    await rename(this.path, `${this.path}.1`);
    this.size = 0;
  }

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
        this.size ??= await stat(this.path).then(
          (st) => st.size,
          () => 0,
        );
        const bytes = Buffer.byteLength(line);
        if (this.size > 0 && this.size + bytes > this.maxBytes) await this.rotate();
        await appendFile(this.path, line, { mode: 0o600 });
        this.size += bytes;
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
