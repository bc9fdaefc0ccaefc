/**
 * Configuration: parley.config.json (working directory or --config) merged over
 * $PARLEY_HOME/config.json, the project entry winning per key. Validated with zod so a typo names
 * the bad key and what was expected. Secrets never live in config files: only in the environment
 * or $PARLEY_HOME/.env. This is the only module that reads process.env.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { z } from "zod";
import { ParleyError } from "../messaging/base/errors.js";
import type { ChannelEntry, ChannelSettings, Env } from "../messaging/channel/contract.js";
import { DEFAULT_CONTEXT_THRESHOLDS } from "../messaging/session/context-thresholds.js";
import { DEFAULT_RETENTION } from "../messaging/store/retention.js";
import { AGENT_POOL_DEFAULTS } from "../providers/agent-pool.js";
import { CHANNELS } from "./registry.js";

const agentSchema = z.strictObject({
  /** Unset: the bundled demo agent (the pool settings below still apply to it). */
  command: z.string().min(1).optional(),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().optional(),
  // The pool of agent processes; defaults and their reasons: AGENT_POOL_DEFAULTS (agent-pool.ts).
  maxProcesses: z.number().int().min(1).max(64).default(AGENT_POOL_DEFAULTS.maxProcesses),
  maxSessionsPerProcess: z.number().int().min(1).max(1024).default(AGENT_POOL_DEFAULTS.maxSessionsPerProcess),
  /** An idle conversation's agent session is closed after this long (resumed on its next message); 0 = never. */
  idleTimeoutSeconds: z.number().min(0).default(AGENT_POOL_DEFAULTS.idleTimeoutSeconds),
  /** A turn with no agent output for this long gets a "no output for N s; /stop ends it" notice; 0 = never. */
  silenceNoticeSeconds: z.number().min(0).default(AGENT_POOL_DEFAULTS.silenceNoticeSeconds),
  // Context thresholds (percent of the agent's window; reasons: DEFAULT_CONTEXT_THRESHOLDS).
  /** Past this the conversation is told once that its context is filling up; 0 = never. */
  contextSoftPct: z.number().min(0).max(100).default(DEFAULT_CONTEXT_THRESHOLDS.softPct),
  /** Past this it is compacted automatically when the agent offers compaction; 0 = never. */
  contextHardPct: z.number().min(0).max(100).default(DEFAULT_CONTEXT_THRESHOLDS.hardPct),
});

/** A soft threshold at or above the hard one could never be the earlier warning it is meant to be. */
const agentSettingsSchema = agentSchema.refine(
  (a) => a.contextSoftPct === 0 || a.contextHardPct === 0 || a.contextSoftPct < a.contextHardPct,
  { message: "contextSoftPct must be below contextHardPct (or either 0 for off)", path: ["contextSoftPct"] },
);

/** How long conversation history is kept (the transcripts); see docs/store.md. */
const transcriptsSchema = z.strictObject({
  /**
   * Days a transcript line is kept: 30 by default (DEFAULT_RETENTION), enough for /history, a
   * reloaded web chat and resume's replay, without the gateway becoming a permanent archive of
   * private chats. null keeps history until `parley transcripts purge`.
   */
  retainDays: z.number().min(0).nullable().default(DEFAULT_RETENTION.transcriptsRetainDays),
});

/** What a restart does with messages it finds accepted but unanswered (accept-before-ack). */
const intakeSchema = z.strictObject({
  /**
   * An unanswered message older than this is not run after a restart; its sender is told to send it
   * again. 15 minutes: a crash, a restart loop or an upgrade is well inside it, and an answer (and
   * the tools it runs) arriving much later than that would surprise the person who asked.
   */
  staleAfterMinutes: z.number().min(0).default(15),
  /** A message whose turn was started this many times and never finished (each run cut short by the gateway dying) is not run again. */
  maxAttempts: z.number().int().min(1).max(100).default(3),
});

/** Where audit rows go besides the store. */
const auditSchema = z.strictObject({
  /** Also append every audit row to $PARLEY_HOME/audit.jsonl (for operators who ship log files). */
  jsonl: z.boolean().default(true),
});

