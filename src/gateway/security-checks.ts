/**
 * doctor's security warnings: a data home or `.env` other accounts can read, and an agent that runs
 * as the same user as parley (then every file parley can read, the bot tokens in $PARLEY_HOME/.env
 * included, is one shell command away for the agent). Warnings, not failures: a start tightens the
 * permissions itself, and a separate user is a deployment choice (docs/security.md shows how).
 */
import { basename } from "node:path";
import type { AgentConfig } from "./config.js";
import { loosePaths, octal } from "./home-permissions.js";

/** Commands that start the agent as another user or inside a sandbox. */
const ISOLATING = new Set([
  "sudo",
  "doas",
  "runuser",
  "su",
  "setpriv",
  "bwrap",
  "firejail",
  "nsjail",
  "systemd-run",
  "docker",
  "podman",
  "sandbox-exec",
]);

export function securityWarnings(
  home: string,
  agent: AgentConfig & { command: string },
  demo: boolean,
): string[] {
  const lines: string[] = [];
  for (const p of loosePaths(home))
    lines.push(
      `⚠ ${p.path} is ${octal(p.mode)}: other accounts can read it (the next start makes it ${octal(p.want)})`,
    );
  if (!demo && !ISOLATING.has(basename(agent.command)))
    lines.push(
      `⚠ the agent runs as your user: it can read $PARLEY_HOME/.env and anything parley can. Run it as another user or in a sandbox (docs/security.md)`,
    );
  return lines;
}
