// Fails every session/prompt whose text contains "fail" (a JSON-RPC error, as a broken model call
// looks), and answers any other with "ok: <text>".
import { rpcError, say, serve } from "./lib.mjs";

const textOf = (prompt) =>
  prompt
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join(" ");

serve({
  "session/prompt": async ({ sessionId, prompt }) => {
    const text = textOf(prompt);
    if (text.includes("fail")) return rpcError(-32603, "model unreachable");
    say(sessionId, `ok: ${text}`);
    return { stopReason: "end_turn" };
  },
});
