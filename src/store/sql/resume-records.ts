/**
 * Resume records over the `resume_expectation` table, one instance per channel, with the file
 * store's contract: reads are synchronous after ready(); memory publishes only after a durable
 * write; compare-and-set on the version, decided by the database row (not memory), so a newer record
 * always wins. Fail-closed: when the channel's legacy file could not be imported, or the rows cannot
 * be read, the channel is UNREADABLE and every routing decision refuses. Layer: store.
 */
import type { Logger } from "../../messaging/base/logger.js";
import { silentLogger } from "../../messaging/base/logger.js";
import { Mutex } from "../../messaging/base/mutex.js";
import type {
  ExpectationsStatus,
  ExpectationWrite,
  ResumeExpectation,
  ResumeExpectations,
} from "../../messaging/session/resume-expectations.js";
import {
  expectationsRepairHint,
  resumeExpectationsRelPath,
} from "../../messaging/session/resume-expectations.js";
import type { ResumeRecordStore } from "../../messaging/store/port.js";
import type { ParleyDb } from "./engine.js";
import { toNumber } from "./engine.js";

export interface SqlResumeOptions {
  logger?: Logger;
  /** Channels whose legacy JSON file did not decode: problem text per channel (it stays on disk). */
  legacyProblems?: ReadonlyMap<string, string>;
  /** Where the rows live, for the repair hint. */
  location: string;
}

type Change = (prev: ResumeExpectation | undefined) => ResumeExpectation;

class SqlResumeExpectations implements ResumeExpectations {
  private rows = new Map<string, ResumeExpectation>();
  private current: ExpectationsStatus = { state: "unloaded" };
  // One read-modify-write at a time; held only around database I/O, never around chat I/O.
  private readonly mutex = new Mutex();

  constructor(
    private readonly db: ParleyDb,
    readonly channel: string,
    private readonly options: SqlResumeOptions,
    private readonly log: Logger,
  ) {
    // Validates the name the same way the file store does (it appears in repair hints).
    resumeExpectationsRelPath(channel);
  }

  status(): ExpectationsStatus {
    return this.current;
  }

  repairHint(): string {
    if (this.options.legacyProblems?.has(this.channel)) {
      return `${expectationsRepairHint(resumeExpectationsRelPath(this.channel))} It is imported into the store at the next start.`;
    }
    return `Run \`parley doctor\` to check the store at ${this.options.location}; restart once it reports healthy.`;
  }

  ready(): Promise<ExpectationsStatus> {
    if (this.current.state !== "unloaded") return Promise.resolve(this.current);
    return this.mutex.run(() =>
      this.current.state === "unloaded" ? this.load() : Promise.resolve(this.current),
    );
  }

  private async load(): Promise<ExpectationsStatus> {
    const legacy = this.options.legacyProblems?.get(this.channel);
    if (legacy !== undefined) return this.unreadable(`${resumeExpectationsRelPath(this.channel)} ${legacy}`);
    try {
      const rows = await this.db
        .selectFrom("resume_expectation")
        .selectAll()
        .where("channel", "=", this.channel)
        .execute();
      this.rows = new Map(rows.map((r) => [r.conversation, toExpectation(r)]));
    } catch (error) {
      return this.unreadable(`records cannot be read (${String(error)})`);
    }
    this.current = { state: "ready" };
    return this.current;
  }

  private unreadable(problem: string): ExpectationsStatus {
    this.rows = new Map();
    this.current = { state: "unreadable", problem };
    this.log.error("resume records unreadable; all resume routing refuses", {
      channel: this.channel,
      problem,
    });
    return this.current;
  }

  get(conversation: string): ResumeExpectation | undefined {
    if (this.current.state !== "ready") throw new Error(`resume expectations ${this.current.state}`);
    return this.rows.get(conversation);
  }

  entries(): [string, ResumeExpectation][] {
    if (this.current.state !== "ready") throw new Error(`resume expectations ${this.current.state}`);
    return [...this.rows];
  }

  record(conversation: string, target: { key: string; title: string }): Promise<ExpectationWrite> {
    return this.mutate(conversation, (prev) => ({
      key: target.key,
      title: target.title,
      version: (prev?.version ?? 0) + 1,
      retired: false,
    }));
  }

  retire(conversation: string, expectedVersion: number): Promise<ExpectationWrite> {
    return this.mutate(
      conversation,
      (prev) => ({ ...prev!, version: prev!.version + 1, retired: true }),
      expectedVersion,
    );
  }

  adopt(
    conversation: string,
    expectedVersion: number,
    target: { key: string; title: string },
  ): Promise<ExpectationWrite> {
    return this.mutate(
      conversation,
      (prev) => ({ key: target.key, title: target.title, version: prev!.version + 1, retired: false }),
      expectedVersion,
    );
  }

  private mutate(conversation: string, change: Change, expectedVersion?: number): Promise<ExpectationWrite> {
    return this.mutex.run(async (): Promise<ExpectationWrite> => {
      if (this.current.state === "unloaded") await this.load();
      if (this.current.state === "unreadable")
        return { ok: false, reason: "unreadable", problem: this.current.problem };
      let outcome: ExpectationWrite;
      try {
        outcome = await this.db.transaction().execute(async (trx) => {
          const found = await trx
            .selectFrom("resume_expectation")
            .selectAll()
            .where("channel", "=", this.channel)
            .where("conversation", "=", conversation)
            .executeTakeFirst();
          const prev = found ? toExpectation(found) : undefined;
          if (expectedVersion !== undefined && prev?.version !== expectedVersion) {
            return { ok: false, reason: "version_mismatch", current: prev } as const;
          }
          const row = change(prev);
          const values = {
            session_key: row.key,
            title: row.title,
            version: row.version,
            retired: row.retired ? 1 : 0,
          };
          await trx
            .insertInto("resume_expectation")
            .values({ channel: this.channel, conversation, ...values })
            .onConflict((oc) => oc.columns(["channel", "conversation"]).doUpdateSet(values))
            .execute();
          return { ok: true, row } as const;
        });
      } catch (error) {
        this.log.error("resume record write failed; nothing changed", {
          channel: this.channel,
          error: String(error),
        });
        return { ok: false, reason: "write_failed", problem: String(error) };
      }
      // Publish only what is committed; a mismatch also refreshes memory with the newer row.
      const seen = outcome.ok
        ? outcome.row
        : outcome.reason === "version_mismatch"
          ? outcome.current
          : undefined;
      if (seen) this.rows.set(conversation, seen);
      else if (outcome.ok === false && outcome.reason === "version_mismatch") this.rows.delete(conversation);
      return outcome;
    });
  }
}

function toExpectation(r: {
  session_key: string;
  title: string;
  version: number;
  retired: number;
}): ResumeExpectation {
  return {
    key: r.session_key,
    title: r.title,
    version: toNumber(r.version),
    retired: toNumber(r.retired) === 1,
  };
}

export class SqlResumeRecordStore implements ResumeRecordStore {
  private readonly channels = new Map<string, SqlResumeExpectations>();

  constructor(
    private readonly db: ParleyDb,
    private readonly options: SqlResumeOptions,
  ) {}

  /** One instance per channel, so two callers never hold diverging copies of its rows. */
  forChannel(channel: string): ResumeExpectations {
    let records = this.channels.get(channel);
    if (!records) {
      records = new SqlResumeExpectations(
        this.db,
        channel,
        this.options,
        this.options.logger ?? silentLogger,
      );
      this.channels.set(channel, records);
    }
    return records;
  }
}
