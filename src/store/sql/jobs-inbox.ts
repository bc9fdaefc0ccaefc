/**
 * Scheduled prompts (`scheduled_job`) and the channel server's inbox (`inbox`). Both are small: the
 * scheduler holds its jobs in memory and writes each change through; the inbox is appended to and
 * read by conversation. Layer: store.
 */
import type {
  InboxEntry,
  InboxStore,
  JobDestination,
  JobSchedule,
  JobStore,
  JsonValue,
  ScheduledJob,
} from "../../messaging/store/port.js";
import type { ParleyDb } from "./engine.js";
import { toNumber } from "./engine.js";
import type { InboxTable, ScheduledJobTable } from "./schema.js";

type InboxRow = Omit<InboxTable, "id"> & { id: number | string };

function checkJob(job: ScheduledJob): void {
  // Each of these makes a row the scheduler could never run or anyone cancel.
  if (job.id === "" || job.channel === "" || job.conversationKey === "")
    throw new RangeError("jobs: id, channel and conversation must not be empty");
  if (!Number.isSafeInteger(job.nextRunMs)) throw new RangeError(`jobs: invalid next run ${job.nextRunMs}`);
  if (
    job.schedule.kind === "every" &&
    !(Number.isSafeInteger(job.schedule.everyMs) && job.schedule.everyMs > 0)
  )
    throw new RangeError(`jobs: invalid interval ${job.schedule.everyMs}`);
}

function jobRow(job: ScheduledJob): ScheduledJobTable {
  return {
    id: job.id,
    channel: job.channel,
    conversation_key: job.conversationKey,
    session_key: job.sessionKey,
    user_id: job.userId,
    deliver_to: JSON.stringify(job.deliverTo),
    address: JSON.stringify(job.address),
    prompt: job.prompt,
    schedule_kind: job.schedule.kind,
    every_ms: job.schedule.kind === "every" ? job.schedule.everyMs : null,
    at_ms: job.schedule.kind === "at" ? job.schedule.atMs : null,
    next_run_ms: job.nextRunMs,
    created_ms: job.createdMs,
    runs: job.runs,
    running: job.running,
  };
}

function scheduleOf(r: ScheduledJobTable): JobSchedule {
  return r.schedule_kind === "every"
    ? { kind: "every", everyMs: toNumber(r.every_ms) }
    : { kind: "at", atMs: toNumber(r.at_ms) };
}

function jobOf(r: ScheduledJobTable): ScheduledJob {
  return {
    id: r.id,
    channel: r.channel,
    conversationKey: r.conversation_key,
    sessionKey: r.session_key,
    userId: r.user_id,
    deliverTo: JSON.parse(r.deliver_to) as JobDestination,
    address: JSON.parse(r.address) as JsonValue,
    prompt: r.prompt,
    schedule: scheduleOf(r),
    nextRunMs: toNumber(r.next_run_ms),
    createdMs: toNumber(r.created_ms),
    runs: toNumber(r.runs),
    running: r.running === null ? null : toNumber(r.running),
  };
}

export class SqlJobStore implements JobStore {
  constructor(private readonly db: ParleyDb) {}

  async save(job: ScheduledJob): Promise<void> {
    checkJob(job);
    const { id: _id, ...values } = jobRow(job);
    await this.db
      .insertInto("scheduled_job")
      .values(jobRow(job))
      .onConflict((oc) => oc.column("id").doUpdateSet(values))
      .execute();
  }

  async list(): Promise<ScheduledJob[]> {
    const rows = await this.db
      .selectFrom("scheduled_job")
      .selectAll()
      .orderBy("created_ms")
      .orderBy("id")
      .execute();
    return rows.map(jobOf);
  }

  async remove(id: string): Promise<boolean> {
    const result = await this.db.deleteFrom("scheduled_job").where("id", "=", id).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}

function entryOf(r: InboxRow): InboxEntry {
  return {
    id: toNumber(r.id),
    conversationKey: r.conversation_key,
    channel: r.channel,
    address: JSON.parse(r.address) as JsonValue,
    direction: r.direction === "out" ? "out" : "in",
    userId: r.user_id,
    text: r.text,
    attachments: JSON.parse(r.attachments) as string[],
    platformMessageId: r.platform_message_id,
    turnId: r.turn_id,
    atMs: toNumber(r.at_ms),
    handled: toNumber(r.handled) === 1,
  };
}

export class SqlInboxStore implements InboxStore {
  constructor(private readonly db: ParleyDb) {}

  async add(entry: Omit<InboxEntry, "id" | "handled">): Promise<number> {
    if (entry.conversationKey === "") throw new RangeError("inbox: conversation must not be empty");
    const row = await this.db
      .insertInto("inbox")
      .values({
        conversation_key: entry.conversationKey,
        channel: entry.channel,
        address: JSON.stringify(entry.address),
        direction: entry.direction,
        user_id: entry.userId,
        text: entry.text,
        attachments: JSON.stringify(entry.attachments),
        platform_message_id: entry.platformMessageId,
        turn_id: entry.turnId,
        at_ms: entry.atMs,
        handled: 0,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    return toNumber(row.id);
  }

  async get(id: number): Promise<InboxEntry | undefined> {
    if (!Number.isSafeInteger(id) || id <= 0) return undefined;
    const row = await this.db.selectFrom("inbox").selectAll().where("id", "=", id).executeTakeFirst();
    return row ? entryOf(row) : undefined;
  }

  async recent(conversationKey: string, n: number, uptoId?: number): Promise<InboxEntry[]> {
    if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`inbox: n must be a positive integer: ${n}`);
    let query = this.db.selectFrom("inbox").selectAll().where("conversation_key", "=", conversationKey);
    if (uptoId !== undefined) query = query.where("id", "<=", uptoId);
    const rows = await query.orderBy("id", "desc").limit(n).execute();
    return rows.reverse().map(entryOf);
  }

  async markHandled(id: number): Promise<boolean> {
    const result = await this.db
      .updateTable("inbox")
      .set({ handled: 1 })
      .where("id", "=", id)
      .where("handled", "=", 0)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async prune(beforeMs: number): Promise<number> {
    const result = await this.db.deleteFrom("inbox").where("at_ms", "<", beforeMs).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
