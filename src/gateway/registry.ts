/**
 * The channels this build knows. Each entry is a dependency-free probe plus a lazy loader, so an
 * unconfigured channel costs nothing and a broken one cannot stop the others.
 */
import { ParleyError } from "../messaging/errors.js";
import { webchatChannel } from "../webchat/index.js";
import type { ChannelEntry, ChannelProbe } from "./channel.js";
import type { Env, ParleyConfig } from "./config.js";

/** A token-and-allow-list channel: configured when both are present; an empty allow-list denies all. */
function tokenProbe(
  section: { enabled?: boolean | undefined; allowedUserIds: string[] } | undefined,
  env: Env,
  tokenVar: string,
  allowKey: string,
): ChannelProbe {
  const hasToken = Boolean(env[tokenVar]);
  if (section?.enabled === false) return { status: "disabled" };
  if (!hasToken && !section) return { status: "disabled", note: `set ${tokenVar} to enable` };
  const missing: string[] = [];
  if (!hasToken) missing.push(tokenVar);
  if (!section?.allowedUserIds.length) missing.push(allowKey);
  return missing.length ? { status: "incomplete", missing } : { status: "configured" };
}

/** Channels whose issue has not landed yet: probed (so doctor can report them), never started. */
function notYetAvailable(name: string): () => Promise<never> {
  return async () => {
    throw new ParleyError(
      "CONFIG_INVALID",
      `the ${name} channel is not available in this build yet; disable it or remove its token`,
    );
  };
}

export const CHANNELS: readonly ChannelEntry[] = [
  webchatChannel,
  {
    name: "telegram",
    docs: "docs/channels/telegram.md",
    configured: (config: ParleyConfig, env: Env) =>
      tokenProbe(config.telegram, env, "TELEGRAM_BOT_TOKEN", "telegram.allowedUserIds"),
    load: notYetAvailable("telegram"),
  },
  {
    name: "discord",
    docs: "docs/channels/discord.md",
    configured: (config: ParleyConfig, env: Env) =>
      tokenProbe(config.discord, env, "DISCORD_BOT_TOKEN", "discord.allowedUserIds"),
    load: notYetAvailable("discord"),
  },
];
