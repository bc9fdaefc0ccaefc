import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { storeReport, storeReportLines } from "../../src/gateway/store-report.js";
import { openStore, storePath } from "../../src/store/index.js";
import { LATEST_SCHEMA_VERSION, MIGRATION_TABLE } from "../../src/store/sql/migrations.js";

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "parley-report-"));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

describe("storeReport (parley doctor)", () => {
  it("an absent store is reported, not created", async () => {
    const report = await storeReport(home);
    expect(report).toEqual({ state: "absent", location: storePath(home) });
    expect(storeReportLines(report, 0)).toEqual({
      lines: [`- store: ${storePath(home)} not created yet (the first start creates it)`],
      healthy: true,
    });
    expect(existsSync(storePath(home))).toBe(false);
  });

  it("path, schema version, size, integrity and the unanswered messages, read beside a running store", async () => {
    const store = await openStore(home, { now: () => 1_000_000 });
    await store.intake.accept({
      channel: "discord",
      platformMessageId: "1",
      conversationKey: "c",
      payload: {},
      receivedAtMs: 0,
    });
    await store.intake.accept({
      channel: "discord",
      platformMessageId: "2",
      conversationKey: "c",
      payload: {},
      receivedAtMs: 0,
    });
    // Still open: doctor runs while the gateway does.
    const report = await storeReport(home);
    expect(report).toMatchObject({
      state: "present",
      location: storePath(home),
      schemaVersion: LATEST_SCHEMA_VERSION,
      latestSchemaVersion: LATEST_SCHEMA_VERSION,
      integrity: { ok: true },
      unfinishedIntake: 2,
      oldestUnfinishedAtMs: 1_000_000,
    });
    expect(report.state === "present" && report.sizeBytes).toBeGreaterThan(0);
    const { lines, healthy } = storeReportLines(report, 1_000_000 + 5 * 60_000);
    expect(healthy).toBe(true);
    expect(lines[0]).toMatch(
      new RegExp(
        `^✓ store: .*parley\\.db \\(schema v${LATEST_SCHEMA_VERSION}, [\\d.]+ (KiB|MiB), integrity ok\\)$`,
      ),
    );
    expect(lines[1]).toBe(
      "! store: 2 accepted message(s) not answered yet, oldest 5 min ago; the next start resumes them",
    );
    // Read-only: the running store still works and still holds both.
    expect(await store.intake.countUnfinished()).toBe(2);
    await store.close();
  });

  it("what each channel did not turn into messages: one line per channel, wire trouble marked", async () => {
    const store = await openStore(home, { now: () => 1_000_000 });
    await store.inboundDrops.add([
      { channel: "webex", reason: "missing_id", count: 3, lastAtMs: 1_000_000 },
      { channel: "webex", reason: "stranger", count: 7, lastAtMs: 900_000 },
      { channel: "telegram", reason: "duplicate", count: 1, lastAtMs: 1_000_000 },
    ]);
    const report = await storeReport(home);
    const { lines, healthy } = storeReportLines(report, 1_000_000 + 10 * 60_000);
    expect(healthy).toBe(true);
    expect(lines.slice(1)).toEqual([
      "- inbound: telegram did not take 1 frame(s): duplicate 1 (last 10 min ago)",
      "! inbound: webex did not take 10 frame(s): stranger 7, missing_id 3 (last 10 min ago)",
    ]);
    await store.close();
  });

  it("a corrupt file: unhealthy, with the file and the repair hint, and the file left as it was", async () => {
    const garbage = "not a database ".repeat(400);
    await writeFile(storePath(home), garbage);
    const report = await storeReport(home);
    expect(report.state).toBe("corrupt");
    const { lines, healthy } = storeReportLines(report, 0);
    expect(healthy).toBe(false);
    expect(lines[0]).toContain(`✗ store: ${storePath(home)} is not a readable database`);
    expect(lines[0]).toContain("start refuses");
    expect(lines[0]).toContain(".recover");
    expect(await readFile(storePath(home), "utf8")).toBe(garbage);
  });

  it("a store from a newer parley is unhealthy: start would refuse it", async () => {
    const store = await openStore(home);
    await store.close();
    const raw = new Database(storePath(home));
    raw.prepare(`insert into ${MIGRATION_TABLE} (name, timestamp) values (?, ?)`).run("0099_future", "x");
    raw.close();
    const { lines, healthy } = storeReportLines(await storeReport(home), 0);
    expect(healthy).toBe(false);
    expect(lines[0]).toMatch(/schema v99, newer than this parley .*start refuses/);
  });
});
