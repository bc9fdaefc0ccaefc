/**
 * The scheduler behind /every, /at, /jobs, /unschedule and the configured schedules. Jobs live in
 * the store (written through on every change) and in memory; one timer is armed for the earliest
 * due job. A run is CLAIMED (counted, the next time advanced, the run marked running) and saved
 * before it starts, so a crash mid-run is found at the next start and resumed once under the same
 * run number (the runner then sees from the delivery ledger whether it already delivered), and a
 * job missed while parley was down runs once, not once per missed interval. How a run runs (an
 * unattended agent turn, or a wake for an agent host) is the runner's. Layer: messaging.
 */
import { randomBytes } from "node:crypto";
import type { Clock } from "../base/clock.js";
import type { Logger } from "../base/logger.js";
import type { AuditSink } from "../security/audit.js";
import type { JobStore, ScheduledJob } from "../store/port.js";

/** Longest single timer: setTimeout cannot wait past ~24.8 days, and a re-check is cheap. */
const MAX_TIMER_MS = 60 * 60_000;
/** Jobs one conversation may hold: each run is an agent turn, and a listing must stay readable. */
export const MAX_JOBS_PER_CONVERSATION = 20;

export interface JobRunner {
  /** Run one claimed run of a job; resolves when it is delivered, refused or failed (never throws). */
  run(job: ScheduledJob, run: number): Promise<void>;
}

/** A job as a command asks for it; the scheduler gives it its id, counters and first time. */
export type NewJob = Omit<ScheduledJob, "id" | "runs" | "running" | "createdMs" | "nextRunMs"> & {
  firstRunMs: number;
};

/** What the shared commands use. */
export interface ScheduleControl {
  add(job: NewJob): Promise<{ ok: true; job: ScheduledJob } | { ok: false; error: string }>;
  /** A conversation's jobs, soonest first. */
  list(conversationKey: string): ScheduledJob[];
  /** Only a job of this conversation can be cancelled from it. */
  cancel(conversationKey: string, id: string): Promise<boolean>;
}

export interface SchedulerOptions {
  store: JobStore;
  clock: Clock;
  logger: Logger;
  audit: AuditSink;
  runner: JobRunner;
  /** Job ids (default: 6 random lowercase letters and digits). */
  newId?: () => string;
}

const ID_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789";

function randomId(): string {
  return Array.from(randomBytes(6), (b) => ID_ALPHABET[b % ID_ALPHABET.length]).join("");
}

export class Scheduler implements ScheduleControl {
  private readonly jobs = new Map<string, ScheduledJob>();
  private readonly active = new Map<string, Promise<void>>();
  private timer: unknown = null;
  /**
   * Runs jobs (started and not halted). With several gateways only the elected one leads; the
   * others keep the stored jobs for /jobs and write new ones to the store for the leader to run.
   */
  private leading = false;

  constructor(private readonly o: SchedulerOptions) {}

  /**
   * Load the stored jobs, bring the configured ones in line with the configuration (a changed one
   * starts afresh, a removed one goes), resume a run a crash cut short, then arm.
   */
  async start(configured: readonly ScheduledJob[] = []): Promise<void> {
    this.leading = true;
    for (const job of await this.o.store.list()) if (!this.active.has(job.id)) this.jobs.set(job.id, job);
    const wanted = new Map(configured.map((j) => [j.id, j]));
    for (const job of [...this.jobs.values()]) {
      if (job.channel !== "config" || wanted.has(job.id)) continue;
      this.jobs.delete(job.id);
      await this.o.store.remove(job.id);
    }
    for (const job of configured) {
      const kept = this.jobs.get(job.id);
      if (kept && kept.prompt === job.prompt && sameSchedule(kept, job)) continue;
      this.jobs.set(job.id, job);
      await this.o.store.save(job);
    }
    this.arm();
  }

