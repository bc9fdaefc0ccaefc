// Writes its own environment (names and values) to the file named by its first argument at start,
// so a test can see exactly what an agent parley started was given.
import { writeFileSync } from "node:fs";
import { say, serve } from "./lib.mjs";

writeFileSync(process.argv[2], JSON.stringify(process.env));
serve({
  "session/prompt": async ({ sessionId }) => {
    say(sessionId, "env written");
    return { stopReason: "end_turn" };
  },
});