/** Where the state lives: absent, SQLite in the data home (zero-config); docs/scale-out.md. */
const storeSchema = z.strictObject({
  /** `postgres://…`: the store several gateways share (or PARLEY_DATABASE_URL, which keeps the password out of files). */
  url: z
    .string()
    .regex(/^postgres(ql)?:\/\//i, "a postgres:// or postgresql:// URL")
    .optional(),
});

/** Several gateways on one PostgreSQL store (docs/scale-out.md). */
const clusterSchema = z.strictObject({
  /**
   * A gateway that stops renewing its lease this long is taken for dead and its conversations and
   * single connections move. 15 s by default; at most 20 s, so a takeover (lease + one heartbeat of
   * a third of it) stays within 30 s; at least 3 s, so a busy database does not look like a death.
   */
  leaseSeconds: z.number().min(3).max(20).default(15),
  /** How often messages journaled by other gateways for conversations served here are picked up. */
  pickUpMs: z.number().int().min(100).max(10_000).default(1000),
  /** This gateway's name in the member list (default: the host name; a per-run suffix is added). */
  name: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, "letters, digits, '.', '_' and '-'")
    .optional(),
});

/** Telling the channel owners when something goes wrong (docs/operations.md, "Owner alerts"). */
const alertsSchema = z.strictObject({
  enabled: z.boolean().default(true),
  /**
   * A channel down this long is reported. 5 minutes: a platform's brief hiccup or a reconnect
   * (seconds) says nothing, an outage that keeps messages from arriving is heard of in time.
   */
  channelDownMinutes: z
    .number()
    .min(0.1)
    .max(24 * 60)
    .default(5),
  /** This many failed turns in a row (the agent erred, not a /stop) are reported; one is a bad turn, three a broken agent. */
  agentFailures: z.number().int().min(1).max(1000).default(3),
});

/** A name an agent or a person types: a target, a configured schedule. */
const configName = z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/i, "a name: letters, digits, - and _");

/**
 * Destinations by name, `<channel>:<target id>` (`telegram:dm:123456`, `discord:dm:<user id>`):
 * what the agent's send_message and `/link <target>` may name. The agent sees only the names; the
 * channel re-applies its allow-list when one is used.
 */
const targetsSchema = z
  .record(
    configName,
    z.string().regex(/^[a-z][a-z0-9_-]*:\S+$/, "<channel>:<target id>, e.g. telegram:dm:123456"),
  )
  .default({});

/** Scheduled prompts from the configuration: `every` ("1h") or `at` ("2025-06-01 09:00"), to a target. */
const schedulesSchema = z
  .record(
    configName,
    z
      .strictObject({
        every: z.string().optional(),
        at: z.string().optional(),
        prompt: z.string().min(1),
        /** A name from `targets`: where each answer goes. */
        deliverTo: configName,
      })
      .refine((j) => (j.every === undefined) !== (j.at === undefined), {
        message: "give exactly one of every and at",
      }),
  )
  .default({});

/** What the ACP agent is offered at session/new: parley's send_message and send_file tools. */
const agentToolsSchema = z.strictObject({ enabled: z.boolean().default(true) });

/** `parley channel-server`: parley as a channel server for an agent host (docs/channel-server.md). */
const channelServerSchema = z.strictObject({
  /** A wake carries who, where and a locator, never the message body (read with channel_read). */
  bodyFreeWakes: z.boolean().default(true),
  /** Messages of one conversation arriving within this window become one wake (meta.count). */
  coalesceMs: z.number().int().min(0).max(60_000).default(750),
  /** A locator older than this is stale. */
  locatorTtlDays: z.number().min(0.001).max(365).default(7),
  /** Where a permission request goes when no conversation has spoken yet: a name from `targets`. */
  permissionTarget: configName.optional(),
  /** An unanswered permission request is denied after this long. */
  permissionTimeoutSeconds: z.number().min(5).max(3600).default(300),
});

/** The gateway-wide keys; every channel's section is composed in from the registry. */
const coreShape = {
  agent: agentSettingsSchema.optional(),
  transcripts: transcriptsSchema.prefault({}),
  intake: intakeSchema.prefault({}),
  audit: auditSchema.prefault({}),
  store: storeSchema.prefault({}),
  cluster: clusterSchema.prefault({}),
  approvalMode: z.enum(["interactive", "auto", "trust", "trust-reads"]).default("interactive"),
  queueMode: z.enum(["steer", "queue"]).default("steer"),
  logLevel: z.enum(["debug", "info", "warn", "error"]).default("info"),
  softStopBudgetSeconds: z.number().min(0.5).max(60).default(10),
  targets: targetsSchema,
  schedules: schedulesSchema,
  agentTools: agentToolsSchema.prefault({}),
  channelServer: channelServerSchema.prefault({}),
  alerts: alertsSchema.prefault({}),
  /** A conversation idle this many minutes starts a fresh session with its next message (0: never). */
  idleResetMinutes: z.number().min(0).default(0),
  /** A conversation starts a fresh session with its first message after this local hour (null: never). */
  dailyResetHour: z.number().int().min(0).max(23).nullable().default(null),
};
const coreSchema = z.strictObject(coreShape);

