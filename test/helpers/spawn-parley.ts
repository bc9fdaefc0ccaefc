/** Run the real `parley` binary (bin/parley.mjs over the compiled dist) as a subprocess. */
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../../bin/parley.mjs", import.meta.url));

export interface RunningParley {
  child: ChildProcessWithoutNullStreams;
  url: string;
  home: string;
  stderr: () => string;
  stop: () => Promise<number | null>;
}

export function freshHome(): string {
  return mkdtempSync(join(tmpdir(), "parley-home-"));
}

/** Start `parley start --port 0` and resolve once it announces its URL. */
export function startParley(
  args: string[] = [],
  opts: { home?: string; cwd?: string; env?: Record<string, string> } = {},
): Promise<RunningParley> {
  const home = opts.home ?? freshHome();
  const child = spawn(process.execPath, [BIN, "start", "--port", "0", ...args], {
    cwd: opts.cwd ?? home,
    env: { PATH: process.env.PATH ?? "", HOME: home, PARLEY_HOME: home, DEMO_AGENT_SPEED: "0", ...opts.env },
  });
  let out = "";
  let err = "";
  child.stderr.on("data", (d) => {
    err += String(d);
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`parley did not announce a URL in time.\nstdout: ${out}\nstderr: ${err}`));
    }, 20_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`parley exited early (${code}).\nstdout: ${out}\nstderr: ${err}`));
    });
    child.stdout.on("data", (d) => {
      out += String(d);
      const m = /http:\/\/\S+\?token=\S+/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.removeAllListeners("exit");
      resolve({
        child,
        url: m[0],
        home,
        stderr: () => err,
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done(child.exitCode);
            child.once("exit", (code) => done(code));
            child.kill("SIGTERM");
          }),
      });
    });
  });
}
