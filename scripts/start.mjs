// `npm start [-- COMMAND ARGS…]`: compile if the sources changed (scripts/build.mjs), then run
// `parley`. With no command it runs `parley start`; `npm start -- doctor` runs `parley doctor`
// and `npm start -- status` runs `parley status` (npm appends the arguments after `--` to the
// script, so a fixed `start` in the script would have turned that into `parley start doctor`).
import { fileURLToPath } from "node:url";
import { buildIfStale } from "./build.mjs";

const COMMANDS = new Set(["start", "doctor", "status", "service", "help", "--help", "-h", "--version", "-v"]);

/** The argv `parley` gets: a leading command is kept, otherwise `start` goes first. */
export function parleyArgs(args) {
  return args[0] !== undefined && COMMANDS.has(args[0]) ? args : ["start", ...args];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (!buildIfStale()) {
    process.stderr.write("parley: the build failed; fix the errors above and run npm start again\n");
    process.exit(1);
  }
  process.argv = [process.argv[0], process.argv[1], ...parleyArgs(process.argv.slice(2))];
  await import("../bin/parley.mjs");
}
