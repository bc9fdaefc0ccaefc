// Fails the first session/prompt with a JSON-RPC error, then answers the next one normally.
import { rpcError, say, serve } from "./lib.mjs";

let prompts = 0;
serve({
  "session/prompt": async ({ sessionId }) => {
    prompts += 1;
    if (prompts === 1) return rpcError(-32603, "model overloaded");
    say(sessionId, "second try works");
    return { stopReason: "end_turn" };
  },
});
