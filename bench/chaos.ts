/**
 * `npm run chaos [kills] [seed]`: the chaos run (test/chaos/run.ts) at full length, 200 SIGKILL
 * restarts by default, printing one JSON object with the counts (lost, duplicated, orphaned parts)
 * and exiting non-zero if any is not 0. Runs the built gateway: `npm run chaos` builds first.
 */
import { runChaos } from "../test/chaos/run.js";

const kills = Number(process.argv[2] ?? "200");
const seed = Number(process.argv[3] ?? "16016");
const r = await runChaos({ kills, seed, log: (line) => process.stderr.write(`${line}\n`) });
const out = {
  kills: r.kills,
  seed,
  messages: r.sent.webchat + r.sent.telegram,
  webchat: r.sent.webchat,
  telegram: r.sent.telegram,
  lost: r.lost.length,
  duplicated: r.duplicated.length,
  orphanedParts: r.orphans.webchat.length + r.orphans.telegram.length,
  ambiguousResends: r.ambiguousResends,
  /** Every orphaned part was a Telegram part the gateway audited as created twice (its one window). */
  orphansAudited: r.orphans.webchat.length === 0 && r.orphans.telegram.length <= r.ambiguousResends,
  unfinished: r.unfinished,
  seconds: Math.round(r.elapsedMs / 1000),
  home: r.home,
  ...(r.lost.length + r.duplicated.length + r.orphans.webchat.length + r.orphans.telegram.length > 0
    ? { details: { lost: r.lost, duplicated: r.duplicated, orphans: r.orphans, telegram: r.telegramChats } }
    : {}),
};
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
process.exitCode = out.lost + out.duplicated + out.unfinished > 0 || !out.orphansAudited ? 1 : 0;
