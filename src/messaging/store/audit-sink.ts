/**
 * An AuditSink over the store's audit rows. log() stays synchronous and never blocks a turn: records
 * logged in the same tick are queued and written as one batch, in order; a failed write is reported
 * to `onError`, never swallowed. Tee it with the JSONL sink for operators who ship log files.
 * Layer: messaging.
 */
import type { AuditFields, AuditOutcome, AuditRecord, AuditSink } from "../security/audit.js";
import { sanitizeAuditFields } from "../security/audit.js";
import type { AuditStore } from "./port.js";

export class StoreAuditSink implements AuditSink {
  private pending: AuditRecord[] = [];
  private scheduled = false;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Pick<AuditStore, "append">,
    private readonly onError: (error: unknown) => void,
    private readonly now: () => Date = () => new Date(),
  ) {}

  log(operation: string, outcome: AuditOutcome, fields?: AuditFields): void {
    this.pending.push({
      ts: this.now().toISOString(),
      operation,
      outcome,
      fields: sanitizeAuditFields(fields),
    });
    if (this.scheduled) return;
    this.scheduled = true;
    this.chain = this.chain.then(() => this.drain());
  }

  private async drain(): Promise<void> {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    try {
      await this.store.append(batch);
    } catch (error) {
      this.onError(error);
    }
  }

  /** Resolves once every record logged so far has been written (or its failure reported). */
  flush(): Promise<void> {
    return this.chain;
  }
}
