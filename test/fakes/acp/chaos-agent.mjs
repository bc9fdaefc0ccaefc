// The agent of the chaos run: answers each prompt with "answer:<token>" for every message token
// (m<digits>) in its LAST text block (a drained burst carries several; a replayed context comes in
// an earlier block), streamed in three pieces with a pause between (CHAOS_AGENT_DELAY_MS, default 30)
// so a kill can land mid-answer. Stateless: session/load always succeeds and replays nothing.
import { say, serve } from "./lib.mjs";

const delay = Number(process.env.CHAOS_AGENT_DELAY_MS ?? "30");
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let opened = 0;

function pieces(text, n) {
  const size = Math.ceil(text.length / n);
  const out = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

serve({
  initialize: async () => ({ protocolVersion: 1, agentCapabilities: { loadSession: true }, authMethods: [] }),
  "session/new": async () => ({ sessionId: `chaos-${process.pid}-${++opened}` }),
  "session/load": async () => ({}),
  "session/prompt": async ({ sessionId, prompt }) => {
    const last = [...prompt].reverse().find((b) => b.type === "text")?.text ?? "";
    const tokens = last.match(/\bm\d+\b/g) ?? [];
    const answer = tokens.length ? tokens.map((t) => `answer:${t}`).join(" ") : "answer:none";
    for (const piece of pieces(answer, 3)) {
      say(sessionId, piece);
      await sleep(delay);
    }
    return { stopReason: "end_turn" };
  },
});
