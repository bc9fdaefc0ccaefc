// Streams one chunk of a turn, then dies with exit code 3 without answering session/prompt.
import { NO_REPLY, say, serve } from "./lib.mjs";

serve({
  "session/prompt": async ({ sessionId }) => {
    say(sessionId, "about to crash");
    setTimeout(() => process.exit(3), 20);
    return NO_REPLY;
  },
});
