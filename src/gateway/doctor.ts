/**
 * `parley doctor`: what the gateway would do with this config and environment, per channel, and
 * whether the agent really answers (the ACP handshake: initialize, session/new, close, within a
 * deadline), without starting the gateway and without ever printing a secret (only setting NAMES
 * appear; the agent's error and stderr lines are redacted), and the state of its store (path, schema
 * version, size, a full integrity check, messages accepted but not yet answered).
 */
import { resolve } from "node:path";
import type {
  ChannelDoctorInput,
  ChannelDoctorReport,
  ChannelEntry,
  ChannelSettings,
} from "../messaging/channel/contract.js";
import { probeChannel } from "../messaging/channel/contract.js";
import { redactAll } from "../messaging/security/redact.js";
import { oneLine } from "../messaging/text/clip.js";
import type { AgentProbeResult } from "../providers/acp-probe.js";
import { probeAgent } from "../providers/acp-probe.js";
import type { LoadedConfig } from "./config.js";
import { findExecutable } from "./executable.js";
import { agentBaseEnv, resolveAgent } from "./gateway.js";
import { checkHome } from "./home-checks.js";
import { processIsAlive } from "./home-lock.js";
import { CHANNELS } from "./registry.js";
import { securityWarnings } from "./security-checks.js";
import { storeReport, storeReportLines } from "./store-report.js";

export interface DoctorReport {
  lines: string[];
  healthy: boolean;
}

export interface DoctorOptions {
  channels?: readonly ChannelEntry[];
  /** The agent's working directory when the config names none (the gateway uses its own cwd). */
  cwd?: string;
  /** The whole handshake must finish within this (default 30 s: an agent launched via npx is slow). */
  handshakeTimeoutMs?: number;
  /** "Now", for the age of unanswered messages in the store report. */
  nowMs?: number;
  /** A channel's own check (asking its platform) must finish within this (default 15 s). */
  channelCheckTimeoutMs?: number;
}

/** At most this many model and command names on a line: a long list says nothing more. */
const MAX_LISTED = 8;

export async function doctor(loaded: LoadedConfig, o: DoctorOptions = {}): Promise<DoctorReport> {
  const channels = o.channels ?? CHANNELS;
  const lines: string[] = [];
  let healthy = true;
  lines.push(`config: ${loaded.sources.length ? loaded.sources.join(" + ") : "defaults (no config file)"}`);
  lines.push(`data home: ${loaded.home}`);
  const agent = resolveAgent(loaded.config);
  lines.push(
    `agent: ${loaded.config.agent?.command ? [agent.command, ...agent.args].join(" ") : "bundled demo agent"}`,
  );
  const cwd = resolve(o.cwd ?? process.cwd(), agent.cwd ?? ".");
  let runnable = true;
  if (loaded.config.agent?.command) {
    // Otherwise the first message would be the one to find out, as "agent failed to start".
    const found = findExecutable(agent.command, loaded.env.PATH ?? "", cwd);
    if (!found) {
      healthy = false;
      runnable = false;
      lines.push(`✗ agent: "${agent.command}" is not an executable file nor found on PATH`);
    }
  }
  if (runnable) {
    // The handshake, as the gateway would start it: an agent that exists but cannot open a session
    // (no login, a root refusal, a broken install) fails here rather than at the first message.
    const result = await probeAgent(
      {
        command: agent.command,
        args: agent.args,
        env: agent.env,
        baseEnv: agentBaseEnv(loaded.env, channels),
        cwd,
      },
      { timeoutMs: o.handshakeTimeoutMs ?? 30_000 },
    );
    lines.push(...handshakeLines(result));
    healthy &&= result.ok;
  }
  const home = checkHome(loaded.home, processIsAlive);
  lines.push(...home.lines);
  lines.push(...securityWarnings(loaded.home, agent, !loaded.config.agent?.command));
  healthy &&= home.healthy;
  // Read-only (safe while parley runs); a damaged store is reported with its repair, never touched.
  const now = o.nowMs ?? Date.now();
  const url = loaded.config.store.url ?? loaded.env.PARLEY_DATABASE_URL;
  const store = storeReportLines(await storeReport(loaded.home, url, now), now);
  lines.push(...store.lines);
  healthy &&= store.healthy;
  for (const entry of channels) {
    const settings = loaded.config.channels[entry.name] ?? {};
    const probe = probeChannel(entry, settings, loaded.env, loaded.present.has(entry.name), loaded.home);
    if (probe.status === "configured") lines.push(`✓ ${entry.name}: configured`);
    else if (probe.status === "disabled")
      lines.push(`- ${entry.name}: disabled${probe.note ? ` (${probe.note})` : ""}`);
    else {
      healthy = false;
      lines.push(
        `✗ ${entry.name}: incomplete, missing ${probe.missing?.join(", ") ?? "settings"} (see ${entry.docs})`,
      );
    }
    // The channel's own lines (origin, linked account, permissions) once it is meant to run.
    if (probe.status !== "disabled" && entry.doctor) {
      const own = await channelDoctor(
        entry,
        { settings, env: loaded.env, home: loaded.home },
        o.channelCheckTimeoutMs ?? 15_000,
      );
      lines.push(...own.lines.map((line) => `    ${line}`));
      healthy &&= own.healthy;
    }
  }
  return { lines, healthy };
}

