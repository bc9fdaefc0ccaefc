// Fails every session/prompt whose message (its last line: a fresh session's replayed context
// comes before it) contains "fail", with a JSON-RPC error as a broken model call looks; answers
// any other with "ok: <message>".
import { rpcError, say, serve } from "./lib.mjs";

const textOf = (prompt) =>
  prompt
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join(" ");

serve({
  "session/prompt": async ({ sessionId, prompt }) => {
    const text = textOf(prompt).trim().split("\n").at(-1) ?? "";
    if (text.includes("fail")) return rpcError(-32603, "model unreachable");
    say(sessionId, `ok: ${text}`);
    return { stopReason: "end_turn" };
  },
});
