/**
 * The `telegram` config section, read defensively: the gateway's zod schema owns validation, but
 * this channel must not depend on which of its keys the schema already knows, so every key is
 * re-read here with its default. Pure (no SDK): the registry probe imports it.
 */
import type { Env } from "../gateway/config.js";

export type ForumActivation = "always" | "mention" | "off";
export type TelegramDmScope = "per-channel-peer" | "unified";

export interface TelegramSettings {
  /** Default true when a token is present. */
  enabled: boolean;
  /** Only ever from TELEGRAM_BOT_TOKEN; never from a config file. */
  token: string;
  /** Bot API base URL (self-hosted servers, tests); undefined = Telegram's own. */
  apiRoot: string | undefined;
  /** Deny by default: an empty list authorizes nobody. */
  allowedUserIds: ReadonlySet<string>;
  allowForum: boolean;
  /** Supergroup ids (negative numbers), as strings. */
  allowedForumChatIds: ReadonlySet<string>;
  forumActivation: ForumActivation;
  /** Undefined = the gateway-wide queueMode. */
  queueMode: "steer" | "queue" | undefined;
  pollTimeoutSeconds: number;
  dmScope: TelegramDmScope;
}

export const DEFAULT_POLL_TIMEOUT_SECONDS = 30;
/** Telegram holds a long poll at most 50 s; asking for more just gets 50. */
const MAX_POLL_TIMEOUT_SECONDS = 50;

function idSet(value: unknown): Set<string> {
  if (!Array.isArray(value)) return new Set();
  const out = new Set<string>();
  for (const v of value) {
    const s =
      typeof v === "number" && Number.isInteger(v) ? String(v) : typeof v === "string" ? v.trim() : "";
    // Telegram ids are integers (negative for supergroups); anything else can never match a sender.
    if (/^-?[0-9]{1,20}$/.test(s)) out.add(s);
  }
  return out;
}

/** Anything but mention/off answers always, matching the spec's normalization. */
export function normalizeForumActivation(value: unknown): ForumActivation {
  return value === "mention" || value === "off" ? value : "always";
}

export function readTelegramSettings(section: unknown, env: Env): TelegramSettings {
  const s = (typeof section === "object" && section !== null ? section : {}) as Record<string, unknown>;
  const token = env.TELEGRAM_BOT_TOKEN?.trim() ?? "";
  // The environment wins, so one process (a test, a staging run) can be pointed elsewhere.
  const apiRootRaw =
    env.TELEGRAM_API_ROOT?.trim() || (typeof s.apiRoot === "string" && s.apiRoot) || undefined;
  const poll = typeof s.pollTimeoutSeconds === "number" ? s.pollTimeoutSeconds : DEFAULT_POLL_TIMEOUT_SECONDS;
  return {
    enabled: typeof s.enabled === "boolean" ? s.enabled : token !== "",
    token,
    // grammY refuses a trailing slash; an operator's copy-paste should not stop the channel.
    apiRoot: apiRootRaw?.replace(/\/+$/, ""),
    allowedUserIds: idSet(s.allowedUserIds),
    allowForum: s.allowForum === true,
    allowedForumChatIds: idSet(s.allowedForumChatIds),
    forumActivation: normalizeForumActivation(s.forumActivation),
    queueMode: s.queueMode === "queue" || s.queueMode === "steer" ? s.queueMode : undefined,
    pollTimeoutSeconds: Number.isFinite(poll)
      ? Math.max(0, Math.min(MAX_POLL_TIMEOUT_SECONDS, Math.floor(poll)))
      : DEFAULT_POLL_TIMEOUT_SECONDS,
    dmScope: s.dmScope === "unified" ? "unified" : "per-channel-peer",
  };
}
