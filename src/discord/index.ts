/**
 * Registry entry for Discord: the probe reads config and env only (no discord.js import), so an
 * unconfigured Discord costs nothing; load() brings in the SDK.
 */
import type { ChannelEntry, ChannelProbe } from "../gateway/channel.js";
import type { Env, ParleyConfig } from "../gateway/config.js";
import { readDiscordSettings } from "./settings.js";

export function probeDiscord(config: ParleyConfig, env: Env): ChannelProbe {
  const section: unknown = (config as { discord?: unknown }).discord;
  const s = readDiscordSettings(config, env);
  if ((section as { enabled?: unknown } | undefined)?.enabled === false) return { status: "disabled" };
  if (!s.token && !section) return { status: "disabled", note: "set DISCORD_BOT_TOKEN to enable" };
  const missing: string[] = [];
  if (!s.token) missing.push("DISCORD_BOT_TOKEN");
  // The transport fails closed on an empty allow-list, so starting it would answer nobody.
  if (s.allowedUserIds.size === 0) missing.push("discord.allowedUserIds");
  return missing.length ? { status: "incomplete", missing } : { status: "configured" };
}

export const discordChannel: ChannelEntry = {
  name: "discord",
  docs: "docs/channels/discord.md",
  configured: probeDiscord,
  async load() {
    return import("./channel.js");
  },
};
