// An agent that puts credentials on every path a log line can come from: its stderr (at startup
// and per prompt), a non-protocol line on stdout, and the error it fails a prompt with.
import { rpcError, serve } from "./lib.mjs";

const [stderrKey, stdoutKey, errorKey] = process.argv.slice(2);
process.stderr.write(`booting with GITHUB_TOKEN=${stderrKey}\n`);
serve({
  "session/prompt": async () => {
    process.stderr.write(`debug: calling the API with key ${stderrKey}\n`);
    process.stdout.write(`Traceback: Authorization failed for ${stdoutKey}\n`);
    return rpcError(-32603, `upstream rejected key ${errorKey}`);
  },
});
