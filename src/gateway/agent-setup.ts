/**
 * The agent a gateway runs and the environment it starts from: the configured ACP agent (or the
 * bundled demo agent) with the pool defaults, and parley's environment without any channel's
 * secret. Shared by the gateway and doctor.
 */
import type { ChannelEntry, Env } from "../messaging/channel/contract.js";
import { DEFAULT_CONTEXT_THRESHOLDS } from "../messaging/session/context-thresholds.js";
import { AGENT_POOL_DEFAULTS } from "../providers/agent-pool.js";
import { demoAgentCommand } from "../providers/demo-command.js";
import type { AgentConfig, ParleyConfig } from "./config.js";
import { CHANNELS } from "./registry.js";

/** The agent to run: the configured one, else the bundled demo agent (with the pool defaults). */
export function resolveAgent(config: ParleyConfig): AgentConfig & { command: string } {
  const pool = {
    ...AGENT_POOL_DEFAULTS,
    contextSoftPct: DEFAULT_CONTEXT_THRESHOLDS.softPct,
    contextHardPct: DEFAULT_CONTEXT_THRESHOLDS.hardPct,
    args: [],
    env: {},
    ...config.agent,
  };
  if (config.agent?.command) return { ...pool, command: config.agent.command };
  const demo = demoAgentCommand();
  return { ...pool, command: demo.command, args: demo.args, env: {} };
}

/**
 * Prefixes of parley's own settings and channel secrets, scrubbed as well as each entry's declared
 * names: a secret a channel reads but forgot to declare must not reach the agent either.
 */
const CHANNEL_SECRET_PREFIXES = [
  "TELEGRAM_",
  "DISCORD_",
  "SLACK_",
  "WEBEX_",
  "WECOM_",
  "TEAMS_",
  "MSTEAMS_",
  "FEISHU_",
  "LARK_",
  "WHATSAPP_",
  "IMESSAGE_",
  "PARLEY_",
];

/** The environment an agent starts from: parley's, minus every channel's declared secrets. */
export function agentBaseEnv(env: Env, channels: readonly ChannelEntry[] = CHANNELS): Record<string, string> {
  const declared = new Set(channels.flatMap((c) => c.secretEnv));
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    const upper = name.toUpperCase();
    if (value === undefined || declared.has(name) || CHANNEL_SECRET_PREFIXES.some((p) => upper.startsWith(p)))
      continue;
    out[name] = value;
  }
  return out;
}
