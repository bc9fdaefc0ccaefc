/**
 * Registry entry for Telegram: the probe reads config and env only (no grammY import), so an
 * unconfigured Telegram costs nothing; load() brings in the SDK.
 */
import type { ChannelEntry, ChannelProbe } from "../gateway/channel.js";
import type { Env, ParleyConfig } from "../gateway/config.js";
import { readTelegramSettings } from "./settings.js";

export function probeTelegram(config: ParleyConfig, env: Env): ChannelProbe {
  const section: unknown = config.telegram;
  const s = readTelegramSettings(section, env);
  const explicitlyOff = (section as { enabled?: unknown } | undefined)?.enabled === false;
  if (explicitlyOff) return { status: "disabled" };
  // A prepared section without a token is reported as incomplete, so doctor names what is missing.
  if (!s.token && !section) return { status: "disabled", note: "set TELEGRAM_BOT_TOKEN to enable" };
  const missing: string[] = [];
  if (!s.token) missing.push("TELEGRAM_BOT_TOKEN");
  // The transport fails closed on an empty allow-list, so starting it would answer nobody.
  if (s.allowedUserIds.size === 0) missing.push("telegram.allowedUserIds");
  return missing.length ? { status: "incomplete", missing } : { status: "configured" };
}

export const telegramChannel: ChannelEntry = {
  name: "telegram",
  docs: "docs/channels/telegram.md",
  configured: probeTelegram,
  async load() {
    return import("./channel.js");
  },
};
