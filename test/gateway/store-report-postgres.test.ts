/**
 * `parley doctor` on a shared PostgreSQL store (issue 26): the database the gateways would open,
 * not the home's SQLite file; a server that does not answer is a ✗ that never shows the password;
 * the cluster's gateways and the holder of each single connection are listed. Read-only: a fresh
 * database is reported as not created, and stays without tables.
 */
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/gateway/cli.js";
import { ClusterMember, signalsOf } from "../../src/gateway/cluster.js";
import { storeReport, storeReportLines } from "../../src/gateway/store-report.js";
import { silentLogger } from "../../src/messaging/base/logger.js";
import { openStore } from "../../src/store/index.js";
import { redactDatabaseUrl } from "../../src/store/postgres/engine.js";
import { LATEST_SCHEMA_VERSION } from "../../src/store/sql/migrations.js";
import type { SqlParleyStore } from "../../src/store/sql/store.js";
import { ManualClock } from "../helpers/manual-clock.js";
import { useTestPostgres } from "../helpers/use-postgres.js";

const db = useTestPostgres();

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("storeReport on PostgreSQL (parley doctor)", () => {
  it("a server that does not answer is a ✗, and the password never shows", async () => {
    const url = `postgres://parley:s3cret-pw@127.0.0.1:${await closedPort()}/parley`;
    const report = await storeReport("/nonexistent-home", url);
    expect(report.state).toBe("unreachable");
    const { lines, healthy } = storeReportLines(report, 0);
    expect(healthy).toBe(false);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^✗ store: postgres:\/\/parley:\*\*\*@127\.0\.0\.1:\d+\/parley did not answer \(.+\)/,
    );
    expect(lines.join("\n")).not.toContain("s3cret-pw");
  });

  it("a database no gateway has started on is reported as not created, and left untouched", async () => {
    const url = await db.server.createDatabase();
    const report = await storeReport("/nonexistent-home", url);
    expect(report).toEqual({ state: "absent", location: redactDatabaseUrl(url) });
    // Nothing was migrated by looking.
    expect((await storeReport("/nonexistent-home", url)).state).toBe("absent");
  });

  it("lists the running gateways, their conversations, and who holds each single connection", async () => {
    const url = await db.server.createDatabase();
    const clock = new ManualClock();
    const stores: SqlParleyStore[] = [];
    const join = async (name: string) => {
      const store = (await openStore("/nonexistent-home", { url })) as SqlParleyStore;
      stores.push(store);
      return ClusterMember.join({
        registry: store.cluster,
        signals: signalsOf(store),
        clock,
        logger: silentLogger,
        name,
        incarnation: "0001",
        onFenced: () => {},
      });
    };
    const a = await join("gw-a");
    const b = await join("gw-b");
    await a.acquire("teams:c1");
    await a.acquire("teams:c2");
    await b.acquire("slack:c3");
    await a.elect("telegram.getUpdates", { elected: async () => {}, deposed: async () => {} });
    const report = await storeReport("/nonexistent-home", url, clock.now());
    const { lines, healthy } = storeReportLines(report, clock.now());
    expect(healthy).toBe(true);
    expect(lines[0]).toMatch(
      new RegExp(`^✓ store: postgres://.+ \\(schema v${LATEST_SCHEMA_VERSION}, .+, integrity ok\\)$`),
    );
    const pid = process.pid;
    expect(lines.slice(1)).toEqual([
      `✓ cluster: 2 gateway(s) running: gw-a/${pid}/0001 (lease 15 s left, 2 conversation(s)); gw-b/${pid}/0001 (lease 15 s left, 1 conversation(s))`,
      `- cluster: connection:telegram.getUpdates held by gw-a/${pid}/0001`,
    ]);
    // A stops beating: once its lease ran out, doctor says its work is being taken over.
    for (let i = 0; i < 20; i += 1) {
      clock.t += 1000;
      await b.tick();
    }
    const later = storeReportLines(await storeReport("/nonexistent-home", url, clock.now()), clock.now());
    expect(later.lines.slice(1)).toEqual([
      `✓ cluster: 1 gateway(s) running: gw-b/${pid}/0001 (lease 15 s left, 1 conversation(s))`,
      "! cluster: 1 gateway(s) gone, their leases run out: the others take their work over",
      `! cluster: connection:telegram.getUpdates held by gw-a/${pid}/0001, which is gone: a running gateway takes it at its next tick`,
    ]);
    await b.leave();
    for (const s of stores) await s.close();
  });

  it("`parley doctor` reports the database PARLEY_DATABASE_URL names, not the home's SQLite file", async () => {
    const url = await db.server.createDatabase();
    const first = (await openStore("/nonexistent-home", { url })) as SqlParleyStore;
    await first.close();
    const home = mkdtempSync(join(tmpdir(), "parley-doctor-pg-"));
    const out: string[] = [];
    await runCli(["doctor"], {
      out: (l) => out.push(l),
      err: () => {},
      env: { PARLEY_HOME: home, PARLEY_DATABASE_URL: url },
      cwd: home,
      stopSignal: () => new Promise(() => {}),
    });
    const text = out.join("\n");
    expect(text).toContain(`✓ store: ${redactDatabaseUrl(url)} (schema v${LATEST_SCHEMA_VERSION}`);
    expect(text).toContain("- cluster: no gateway running on this store");
    expect(text).not.toContain("parley.db");
  });
});
