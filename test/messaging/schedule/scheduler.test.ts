/** The scheduler over the real store and a manual clock: claims before running, resumes once, survives a restart. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import type { JobRunner, NewJob } from "../../../src/messaging/schedule/scheduler.js";
import { MAX_JOBS_PER_CONVERSATION, Scheduler } from "../../../src/messaging/schedule/scheduler.js";
import { MemoryAuditSink } from "../../../src/messaging/security/audit.js";
import type { ParleyStore, ScheduledJob } from "../../../src/messaging/store/port.js";
import { openTestStore } from "../../helpers/channel-context.js";
import { ManualClock, settle } from "../../helpers/manual-clock.js";

const MIN = 60_000;
const stores: ParleyStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

/** Records runs; each run waits until released when `hold` is set. */
class Runs implements JobRunner {
  readonly seen: { id: string; run: number; at: number }[] = [];
  hold: Promise<void> | null = null;
  constructor(private readonly clock: ManualClock) {}
  async run(job: ScheduledJob, run: number): Promise<void> {
    this.seen.push({ id: job.id, run, at: this.clock.now() });
    if (this.hold) await this.hold;
  }
}

async function setup(home = mkdtempSync(join(tmpdir(), "parley-sched-")), clock = new ManualClock(0)) {
  const store = await openTestStore(home);
  stores.push(store);
  const runs = new Runs(clock);
  let n = 0;
  const scheduler = new Scheduler({
    store: store.jobs,
    clock,
    logger: new MemoryLogger(),
    audit: new MemoryAuditSink(),
    runner: runs,
    newId: () => `j${++n}`,
  });
  return { home, clock, store, runs, scheduler };
}

const request = (over: Partial<NewJob> = {}): NewJob => ({
  channel: "telegram",
  conversationKey: "telegram:42",
  sessionKey: "telegram:default:direct:42",
  userId: "42",
  deliverTo: { kind: "link", link: { channelType: "telegram", conversationId: "42" } },
  address: { route: "42" },
  prompt: "status?",
  schedule: { kind: "every", everyMs: 10 * MIN },
  firstRunMs: 10 * MIN,
  ...over,
});

describe("scheduler", () => {
  it("runs an interval job on time, again an interval after each run, and lists it per conversation", async () => {
    const { scheduler, runs, clock } = await setup();
    await scheduler.start();
    await scheduler.add(request());
    await scheduler.add(request({ conversationKey: "telegram:7", firstRunMs: 5 * MIN }));
    expect(scheduler.list("telegram:42").map((j) => j.id)).toEqual(["j1"]);
    await clock.advance(25 * MIN);
    expect(runs.seen.filter((r) => r.id === "j1")).toEqual([
      { id: "j1", run: 1, at: 10 * MIN },
      { id: "j1", run: 2, at: 20 * MIN },
    ]);
    expect(scheduler.list("telegram:42")[0]).toMatchObject({ runs: 2, running: null, nextRunMs: 30 * MIN });
  });

  it("a one-shot job runs once and is gone; a job is cancelled only from its own conversation", async () => {
    const { scheduler, runs, clock, store } = await setup();
    await scheduler.start();
    await scheduler.add(request({ schedule: { kind: "at", atMs: 3 * MIN }, firstRunMs: 3 * MIN }));
    await scheduler.add(request());
    expect(await scheduler.cancel("telegram:7", "j2")).toBe(false);
    expect(await scheduler.cancel("telegram:42", "j2")).toBe(true);
    await clock.advance(60 * MIN);
    expect(runs.seen.map((r) => r.id)).toEqual(["j1"]);
    expect(await store.jobs.list()).toEqual([]);
  });

  it("a job missed while parley was down runs once at the next start, not once per missed interval", async () => {
    const first = await setup();
    await first.scheduler.start();
    await first.scheduler.add(request());
    await first.scheduler.stop();
    await first.store.close();
    stores.length = 0;

    const clock = new ManualClock(95 * MIN);
    const second = await setup(first.home, clock);
    await second.scheduler.start();
    await clock.advance(1);
    expect(second.runs.seen).toEqual([{ id: "j1", run: 1, at: 95 * MIN }]);
    await clock.advance(9 * MIN);
    expect(second.runs.seen).toHaveLength(1);
    await clock.advance(2 * MIN);
    expect(second.runs.seen.map((r) => r.run)).toEqual([1, 2]);
  });

  it("a run cut short by a crash is resumed once, under the same run number, before anything else", async () => {
    const first = await setup();
    await first.scheduler.start();
    await first.scheduler.add(request({ schedule: { kind: "at", atMs: 2 * MIN }, firstRunMs: 2 * MIN }));
    first.runs.hold = new Promise(() => {}); // the run never finishes: the process dies in it
    await first.clock.advance(2 * MIN);
    expect(first.runs.seen).toEqual([{ id: "j1", run: 1, at: 2 * MIN }]);
    expect(await first.store.jobs.list()).toMatchObject([{ id: "j1", runs: 1, running: 1 }]);
    await first.store.close();
    stores.length = 0;

    const clock = new ManualClock(3 * MIN);
    const second = await setup(first.home, clock);
    await second.scheduler.start();
    await clock.advance(1);
    await settle();
    expect(second.runs.seen).toEqual([{ id: "j1", run: 1, at: 3 * MIN }]);
    expect(await second.store.jobs.list()).toEqual([]);
  });

  it("configured jobs are kept across restarts while unchanged, reset when changed, removed when gone", async () => {
    const { scheduler, store, clock } = await setup();
    const cfg = (prompt: string): ScheduledJob => ({
      ...request({ channel: "config", conversationKey: "config:nightly", prompt }),
      id: "cfg-nightly",
      runs: 0,
      running: null,
      createdMs: 0,
      nextRunMs: 10 * MIN,
    });
    await scheduler.start([cfg("report")]);
    await clock.advance(10 * MIN);
    await scheduler.stop();
    const again = new Scheduler({
      store: store.jobs,
      clock,
      logger: new MemoryLogger(),
      audit: new MemoryAuditSink(),
      runner: { run: async () => {} },
    });
    await again.start([cfg("report")]);
    expect(again.list("config:nightly")).toMatchObject([{ runs: 1, nextRunMs: 20 * MIN }]);
    await again.start([cfg("a new report")]);
    expect(again.list("config:nightly")).toMatchObject([{ runs: 0, prompt: "a new report" }]);
    await again.start([]);
    expect(await store.jobs.list()).toEqual([]);
    await again.stop();
  });

  it("caps the jobs of one conversation", async () => {
    const { scheduler } = await setup();
    await scheduler.start();
    for (let i = 0; i < MAX_JOBS_PER_CONVERSATION; i += 1)
      expect((await scheduler.add(request())).ok).toBe(true);
    expect(await scheduler.add(request())).toMatchObject({ ok: false });
    expect((await scheduler.add(request({ conversationKey: "telegram:7" }))).ok).toBe(true);
    await scheduler.stop();
  });
});

