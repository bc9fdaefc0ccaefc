/**
 * The `discord` config section and DISCORD_* environment, read defensively: this module does not own
 * the gateway's zod schema, so every key is validated here as well and a malformed value falls back
 * to the safe default (deny, off) with a reason, never a crash and never a widened allow-list.
 * The token comes only from DISCORD_BOT_TOKEN; it is never read from a config file.
 */
import type { QueueMode } from "../messaging/queue/mid-turn-router.js";
import { normalizeQueueMode } from "../messaging/queue/mid-turn-router.js";

export const DEFAULT_API_BASE = "https://discord.com/api";

export interface DiscordSettings {
  enabled: boolean;
  token: string;
  apiBase: string;
  allowedUserIds: ReadonlySet<string>;
  allowedThreadIds: ReadonlySet<string>;
  allowedChannelIds: ReadonlySet<string>;
  autoThread: boolean;
  reactionsEnabled: boolean;
  showThinking: boolean;
  queueMode: QueueMode;
  /** What was ignored and why (names only, never values). */
  problems: string[];
}

/** The two toggles re-read per turn: an operator expects the NEXT message to honour them. */
export interface RenderToggles {
  reactionsEnabled: boolean;
  showThinking: boolean;
}

export const DEFAULT_TOGGLES: RenderToggles = { reactionsEnabled: true, showThinking: false };

const SNOWFLAKE = /^\d{15,20}$/;

function ids(value: unknown, key: string, problems: string[]): Set<string> {
  if (value === undefined) return new Set();
  if (!Array.isArray(value)) {
    problems.push(`discord.${key} is not a list; treated as empty`);
    return new Set();
  }
  const out = new Set<string>();
  for (const v of value) {
    // Numbers past 2^53 have already lost digits by the time JSON.parse hands them over.
    const s = typeof v === "number" && Number.isSafeInteger(v) ? String(v) : v;
    if (typeof s === "string" && SNOWFLAKE.test(s)) out.add(s);
    else problems.push(`discord.${key} has an entry that is not a snowflake string; ignored`);
  }
  return out;
}

function bool(value: unknown, key: string, fallback: boolean, problems: string[]): boolean {
  if (value === undefined) return fallback;
  if (typeof value === "boolean") return value;
  problems.push(`discord.${key} is not a boolean; using ${fallback}`);
  return fallback;
}

function section(config: unknown): Record<string, unknown> {
  const s = (config as { discord?: unknown } | undefined)?.discord;
  return typeof s === "object" && s !== null && !Array.isArray(s) ? (s as Record<string, unknown>) : {};
}

export function readDiscordSettings(
  config: unknown,
  env: Readonly<Record<string, string | undefined>>,
): DiscordSettings {
  const s = section(config);
  const problems: string[] = [];
  const apiRaw = typeof s.apiBase === "string" ? s.apiBase : (env.DISCORD_API_BASE ?? "");
  let apiBase = DEFAULT_API_BASE;
  if (apiRaw) {
    if (/^https?:\/\/[^\s]+$/.test(apiRaw)) apiBase = apiRaw.replace(/\/+$/, "");
    else problems.push("discord.apiBase is not an http(s) URL; using the default");
  }
  const root = config as { queueMode?: unknown } | undefined;
  return {
    enabled: bool(s.enabled, "enabled", true, problems),
    token: (env.DISCORD_BOT_TOKEN ?? "").trim(),
    apiBase,
    allowedUserIds: ids(s.allowedUserIds, "allowedUserIds", problems),
    allowedThreadIds: ids(s.allowedThreadIds, "allowedThreadIds", problems),
    allowedChannelIds: ids(s.allowedChannelIds, "allowedChannelIds", problems),
    autoThread: bool(s.autoThread, "autoThread", false, problems),
    reactionsEnabled: bool(
      s.reactionsEnabled,
      "reactionsEnabled",
      DEFAULT_TOGGLES.reactionsEnabled,
      problems,
    ),
    showThinking: bool(s.showThinking, "showThinking", DEFAULT_TOGGLES.showThinking, problems),
    queueMode: normalizeQueueMode(s.queueMode ?? root?.queueMode),
    problems,
  };
}

/**
 * The live toggles. A failed read keeps the shipped defaults instead of failing the turn: neither
 * toggle is a security control.
 */
export function readToggles(config: () => unknown, onError: (error: unknown) => void): RenderToggles {
  try {
    const s = section(config());
    return {
      reactionsEnabled:
        typeof s.reactionsEnabled === "boolean" ? s.reactionsEnabled : DEFAULT_TOGGLES.reactionsEnabled,
      showThinking: typeof s.showThinking === "boolean" ? s.showThinking : DEFAULT_TOGGLES.showThinking,
    };
  } catch (error) {
    onError(error);
    return DEFAULT_TOGGLES;
  }
}
