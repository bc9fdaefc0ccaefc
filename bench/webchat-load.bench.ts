/**
 * N web chat conversations (default 100, BENCH_SESSIONS) at once, end to end: the real `parley start`
 * (compiled, as `npm start` runs it) with the bundled demo agent at its production speed
 * (DEMO_AGENT_SPEED, default 15 ms between chunks), each conversation its own WebSocket, one
 * message each, all sent together. Per conversation, from the send: first token (the first
 * answer text on screen) and completion (the turn-status line); peak agent process count, and peak
 * resident memory of parley plus every process it started. Twice, each on a fresh gateway: "cold"
 * (the messages go out the moment the URL is printed) and "warm" (after the pool's processes have
 * started, as on a gateway that has been up a while).
 *
 * Acceptance (issue 15, 2 cores): all answered, first-token p50 <= 500 ms, total RSS <= 600 MB, at
 * most agent.maxProcesses agent processes.
 */
import { buildIfStale } from "../scripts/build.mjs";
import { AGENT_POOL_DEFAULTS } from "../src/providers/agent-pool.js";
import { descendants, rssKib } from "../test/helpers/processes.js";
import { startParley } from "../test/helpers/spawn-parley.js";
import { WebChatSocket } from "../test/helpers/webchat-socket.js";

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;

interface Run {
  answered: number;
  firstTokenP50Ms: number;
  firstTokenP99Ms: number;
  completionP50Ms: number;
  completionP99Ms: number;
  wallMs: number;
  peakAgentProcesses: number;
  peakTotalRssMb: number;
  peakParleyRssMb: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function burst(n: number, warm: boolean, speed: string): Promise<Run> {
  const parley = await startParley([], { env: { DEMO_AGENT_SPEED: speed } });
  const pid = parley.child.pid as number;
  const agents = () => descendants(pid).filter((p) => p.cmdline.includes("demo-agent"));
  try {
    if (warm) {
      // The gateway starts maxProcesses agents at once; give them their start.
      const until = Date.now() + 10_000;
      while (agents().length < AGENT_POOL_DEFAULTS.maxProcesses && Date.now() < until) await sleep(50);
      await sleep(500);
    }
    const sockets = await Promise.all(
      Array.from({ length: n }, (_, i) => WebChatSocket.open(parley.url, `load-${warm ? "w" : "c"}-${i}`)),
    );
    let peakProcesses = 0;
    let peakTotalKib = 0;
    let peakParleyKib = 0;
    const sample = setInterval(() => {
      const tree = descendants(pid);
      const own = rssKib(pid);
      peakProcesses = Math.max(peakProcesses, tree.filter((p) => p.cmdline.includes("demo-agent")).length);
      peakParleyKib = Math.max(peakParleyKib, own);
      peakTotalKib = Math.max(peakTotalKib, own + tree.reduce((sum, p) => sum + p.rssKib, 0));
    }, 100);
    const firstToken: number[] = [];
    const completion: number[] = [];
    let answered = 0;
    const t0 = performance.now();
    await Promise.all(
      sockets.map(async (socket, i) => {
        let first: number | undefined;
        const off = socket.onBubble((b) => {
          if (first === undefined && b.role === "assistant" && b.text.trim()) first = performance.now() - t0;
        });
        socket.say(`hello from conversation ${i}`);
        const done = await socket.finished(0, 120_000);
        completion.push(performance.now() - t0);
        off();
        if (first !== undefined) firstToken.push(first);
        if (socket.visible().join("\n").includes("demo agent")) answered += 1;
        void done;
      }),
    );
    const wallMs = performance.now() - t0;
    clearInterval(sample);
    for (const s of sockets) s.close();
    firstToken.sort((a, b) => a - b);
    completion.sort((a, b) => a - b);
    const ms = (v: number) => Number(v.toFixed(0));
    const mb = (kib: number) => Number((kib / 1024).toFixed(1));
    return {
      answered,
      firstTokenP50Ms: ms(percentile(firstToken, 50)),
      firstTokenP99Ms: ms(percentile(firstToken, 99)),
      completionP50Ms: ms(percentile(completion, 50)),
      completionP99Ms: ms(percentile(completion, 99)),
      wallMs: ms(wallMs),
      peakAgentProcesses: peakProcesses,
      peakTotalRssMb: mb(peakTotalKib),
      peakParleyRssMb: mb(peakParleyKib),
    };
  } finally {
    await parley.stop();
  }
}

export default async function bench() {
  if (!buildIfStale()) throw new Error("the build failed: the bench runs the compiled gateway");
  const n = Number(process.env.BENCH_SESSIONS ?? 100);
  const speed = process.env.DEMO_AGENT_SPEED ?? "15";
  const out: Record<string, number | string> = {
    conversations: n,
    maxProcesses: AGENT_POOL_DEFAULTS.maxProcesses,
    maxSessionsPerProcess: AGENT_POOL_DEFAULTS.maxSessionsPerProcess,
    demoSpeedMs: Number(speed),
  };
  for (const warm of [false, true]) {
    const run = await burst(n, warm, speed);
    for (const [key, value] of Object.entries(run)) out[`${warm ? "warm" : "cold"}.${key}`] = value;
  }
  out.targetFirstTokenP50Ms = 500;
  out.targetTotalRssMb = 600;
  return out;
}
