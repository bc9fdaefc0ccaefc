/** Process entry for `parley`: real stdio, env and signals around runCli. */
import { runCli } from "./cli.js";

const stopSignal = () =>
  new Promise<string>((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
  });

const code = await runCli(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  cwd: process.cwd(),
  stopSignal,
});
process.exit(code);
