// An agent with no session config options and no command list: no model selector, no compaction.
import { say, serve } from "./lib.mjs";

serve({
  "session/prompt": async ({ sessionId }) => {
    say(sessionId, "plain answer");
    return { stopReason: "end_turn" };
  },
});
