// A scripted agent that holds many sessions on one process, keeps each session's history in
// FAKE_STORE (a directory, like a real agent's transcripts) so another process can session/load it
// (the history is replayed as session/update before the answer), and offers session/close. Prompts:
//   "slow"   streams "tick " until cancelled;  "crash"  exits with code 3 mid-turn;
//   "quiet"  says nothing for 700 ms, then answers;  "fail"  fails with an API-style error;
//   "tool"   announces a tool titled "Terminal" and retitles it "ls -la";
//   anything else answers "answer <n>: <text> | history: <earlier prompts>".
// argv: "no-load" (no loadSession), "no-close" (no session/close), "bug551" (after a cancel the
// next prompt ends at once, empty, and its answer comes with the prompt after it, as
// claude-agent-acp#551 does), "stderr" (writes a secret-bearing line to stderr and exits at start),
// "auth" (every session/new fails with Authentication required).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { NO_REPLY, rpcError, say, serve, update } from "./lib.mjs";

const flags = new Set(process.argv.slice(2));
if (flags.has("stderr")) {
  process.stderr.write(
    "fatal: config invalid, token=sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH\n",
  );
  process.stderr.write("second line\n");
  process.exit(1);
}
const store = process.env.FAKE_STORE;
const sessions = new Map();
let next = 0;

const file = (id) => join(store, `${id}.json`);
const save = (s) => writeFileSync(file(s.id), JSON.stringify(s.history));

function open(id, history) {
  const s = {
    id,
    history,
    cancelled: false,
    timer: undefined,
    pending: undefined,
    stale: false,
    backlog: [],
  };
  sessions.set(id, s);
  return s;
}

function answer(s, text) {
  const earlier = s.history.map((h) => h.prompt).join(", ");
  const reply = `answer ${s.history.length + 1}: ${text} | history: ${earlier}`;
  s.history.push({ prompt: text, reply });
  save(s);
  return reply;
}

serve({
  initialize: async () => ({
    protocolVersion: 1,
    agentCapabilities: {
      loadSession: !flags.has("no-load"),
      sessionCapabilities: flags.has("no-close") ? {} : { close: {} },
      promptCapabilities: {},
    },
    agentInfo: { name: "fake-multi", version: "1.2.3" },
    authMethods: [],
  }),
  "session/new": async () => {
    if (flags.has("auth")) return rpcError(-32000, "Authentication required");
    const s = open(`multi-${process.pid}-${++next}`, []);
    save(s);
    return { sessionId: s.id };
  },
  "session/load": async ({ sessionId }) => {
    if (!existsSync(file(sessionId))) return rpcError(-32002, `Resource not found: ${sessionId}`);
    const s = open(sessionId, JSON.parse(readFileSync(file(sessionId), "utf8")));
    for (const h of s.history) {
      update(sessionId, { sessionUpdate: "user_message_chunk", content: { type: "text", text: h.prompt } });
      say(sessionId, h.reply);
    }
    return {};
  },
  "session/close": async ({ sessionId }) => {
    sessions.delete(sessionId);
    return {};
  },
  "session/cancel": async ({ sessionId }) => {
    const s = sessions.get(sessionId);
    if (!s) return NO_REPLY;
    s.cancelled = true;
    clearInterval(s.timer);
    s.pending?.({ stopReason: "cancelled" });
    if (flags.has("bug551")) s.stale = true;
    return NO_REPLY;
  },
  "session/prompt": async ({ sessionId, prompt }) => {
    const s = sessions.get(sessionId);
    if (!s) return rpcError(-32603, "Session not found");
    s.cancelled = false;
    const text = prompt.map((b) => b.text ?? "").join("");
    if (s.stale) {
      // The stale end of the cancelled turn is consumed by this prompt; its answer waits for the next.
      s.stale = false;
      s.backlog.push(text);
      return { stopReason: "end_turn" };
    }
    for (const late of s.backlog.splice(0)) say(sessionId, `${answer(s, late)}\n`);
    if (text === "slow") {
      return new Promise((resolve) => {
        s.pending = resolve;
        s.timer = setInterval(() => say(sessionId, "tick "), 20);
      });
    }
    if (text === "crash") {
      say(sessionId, "about to crash");
      setTimeout(() => process.exit(3), 20);
      return NO_REPLY;
    }
    if (text === "fail") {
      return rpcError(
        -32603,
        "Internal error: API Error: Unable to connect to API (ECONNREFUSED) key=sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH",
      );
    }
    if (text === "quiet") await new Promise((r) => setTimeout(r, 700));
    if (text === "tool") {
      update(sessionId, {
        sessionUpdate: "tool_call",
        toolCallId: "t1",
        title: "Terminal",
        kind: "execute",
        status: "pending",
      });
      update(sessionId, {
        sessionUpdate: "tool_call_update",
        toolCallId: "t1",
        title: "ls -la",
        status: "in_progress",
      });
      update(sessionId, { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed" });
    }
    say(sessionId, answer(s, text));
    return { stopReason: "end_turn" };
  },
});