  /** Arm nothing more (a shutdown's first step, or the election lost; runs in flight go on). */
  halt(): void {
    this.leading = false;
    this.o.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  /**
   * Several gateways share the store: take in what the others added, changed or cancelled, then arm
   * if leading. A run in flight here keeps its own copy (it saves it when it ends), unless the job
   * was cancelled meanwhile: then nothing is written back.
   */
  async refresh(): Promise<void> {
    const stored = new Map((await this.o.store.list()).map((j) => [j.id, j]));
    for (const id of [...this.jobs.keys()]) if (!stored.has(id)) this.jobs.delete(id);
    for (const [id, job] of stored) if (!this.active.has(id)) this.jobs.set(id, job);
    this.arm();
  }

  /** Halt, then wait for runs in flight (they finish, or a shutdown cuts them short). */
  async stop(): Promise<void> {
    this.halt();
    await Promise.allSettled([...this.active.values()]);
  }

  async add(request: NewJob): Promise<{ ok: true; job: ScheduledJob } | { ok: false; error: string }> {
    if (this.list(request.conversationKey).length >= MAX_JOBS_PER_CONVERSATION)
      return {
        ok: false,
        error: `This conversation already has ${MAX_JOBS_PER_CONVERSATION} scheduled prompts: cancel one first.`,
      };
    const { firstRunMs, ...rest } = request;
    let id = (this.o.newId ?? randomId)();
    while (this.jobs.has(id)) id = (this.o.newId ?? randomId)();
    const job: ScheduledJob = {
      ...rest,
      id,
      runs: 0,
      running: null,
      createdMs: this.o.clock.now(),
      nextRunMs: firstRunMs,
    };
    await this.o.store.save(job);
    this.jobs.set(id, job);
    this.o.audit.log("schedule", "allowed", {
      job: id,
      channel: job.channel,
      user: job.userId,
      kind: job.schedule.kind,
    });
    this.arm();
    return { ok: true, job: { ...job } };
  }

  list(conversationKey: string): ScheduledJob[] {
    return [...this.jobs.values()]
      .filter((j) => j.conversationKey === conversationKey)
      .sort((a, b) => a.nextRunMs - b.nextRunMs)
      .map((j) => ({ ...j }));
  }

  async cancel(conversationKey: string, id: string): Promise<boolean> {
    const job = this.jobs.get(id);
    if (!job || job.conversationKey !== conversationKey) return false;
    this.jobs.delete(id);
    await this.o.store.remove(id);
    this.o.audit.log("schedule", "revoked", { job: id, channel: job.channel });
    this.arm();
    return true;
  }

  /** One timer, for the earliest due job (a run already in flight is not due again). */
  private arm(): void {
    if (!this.leading) return;
    this.o.clock.clearTimeout(this.timer);
    this.timer = null;
    const now = this.o.clock.now();
    let earliest = Number.POSITIVE_INFINITY;
    for (const job of this.jobs.values()) {
      if (this.active.has(job.id)) continue;
      // A run a crash cut short is due at once: it resumes before anything else.
      const due = job.running !== null ? now : job.nextRunMs;
      earliest = Math.min(earliest, due);
    }
    if (!Number.isFinite(earliest)) return;
    const wait = Math.max(0, Math.min(earliest - now, MAX_TIMER_MS));
    this.timer = this.o.clock.setTimeout(() => this.tick(), wait);
  }

  private tick(): void {
    this.timer = null;
    const now = this.o.clock.now();
    for (const job of [...this.jobs.values()]) {
      if (this.active.has(job.id)) continue;
      if (job.running !== null || job.nextRunMs <= now) this.fire(job);
    }
    this.arm();
  }

  private fire(job: ScheduledJob): void {
    const work = this.runOnce(job).catch((error: unknown) =>
      this.o.logger.error("schedule: a run failed", { job: job.id, error: String(error) }),
    );
    this.active.set(job.id, work);
    void work.finally(() => {
      this.active.delete(job.id);
      this.arm();
    });
  }

  private async runOnce(job: ScheduledJob): Promise<void> {
    const resumed = job.running !== null;
    const run = job.running ?? job.runs + 1;
    if (!resumed) {
      // Claimed before it starts: a crash from here on is found at the next start.
      job.runs = run;
      job.running = run;
      job.nextRunMs =
        job.schedule.kind === "every" ? this.o.clock.now() + job.schedule.everyMs : Number.MAX_SAFE_INTEGER;
      await this.o.store.save(job);
    }
    this.o.audit.log("schedule.run", "allowed", { job: job.id, run, ...(resumed ? { resumed: 1 } : {}) });
    await this.o.runner.run({ ...job }, run);
    job.running = null;
    // Cancelled while it ran: nothing to write back.
    if (this.jobs.get(job.id) !== job) return;
    if (job.schedule.kind === "at") {
      this.jobs.delete(job.id);
      await this.o.store.remove(job.id);
    } else await this.o.store.save(job);
  }
}

function sameSchedule(a: ScheduledJob, b: ScheduledJob): boolean {
  return (
    JSON.stringify(a.schedule) === JSON.stringify(b.schedule) &&
    JSON.stringify(a.deliverTo) === JSON.stringify(b.deliverTo)
  );
}
