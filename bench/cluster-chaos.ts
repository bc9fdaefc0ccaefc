/**
 * `npm run chaos:cluster [kills] [seed]`: two gateways on one PostgreSQL (a throwaway server, or
 * PARLEY_TEST_DATABASE_URL), the two-gateway chaos run (test/chaos/cluster-run.ts) with 50 SIGKILLs
 * by default and the default 15 s lease, printing lost / duplicated counts, the most concurrent
 * Telegram pollers and the measured failover times. Runs the built gateway (`npm run build` first).
 */
import { runClusterChaos } from "../test/chaos/cluster-run.js";
import { startTestPostgres } from "../test/helpers/postgres.js";

const kills = Number(process.argv[2] ?? "50");
const seed = Number(process.argv[3] ?? "2626");
const leaseSeconds = Number(process.env.PARLEY_BENCH_LEASE_SECONDS ?? "15");
const server = await startTestPostgres();
try {
  const r = await runClusterChaos({
    kills,
    seed,
    leaseSeconds,
    databaseUrl: await server.createDatabase(),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  const sorted = [...r.failoverMs].sort((a, b) => a - b);
  const pct = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? null;
  const out = {
    bench: "cluster",
    kills: r.kills,
    seed,
    leaseSeconds,
    messages: r.sent.webchat + r.sent.telegram,
    webchat: r.sent.webchat,
    telegram: r.sent.telegram,
    lost: r.lost.length,
    duplicated: r.duplicated.length,
    unfinished: r.unfinished,
    maxConcurrentTelegramPollers: r.maxConcurrentPolls,
    pollerKills: r.pollerKills,
    failoverMeasured: sorted.length,
    failoverMs: { min: sorted[0] ?? null, p50: pct(50), p95: pct(95), max: sorted.at(-1) ?? null },
    ambiguousResends: r.ambiguousResends,
    seconds: Math.round(r.elapsedMs / 1000),
    ...(r.lost.length + r.duplicated.length > 0
      ? { details: { lost: r.lost, duplicated: r.duplicated, homes: r.homes } }
      : {}),
  };
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  process.exitCode =
    out.lost + out.duplicated + out.unfinished > 0 || out.maxConcurrentTelegramPollers > 1 ? 1 : 0;
} finally {
  await server.stop();
}
