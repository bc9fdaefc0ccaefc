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
import { AGENT_POOL_DEFAULTS } from "../providers/agent-pool.js";

const agentSchema = z.strictObject({
  command: z.string().min(1),
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
});

/** Platform ids as strings; a JSON number past 2^53 has already lost digits, so it is refused. */
const idList = z.array(
  z
    .union([
      z.string(),
      z.number().int().refine(Number.isSafeInteger, "id too large for a JSON number: quote it"),
    ])
    .transform(String),
);

export const configSchema = z.strictObject({
  agent: agentSchema.optional(),
  approvalMode: z.enum(["interactive", "auto", "trust", "trust-reads"]).default("interactive"),
  queueMode: z.enum(["steer", "queue"]).default("steer"),
  logLevel: z.enum(["debug", "info", "warn", "error"]).default("info"),
  softStopBudgetSeconds: z.number().min(0.5).max(60).default(10),
  webchat: z
    .strictObject({
      enabled: z.boolean().default(true),
      host: z.string().default("127.0.0.1"),
      port: z.number().int().min(0).max(65535).default(8787),
      /** Binding a non-loopback host must be asked for explicitly. */
      allowRemote: z.boolean().default(false),
    })
    .prefault({}),
  telegram: z
    .strictObject({
      enabled: z.boolean().optional(),
      apiRoot: z.string().url().optional(),
      allowedUserIds: idList.default([]),
      allowForum: z.boolean().default(false),
      /** Negative supergroup ids. */
      allowedForumChatIds: idList.default([]),
      forumActivation: z.enum(["always", "mention", "off"]).optional(),
      /** Unset: the gateway-wide queueMode. */
      queueMode: z.enum(["steer", "queue"]).optional(),
      pollTimeoutSeconds: z.number().int().min(0).max(50).default(30),
      dmScope: z.enum(["per-channel-peer", "per-peer", "unified"]).optional(),
    })
    .optional(),
  discord: z
    .strictObject({
      enabled: z.boolean().optional(),
      apiBase: z.string().url().optional(),
      allowedUserIds: idList.default([]),
      allowedThreadIds: idList.default([]),
      allowedChannelIds: idList.default([]),
      autoThread: z.boolean().default(false),
      reactionsEnabled: z.boolean().default(true),
      showThinking: z.boolean().default(false),
      queueMode: z.enum(["steer", "queue"]).optional(),
    })
    .optional(),
});

export type ParleyConfig = z.infer<typeof configSchema>;
export type AgentConfig = z.infer<typeof agentSchema>;

/** Secrets and env-driven settings, read once. Values are never logged. */
export type Env = Readonly<Record<string, string | undefined>>;

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
  home: string;
  env: Env;
}

export function loadConfig(opts: { cwd: string; configPath?: string; processEnv: Env }): LoadedConfig {
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
    const path = resolve(opts.cwd, opts.configPath);
    projectConfig = readJson(path);
    sources.push(path);
  } else {
    const path = join(opts.cwd, "parley.config.json");
    if (existsSync(path)) {
      projectConfig = readJson(path);
      sources.push(path);
    }
  }
  const parsed = configSchema.safeParse(mergeConfig(homeConfig, projectConfig));
  if (!parsed.success) {
    const where = sources.length ? sources.join(" + ") : "configuration";
    throw new ParleyError(
      "CONFIG_INVALID",
      `invalid ${where}:\n  ${describeConfigIssues(parsed.error).join("\n  ")}`,
    );
  }
  return { config: parsed.data, sources, home, env };
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
