// Writes non-JSON to stdout, its protocol channel: at startup ("start") or mid-turn (default).
import { NO_REPLY, say, serve } from "./lib.mjs";

if (process.argv[2] === "start") process.stdout.write("Welcome to FakeAgent v0.0.1!\n");
serve({
  "session/prompt": async ({ sessionId }) => {
    say(sessionId, "partial answer");
    process.stdout.write("Traceback (most recent call last): this is not JSON\n");
    return NO_REPLY;
  },
});
