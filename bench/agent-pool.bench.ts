/**
 * N concurrent conversations (default 100, BENCH_SESSIONS) against the demo agent through ONE
 * AgentPool at its default limits, one message each, all at once: first output (thinking or text),
 * first-token (first answer text) and completion latency p50/p99 from the prompt call (process start
 * and waiting in line included), peak agent process count and peak total agent RSS (each agent's
 * whole process group), and parley's own RSS. Twice: "cold" (no agent running yet) and "warm" (the
 * pool pre-started, as the gateway does at start and as a busy gateway is). Uses the compiled demo agent (dist/, what `npm start` runs) when built, else
 * the TypeScript source through tsx (heavier: say which in `agent`). Streams at the demo agent's
 * production speed (DEMO_AGENT_SPEED, default 15 ms between chunks).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { AcpProvider } from "../src/providers/acp.js";
import { AGENT_POOL_DEFAULTS, AgentPool } from "../src/providers/agent-pool.js";
import { demoAgentCommand } from "../src/providers/demo-command.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

function agentCommand(): { command: string; args: string[]; agent: string } {
  const compiled = join(root, "dist", "providers", "demo-agent.js");
  if (existsSync(compiled)) return { command: process.execPath, args: [compiled], agent: "dist (compiled)" };
  return { ...demoAgentCommand(), agent: "src via tsx (run `npm run build` for the production figure)" };
}

/** Resident KiB of every live process in `pgid`'s group (agents run in their own group). */
function groupRssKib(pgid: number): number {
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]) !== pgid) continue;
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${entry}/status`, "utf8"));
      total += Number(rss?.[1] ?? 0);
    } catch {
      // exited while scanning
    }
  }
  return total;
}

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;

interface Run {
  answered: number;
  waitedForAnAgent: number;
  firstOutputP50Ms: number;
  firstTokenP50Ms: number;
  firstTokenP99Ms: number;
  completionP50Ms: number;
  completionP99Ms: number;
  wallMs: number;
  peakAgentProcesses: number;
  peakAgentRssMb: number;
}

/** One burst of `n` conversations on a fresh pool; `warm` pre-starts maxProcesses agents first. */
async function burst(n: number, warm: boolean): Promise<Run> {
  const speed = process.env.DEMO_AGENT_SPEED ?? "15";
  const { command, args } = agentCommand();
  const pool = new AgentPool({
    agent: { command, args, env: { DEMO_AGENT_SPEED: speed }, cwd: root },
    logger: () => {},
  });
  if (warm) await pool.prewarm(pool.maxProcesses, 60_000);
  let peakProcesses = 0;
  let peakRssKib = 0;
  const sample = setInterval(() => {
    const { pids, processes } = pool.stats();
    peakProcesses = Math.max(peakProcesses, processes);
    peakRssKib = Math.max(
      peakRssKib,
      pids.reduce((sum, pid) => sum + groupRssKib(pid), 0),
    );
  }, 100);
  const providers = Array.from(
    { length: n },
    () => new AcpProvider({ command, cwd: root, pool, logger: () => {}, silenceNoticeMs: 0 }),
  );
  const firstOutput: number[] = [];
  const firstToken: number[] = [];
  const completion: number[] = [];
  let answered = 0;
  let waited = 0;
  const t0 = performance.now();
  await Promise.all(
    providers.map(async (p, i) => {
      const start = performance.now();
      let output: number | undefined;
      let first: number | undefined;
      let text = "";
      let sawWait = false;
      for await (const event of p.prompt(`hello from conversation ${i}`)) {
        if (event.type === "agent_wait" && !sawWait) {
          sawWait = true;
          waited += 1;
        }
        if (event.type === "thinking" || event.type === "text") output ??= performance.now() - start;
        if (event.type === "text") {
          first ??= performance.now() - start;
          text += event.text;
        }
      }
      if (output !== undefined) firstOutput.push(output);
      if (first !== undefined) firstToken.push(first);
      completion.push(performance.now() - start);
      if (text.includes("demo agent")) answered += 1;
    }),
  );
  const wallMs = performance.now() - t0;
  clearInterval(sample);
  await Promise.all(providers.map((p) => p.close()));
  await pool.close();
  for (const list of [firstOutput, firstToken, completion]) list.sort((a, b) => a - b);
  const ms = (v: number) => Number(v.toFixed(0));
  return {
    answered,
    waitedForAnAgent: waited,
    firstOutputP50Ms: ms(percentile(firstOutput, 50)),
    firstTokenP50Ms: ms(percentile(firstToken, 50)),
    firstTokenP99Ms: ms(percentile(firstToken, 99)),
    completionP50Ms: ms(percentile(completion, 50)),
    completionP99Ms: ms(percentile(completion, 99)),
    wallMs: ms(wallMs),
    peakAgentProcesses: peakProcesses,
    peakAgentRssMb: Number((peakRssKib / 1024).toFixed(1)),
  };
}

export default async function bench() {
  const n = Number(process.env.BENCH_SESSIONS ?? 100);
  const cold = await burst(n, false);
  const warm = await burst(n, true);
  const out: Record<string, number | string> = {
    agent: agentCommand().agent,
    conversations: n,
    maxProcesses: AGENT_POOL_DEFAULTS.maxProcesses,
    maxSessionsPerProcess: AGENT_POOL_DEFAULTS.maxSessionsPerProcess,
    demoSpeedMs: Number(process.env.DEMO_AGENT_SPEED ?? 15),
  };
  for (const [name, run] of Object.entries({ cold, warm })) {
    for (const [key, value] of Object.entries(run)) out[`${name}.${key}`] = value;
  }
  out.parleyRssMb = Number((process.memoryUsage().rss / 1024 / 1024).toFixed(1));
  out.targetFirstTokenP50Ms = 500;
  out.targetAgentRssMb = 600;
  return out;
}