describe("scheduler on several gateways (one store)", () => {
  /** A second gateway's scheduler over the same job store. */
  function peer(o: Awaited<ReturnType<typeof setup>>) {
    const runs = new Runs(o.clock);
    let n = 0;
    const scheduler = new Scheduler({
      store: o.store.jobs,
      clock: o.clock,
      logger: new MemoryLogger(),
      audit: new MemoryAuditSink(),
      runner: runs,
      newId: () => `p${++n}`,
    });
    return { scheduler, runs };
  }

  it("a job added on a gateway that does not lead is run by the leader, once, and listed on both", async () => {
    const leader = await setup();
    const follower = peer(leader);
    await leader.scheduler.start();
    await follower.scheduler.add(request());
    await leader.scheduler.refresh();
    await leader.clock.advance(25 * MIN);
    await follower.scheduler.refresh();
    expect(follower.runs.seen).toEqual([]);
    expect(leader.runs.seen.map((r) => [r.id, r.run])).toEqual([
      ["p1", 1],
      ["p1", 2],
    ]);
    expect(follower.scheduler.list("telegram:42")).toMatchObject([
      { id: "p1", runs: 2, nextRunMs: 30 * MIN },
    ]);
  });

  it("a job cancelled elsewhere while it runs here is not written back when the run ends", async () => {
    const leader = await setup();
    const follower = peer(leader);
    await leader.scheduler.start();
    await leader.scheduler.add(request());
    let release: () => void = () => {};
    leader.runs.hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    await leader.clock.advance(10 * MIN);
    expect(leader.runs.seen).toHaveLength(1);
    await follower.scheduler.refresh();
    expect(await follower.scheduler.cancel("telegram:42", "j1")).toBe(true);
    await leader.scheduler.refresh();
    release();
    await settle();
    expect(await leader.store.jobs.list()).toEqual([]);
    await leader.clock.advance(30 * MIN);
    expect(leader.runs.seen).toHaveLength(1);
  });

  it("a leader that lost the election runs nothing; elected again, it runs again", async () => {
    const { scheduler, runs, clock } = await setup();
    await scheduler.start();
    await scheduler.add(request());
    scheduler.halt();
    await clock.advance(15 * MIN);
    await scheduler.refresh();
    expect(runs.seen).toEqual([]);
    await scheduler.start();
    await clock.advance(0);
    expect(runs.seen.map((r) => r.run)).toEqual([1]);
  });
});
