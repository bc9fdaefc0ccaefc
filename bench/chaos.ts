/**
 * `npm run chaos [kills] [seed] [minMs-maxMs] [maxAttempts]`: the chaos run (test/chaos/run.ts) at
 * full length, 200 SIGKILL restarts by default, printing one JSON object with the counts (lost,
 * duplicated, orphaned parts, wrong "not run again" notices, the history's missing and doubled
 * answers) and exiting non-zero if any is not 0. `minMs-maxMs`: the pause before each kill (e.g.
 * 1000-3000); `maxAttempts`: the gateway's cap on a message cut short (default 100: none given up).
 * Runs the built gateway: `npm run chaos` builds first.
 */
import { runChaos } from "../test/chaos/run.js";

const kills = Number(process.argv[2] ?? "200");
const seed = Number(process.argv[3] ?? "16016");
const every = process.argv[4]?.split("-").map(Number);
if (every && (every.length !== 2 || every.some((n) => !Number.isFinite(n)) || every[0]! > every[1]!))
  throw new Error(`the pause before a kill is minMs-maxMs, e.g. 1000-3000: ${process.argv[4]}`);
const maxAttempts = process.argv[5] === undefined ? undefined : Number(process.argv[5]);
const r = await runChaos({
  kills,
  seed,
  ...(every ? { killEveryMs: [every[0] as number, every[1] as number] as const } : {}),
  ...(maxAttempts !== undefined ? { maxAttempts } : {}),
  log: (line) => process.stderr.write(`${line}\n`),
});
const out = {
  kills: r.kills,
  seed,
  messages: r.sent.webchat + r.sent.telegram,
  webchat: r.sent.webchat,
  telegram: r.sent.telegram,
  lost: r.lost.length,
  duplicated: r.duplicated.length,
  /** Messages given up with a "not run again" / "too old" notice (their sender was told). */
  givenUp: r.givenUp.length,
  /** Such notices about a message that was answered (must be 0). */
  wrongNotices: r.wrongNotices.length,
  historyMissing: r.history.missing.length,
  historyDoubled: r.history.doubled.length,
  orphanedParts: r.orphans.webchat.length + r.orphans.telegram.length,
  ambiguousResends: r.ambiguousResends,
  /** Every orphaned part was a Telegram part the gateway audited as created twice (its one window). */
  orphansAudited: r.orphans.webchat.length === 0 && r.orphans.telegram.length <= r.ambiguousResends,
  unfinished: r.unfinished,
  seconds: Math.round(r.elapsedMs / 1000),
  home: r.home,
  ...(r.lost.length +
    r.duplicated.length +
    r.wrongNotices.length +
    r.history.missing.length +
    r.history.doubled.length +
    r.orphans.webchat.length +
    r.orphans.telegram.length >
  0
    ? {
        details: {
          lost: r.lost,
          duplicated: r.duplicated,
          wrongNotices: r.wrongNotices,
          history: r.history,
          orphans: r.orphans,
          telegram: r.telegramChats,
        },
      }
    : {}),
};
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
const bad =
  out.lost + out.duplicated + out.wrongNotices + out.historyMissing + out.historyDoubled + out.unfinished;
process.exitCode = bad > 0 || !out.orphansAudited ? 1 : 0;
