// Streams forever and ignores session/cancel, stdin EOF and SIGTERM: only SIGKILL stops it.
import { NO_REPLY, say, serve } from "./lib.mjs";

process.on("SIGTERM", () => process.stderr.write("ignoring SIGTERM\n"));
// Survives its reader going away too (EPIPE), so nothing but SIGKILL ends it.
process.stdout.on("error", () => {});
process.stderr.on("error", () => {});
serve(
  {
    "session/prompt": async ({ sessionId }) => {
      setInterval(() => say(sessionId, "tick "), 30);
      return NO_REPLY;
    },
    "session/cancel": async () => {
      process.stderr.write("ignoring session/cancel\n");
      return NO_REPLY;
    },
  },
  { exitOnEof: false },
);
// Keeps the event loop alive after stdin closes.
setInterval(() => {}, 1_000);