/**
 * Keys that decide what runs, who is admitted and where credentials go. They are accepted only from
 * trusted configuration ($PARLEY_HOME/config.json, an explicit --config, the command line), never
 * from a parley.config.json in the working directory: that directory is the agent's default
 * working folder, so one approved file write (or an untrusted repository) could otherwise turn
 * approvals off or send a bot token to a server of its choosing (or, with `audit`, `transcripts`
 * and `alerts`, switch off the audit file an operator ships, erase the history, or silence alerts).
 */
export const CORE_SECURITY_KEYS: readonly string[] = [
  "agent",
  "approvalMode",
  "audit",
  "transcripts",
  // Where all state is kept and shared (a database URL may carry a password).
  "store",
  "cluster",
  // Where messages may be sent, what runs unattended, what the agent is offered, what a host gets.
  "targets",
  "schedules",
  "agentTools",
  "channelServer",
  // Whether the operator hears of an outage: a working-directory file must not silence it.
  "alerts",
];

export type CoreConfig = z.infer<typeof coreSchema>;
/** The validated configuration: the core keys plus each known channel's section, defaults applied. */
export interface ParleyConfig extends CoreConfig {
  channels: Readonly<Record<string, ChannelSettings>>;
}
export type AgentConfig = z.infer<typeof agentSchema>;
export type AlertSettings = z.infer<typeof alertsSchema>;

export function parleyHome(env: Env): string {
  return resolve(env.PARLEY_HOME || join(homedir(), ".parley"));
}

/** Parse a dotenv file: KEY=VALUE lines, # comments, optional quotes. The environment wins. */
export function parseDotenv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!m) continue;
    let value = (m[2] as string).trim();
    if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))) {
      value = value.slice(1, -1);
    }
    out[m[1] as string] = value;
  }
  return out;
}

/** The effective environment: $PARLEY_HOME/.env under the process environment. */
export function loadEnv(processEnv: Env): Env {
  const path = join(parleyHome(processEnv), ".env");
  const fromFile = existsSync(path) ? parseDotenv(readFileSync(path, "utf8")) : {};
  return { ...fromFile, ...processEnv };
}

function readJson(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ParleyError("CONFIG_INVALID", `cannot read config file ${path}: ${(error as Error).message}`);
  }
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw new Error("not a JSON object");
    return value as Record<string, unknown>;
  } catch (error) {
    throw new ParleyError(
      "CONFIG_INVALID",
      `config file ${path} is not valid JSON: ${(error as Error).message}`,
    );
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Project over home, per key, recursively for objects (arrays and scalars replace). */
export function mergeConfig(
  home: Record<string, unknown>,
  project: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...home };
  for (const [key, value] of Object.entries(project)) {
    const base = out[key];
    out[key] = isPlainObject(base) && isPlainObject(value) ? mergeConfig(base, value) : value;
  }
  return out;
}

/** Turn zod issues into one line per problem, naming the key path and what was expected. */
export function describeConfigIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const path = issue.path.join(".") || "(root)";
    if (issue.code === "unrecognized_keys") {
      const keys = issue.keys.map((k) => (path === "(root)" ? k : `${path}.${k}`));
      return `unknown key ${keys.map((k) => `"${k}"`).join(", ")}`;
    }
    return `"${path}": ${issue.message}`;
  });
}

export interface LoadedConfig {
  config: ParleyConfig;
  /** Files that contributed, in merge order. */
  sources: string[];
  /** Channels whose section appears in a config file (a prepared, incomplete section is reported). */
  present: ReadonlySet<string>;
  home: string;
  env: Env;
}

/** A channel's section with the environment's settings laid over it (the environment wins). */
function withEnvSettings(entry: ChannelEntry, section: unknown, env: Env): unknown {
  const base = isPlainObject(section) ? { ...section } : section;
  if (!entry.settingEnv || !isPlainObject(base)) return base;
  for (const [key, name] of Object.entries(entry.settingEnv)) {
    const value = env[name]?.trim();
    if (value) base[key] = value;
  }
  return base;
}

/** One channel's settings as the gateway derives them: its section, the environment laid over it, parsed. */
export function channelSettingsOf(entry: ChannelEntry, section: unknown, env: Env): ChannelSettings {
  return entry.configSchema.parse(withEnvSettings(entry, section ?? {}, env));
}

/**
 * Validate a merged raw configuration: the core keys and, per registered channel, its own schema
 * (strict, so a typo in any section is named with its path). A channel section absent from the
 * files still parses from {} so its defaults and environment settings apply.
 */
