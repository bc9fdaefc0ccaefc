/**
 * Repeated refusals and denials, aggregated: every message from an unknown sender is refused and audited, so a
 * stranger (or a bot in a group) could otherwise grow the audit log by one row per message. The first
 * refusal of a sender in a window is written at once (the operator sees it immediately); the rest of
 * that window is counted and written as ONE row with the count when the window closes. Grants and
 * every other outcome pass through untouched: only the flood-prone kind is aggregated.
 */
import type { Timers } from "../base/clock.js";
import type { AuditFields, AuditOutcome, AuditSink } from "./audit.js";
import { sanitizeAuditFields } from "./audit.js";

export const DEFAULT_DENIAL_WINDOW_MS = 60_000;
/** The outcomes a stranger can cause at will, message after message. */
const AGGREGATED: ReadonlySet<AuditOutcome> = new Set<AuditOutcome>(["denied", "refused", "dropped"]);
/** Distinct senders tracked per window; past it, further senders' refusals pass through unaggregated. */
const MAX_TRACKED = 10_000;

interface Window {
  operation: string;
  outcome: AuditOutcome;
  fields: AuditFields;
  repeated: number;
}

/**
 * Records fold only when they would read as the same row: same operation, outcome and every field
 * (as written, keys sorted). A fixed list of fields would fold refusals apart in what the list
 * leaves out (a Direct Line and a Web Chat activity refused alike under one row); a flood still
 * folds, because a sender repeating itself repeats its fields. Callers keep per-frame values (a
 * message id) out of refusal fields, or every frame would be a row of its own.
 */
function foldingKey(operation: string, outcome: AuditOutcome, fields: AuditFields | undefined): string {
  const sorted = Object.entries(sanitizeAuditFields(fields)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([operation, outcome, sorted]);
}

export class DenialWindowAuditSink implements AuditSink {
  private readonly open = new Map<string, Window>();
  private timer: unknown = null;

  constructor(
    private readonly inner: AuditSink,
    private readonly timers: Timers,
    private readonly windowMs = DEFAULT_DENIAL_WINDOW_MS,
  ) {}

  log(operation: string, outcome: AuditOutcome, fields?: AuditFields): void {
    if (!AGGREGATED.has(outcome) || this.open.size >= MAX_TRACKED) {
      this.inner.log(operation, outcome, fields);
      return;
    }
    const key = foldingKey(operation, outcome, fields);
    const current = this.open.get(key);
    if (current) {
      current.repeated += 1;
      return;
    }
    this.open.set(key, { operation, outcome, fields: { ...fields }, repeated: 0 });
    this.inner.log(operation, outcome, fields);
    this.timer ??= this.timers.setTimeout(() => this.close(), this.windowMs);
  }

  /** Write the counts of the window and start a new one; also called at shutdown. */
  close(): void {
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
    const windows = [...this.open.values()];
    this.open.clear();
    for (const w of windows)
      if (w.repeated > 0)
        this.inner.log(w.operation, w.outcome, {
          ...w.fields,
          repeated: w.repeated,
          window_s: this.windowMs / 1000,
        });
  }
}
