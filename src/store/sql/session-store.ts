/**
 * The session store over the `session` table. Every row is loaded at open, so reads stay synchronous
 * from memory (they sit on every turn's hot path); each change is written through as an upsert or a
 * delete of the rows it touched, coalesced per tick, and at once at the end of a batch. Writes are
 * serialized: each snapshots the rows as it STARTS, so none is stale. Layer: store.
 */
import type { TimerHandle, Timers } from "../../messaging/base/clock.js";
import { realClock } from "../../messaging/base/clock.js";
import type { Logger } from "../../messaging/base/logger.js";
import { MemorySessionStore } from "../../messaging/session/session-store.js";
import { StoreCorruptError } from "../../messaging/store/errors.js";
import type { ParleyDb } from "./engine.js";
import { sessionFromColumns, sessionToColumns } from "./session-rows.js";

export interface SqlSessionStoreOptions {
  logger?: Logger;
  timers?: Timers;
  /** Coalescing window for unbatched writes; 0 = the changes of one tick go in one transaction. */
  debounceMs?: number;
  /** What a corrupt row's error names and tells the operator to do. */
  location: string;
  repair: string;
}

export class SqlSessionStore extends MemorySessionStore {
  private readonly dirty = new Set<string>();
  private readonly timers: Timers;
  private readonly debounceMs: number;
  private timer: TimerHandle | undefined;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: ParleyDb,
    private readonly options: SqlSessionStoreOptions,
  ) {
    super(options.logger ? { logger: options.logger } : {});
    this.timers = options.timers ?? realClock;
    this.debounceMs = options.debounceMs ?? 0;
    this.state = "new";
  }

  /** Load every row. A row that does not decode refuses the open: dropping it would lose it for good. */
  async open(): Promise<void> {
    if (this.state !== "new") throw new Error(`session store already ${this.state}`);
    const rows = await this.db.selectFrom("session").selectAll().orderBy("session_key").execute();
    for (const columns of rows) {
      let row: ReturnType<typeof sessionFromColumns>;
      try {
        row = sessionFromColumns(columns);
      } catch (error) {
        throw new StoreCorruptError(this.options.location, (error as Error).message, this.options.repair, {
          cause: error,
        });
      }
      this.rows.set(row.sessionKey, row);
    }
    this.state = "open";
  }

  /**
   * Read every row again, keeping only the ones changed here and not yet written. Several gateways
   * share the table, each serving its own conversations from memory: one taking conversations over
   * from a gateway that died must see the rows that one wrote (docs/scale-out.md).
   */
  async refresh(): Promise<number> {
    if (this.state !== "open") return 0;
    const rows = await this.db.selectFrom("session").selectAll().orderBy("session_key").execute();
    let replaced = 0;
    for (const columns of rows) {
      if (this.dirty.has(columns.session_key)) continue;
      let row: ReturnType<typeof sessionFromColumns>;
      try {
        row = sessionFromColumns(columns);
      } catch (error) {
        // A row another gateway wrote that does not decode: the one in memory stays, said loudly.
        this.log.error("session store: a shared row does not decode; kept the one in memory", {
          session: columns.session_key,
          error: String(error),
        });
        continue;
      }
      this.rows.set(row.sessionKey, row);
      replaced += 1;
    }
    return replaced;
  }

  protected override rowTouched(key: string): void {
    this.dirty.add(key);
  }

  protected override changed(): void {
    if (!this.inBatch) this.schedule();
  }

  protected override commit(): Promise<void> {
    return this.writeNow();
  }

  private schedule(): void {
    if (this.timer !== undefined) return;
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      this.writeNow().catch((error: unknown) => {
        // The rows stay dirty: the next change, flush() or close() retries, and flush/close throw.
        this.log.error("session store write failed; will retry", { error: String(error) });
      });
    }, this.debounceMs);
  }

  private writeNow(): Promise<void> {
    if (this.timer !== undefined) {
      this.timers.clearTimeout(this.timer);
      this.timer = undefined;
    }
    const run = async () => {
      if (this.dirty.size === 0) return;
      const keys = [...this.dirty];
      this.dirty.clear();
      // Snapshot now, before the first await: later changes re-mark their keys for the next write.
      const upserts = keys.flatMap((k) => {
        const row = this.rows.get(k);
        return row ? [sessionToColumns(row)] : [];
      });
      const deletes = keys.filter((k) => !this.rows.has(k));
      try {
        await this.db.transaction().execute(async (trx) => {
          for (const columns of upserts) {
            const { session_key: _key, ...rest } = columns;
            await trx
              .insertInto("session")
              .values(columns)
              .onConflict((oc) => oc.column("session_key").doUpdateSet(rest))
              .execute();
          }
          if (deletes.length > 0)
            await trx.deleteFrom("session").where("session_key", "in", deletes).execute();
        });
      } catch (error) {
        for (const k of keys) this.dirty.add(k);
        throw error;
      }
    };
    const next = this.chain.then(run, run);
    // The chain only orders writes; each write's failure reaches its own caller through `next`.
    this.chain = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  /** Write any pending change now and wait for every write in flight. */
  override async flush(): Promise<void> {
    if (this.state === "new") return;
    await this.writeNow();
  }

  override async close(): Promise<void> {
    await this.flush();
    this.state = "closed";
  }
}