export function parseConfig(
  raw: Record<string, unknown>,
  env: Env,
  channels: readonly ChannelEntry[] = CHANNELS,
): ParleyConfig {
  const shape: Record<string, z.ZodType> = { ...coreShape };
  for (const entry of channels) shape[entry.name] = entry.configSchema;
  const input: Record<string, unknown> = { ...raw };
  for (const entry of channels) input[entry.name] = withEnvSettings(entry, raw[entry.name] ?? {}, env);
  const parsed = z.strictObject(shape).safeParse(input);
  if (!parsed.success)
    throw new ParleyError("CONFIG_INVALID", describeConfigIssues(parsed.error).join("\n  "));
  const data = parsed.data as Record<string, unknown>;
  const sections: Record<string, ChannelSettings> = {};
  for (const entry of channels) sections[entry.name] = data[entry.name] as ChannelSettings;
  return { ...(coreSchema.parse(pick(data, Object.keys(coreShape))) as CoreConfig), channels: sections };
}

function pick(data: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) if (data[key] !== undefined) out[key] = data[key];
  return out;
}

/** Security keys a raw config sets, as dotted paths (core keys, then each channel's own). */
export function securityKeysIn(raw: Record<string, unknown>, channels: readonly ChannelEntry[]): string[] {
  const found = CORE_SECURITY_KEYS.filter((key) => raw[key] !== undefined);
  for (const entry of channels) {
    const section = raw[entry.name];
    if (!isPlainObject(section)) continue;
    for (const key of entry.securityKeys ?? [])
      if (section[key] !== undefined) found.push(`${entry.name}.${key}`);
  }
  return found;
}

export function loadConfig(opts: {
  cwd: string;
  configPath?: string;
  processEnv: Env;
  /** The command line's settings: trusted, and laid over every file. */
  overrides?: Record<string, unknown>;
  channels?: readonly ChannelEntry[];
}): LoadedConfig {
  const channels = opts.channels ?? CHANNELS;
  const env = loadEnv(opts.processEnv);
  const home = parleyHome(env);
  const sources: string[] = [];
  const homePath = join(home, "config.json");
  let homeConfig: Record<string, unknown> = {};
  if (existsSync(homePath)) {
    homeConfig = readJson(homePath);
    sources.push(homePath);
  }
  let projectConfig: Record<string, unknown> = {};
  if (opts.configPath) {
    // Named on the command line by the operator: trusted like the home file.
    const path = resolve(opts.cwd, opts.configPath);
    projectConfig = readJson(path);
    sources.push(path);
  } else {
    const path = join(opts.cwd, "parley.config.json");
    if (existsSync(path)) {
      projectConfig = readJson(path);
      const refused = securityKeysIn(projectConfig, channels);
      if (refused.length > 0)
        throw new ParleyError(
          "CONFIG_INVALID",
          `${path} sets ${refused.map((k) => `"${k}"`).join(", ")}: security settings (what runs, who is admitted, where tokens go) are read only from ${homePath} or a file named with --config, never from the working directory. Move ${refused.length === 1 ? "it" : "them"} there.`,
        );
      sources.push(path);
    }
  }
  const merged = mergeConfig(mergeConfig(homeConfig, projectConfig), opts.overrides ?? {});
  let config: ParleyConfig;
  try {
    config = parseConfig(merged, env, channels);
  } catch (error) {
    const where = sources.length ? sources.join(" + ") : "configuration";
    throw new ParleyError("CONFIG_INVALID", `invalid ${where}:\n  ${(error as Error).message}`);
  }
  const present = new Set(channels.filter((e) => merged[e.name] !== undefined).map((e) => e.name));
  return { config, sources, present, home, env };
}

/** Split an --agent "COMMAND ARGS…" string (shell-like quoting, no expansion). */
export function parseAgentCommand(line: string): { command: string; args: string[] } {
  const parts: string[] = [];
  let cur = "";
  let quote: '"' | "'" | null = null;
  let any = false;
  for (const c of line) {
    if (quote) {
      if (c === quote) quote = null;
      else cur += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      any = true;
    } else if (/\s/.test(c)) {
      if (cur || any) parts.push(cur);
      cur = "";
      any = false;
    } else cur += c;
  }
  if (quote) throw new ParleyError("CONFIG_INVALID", `unterminated quote in --agent "${line}"`);
  if (cur || any) parts.push(cur);
  const [command, ...args] = parts;
  if (!command) throw new ParleyError("CONFIG_INVALID", "--agent needs a command");
  return { command, args };
}
