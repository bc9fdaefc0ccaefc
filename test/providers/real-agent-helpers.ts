/**
 * Launching real third-party ACP agents in tests: where their entry points are, the environment
 * they run in (a scratch HOME, a local fake of their model API, no telemetry, no updates), and the
 * processes they leave. The environment is built, not inherited: the harness decides IS_SANDBOX
 * (Claude Code refuses to start as root when it is anything but "1").
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);

export function claudeAgentEntry(): string {
  return join(dirname(require.resolve("@zed-industries/claude-agent-acp/package.json")), "dist", "index.js");
}

export function geminiCliEntry(): string {
  return join(dirname(require.resolve("@google/gemini-cli/package.json")), "bundle", "gemini.js");
}

/** The base every real agent gets: PATH, a scratch HOME, and nothing else of the test's environment. */
function baseEnv(home: string): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, LANG: "C.UTF-8", TMPDIR: tmpdir() };
}

export function scratchHome(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `parley-${prefix}-home-`));
}

/** Claude Code behind claude-agent-acp, pointed at a fake Messages API (real-agents.md). */
export function claudeEnv(home: string, baseUrl: string): Record<string, string> {
  return {
    ...baseEnv(home),
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: "sk-ant-fake-key-for-tests",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    // A refused connection fails the turn at once instead of after ~3 minutes of retries.
    CLAUDE_CODE_MAX_RETRIES: "0",
    // As root Claude Code refuses --allow-dangerously-skip-permissions unless this is exactly "1".
    ...(process.getuid?.() === 0 ? { IS_SANDBOX: "1" } : {}),
  };
}

/** Gemini CLI in ACP mode, pointed at a fake Gemini API with an API key (gateway auth). */
export function geminiEnv(home: string, baseUrl: string): Record<string, string> {
  return {
    ...baseEnv(home),
    GOOGLE_GEMINI_BASE_URL: baseUrl,
    GEMINI_API_KEY: "fake-gemini-key-for-tests",
    GEMINI_CLI_NO_RELAUNCH: "true",
    GEMINI_TELEMETRY_ENABLED: "false",
  };
}

/** Live processes in a process group (Linux /proc; agents run in their own group). */
export function processGroup(pgid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const members: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // fields: state ppid pgrp ...; a zombie is not a running agent.
      if (Number(fields[2]) === pgid && fields[0] !== "Z") members.push(Number(entry));
    } catch {
      // exited while scanning
    }
  }
  return members;
}
