/**
 * Two gateways on one PostgreSQL, SIGKILLed at random (a short run in the suite; `npm run bench
 * cluster` runs 50 kills and prints the figures): nothing lost, nothing answered twice, Telegram
 * never polled by two gateways at once, and polling back on a survivor within 30 s of each kill.
 */
import { describe, expect, it } from "vitest";
import { useTestPostgres } from "../helpers/use-postgres.js";
import { runClusterChaos } from "./cluster-run.js";

const SEED = Number(process.env.PARLEY_CHAOS_SEED ?? "2626");

const pg = useTestPostgres();

describe("two gateways on one PostgreSQL", () => {
  it(`6 SIGKILLs (seed ${SEED}): nothing lost or answered twice; one Telegram poller at a time, failing over`, async () => {
    const r = await runClusterChaos({
      kills: 6,
      seed: SEED,
      databaseUrl: await pg.server.createDatabase(),
      leaseSeconds: 3,
    });
    expect(r.sent.webchat + r.sent.telegram).toBeGreaterThan(6);
    expect(r.lost).toEqual([]);
    expect(r.duplicated).toEqual([]);
    expect(r.unfinished).toBe(0);
    expect(r.maxConcurrentPolls).toBe(1);
    expect(r.pollerKills).toBeGreaterThan(0);
    for (const ms of r.failoverMs) expect(ms).toBeLessThan(30_000);
  }, 300_000);
});