/** A channel's own lines; a check that throws is reported, never the end of the report. */
async function channelDoctor(
  entry: ChannelEntry,
  input: ChannelDoctorInput<ChannelSettings>,
  timeoutMs: number,
): Promise<ChannelDoctorReport> {
  // Bounded: a platform that does not answer is reported, never waited on forever.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<ChannelDoctorReport>((resolve) => {
    timer = setTimeout(
      () => resolve({ healthy: false, lines: [`✗ ${entry.name}: no answer within ${timeoutMs / 1000}s`] }),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([
      Promise.resolve(entry.doctor?.(input) ?? { lines: [], healthy: true }),
      timeout,
    ]);
  } catch (error) {
    // Redacted like every other line doctor prints from outside: an SDK error may quote a request.
    const reason = redactAll(error instanceof Error ? error.message : String(error));
    return { lines: [`✗ ${entry.name} check failed: ${oneLine(reason, 200)}`], healthy: false };
  } finally {
    clearTimeout(timer);
  }
}

/** The handshake's report: who the agent is and what it offers, or where and why it failed. */
export function handshakeLines(result: AgentProbeResult): string[] {
  if (!result.ok) {
    const where = result.stage === "start" ? "did not start" : "started but could not open a session";
    return [
      `✗ agent handshake: ${where}: ${result.error}`,
      ...result.stderr.slice(0, 3).map((line) => `    agent stderr: ${oneLine(line, 200)}`),
    ];
  }
  const yes = (b: boolean) => (b ? "yes" : "no");
  const { agent, capabilities: c } = result;
  const who = [agent.title ?? agent.name ?? "an unnamed agent", agent.version].filter(Boolean).join(" ");
  const list = (names: string[]) =>
    names.length === 0
      ? "none"
      : names
          .slice(0, MAX_LISTED)
          .map((n) => oneLine(n, 60))
          .join(", ") + (names.length > MAX_LISTED ? `, …and ${names.length - MAX_LISTED} more` : "");
  return [
    `✓ agent handshake: ${who} (initialize, session/new, close in ${result.elapsedMs} ms)`,
    `    capabilities: loadSession ${c.loadSession ? "yes" : "no (after an idle close or a crash a conversation restarts without its context)"}, close ${yes(c.closeSession)}, steering ${yes(c.steering)}, images ${yes(c.image)}`,
    `    models: ${list(result.models)}`,
    `    commands: ${list(result.commands)}`,
  ];
}
