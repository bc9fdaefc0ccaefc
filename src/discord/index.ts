/**
 * Registry entry for Discord: its config section, its secret, and a probe that imports no
 * discord.js. The token comes only from DISCORD_BOT_TOKEN (the environment or $PARLEY_HOME/.env).
 */
import { z } from "zod";
import { defineChannel, secretOf } from "../messaging/channel/contract.js";
import { apiOrigin, idList, queueModeSetting } from "../messaging/channel/settings.js";

export const DISCORD_API_BASE = "https://discord.com/api";
const SNOWFLAKE = /^\d{15,20}$/;

export const discordSettingsSchema = z.strictObject({
  enabled: z.boolean().optional(),
  apiBase: apiOrigin(DISCORD_API_BASE),
  allowedUserIds: idList(SNOWFLAKE, "Discord snowflake"),
  /** The one user who may arm auto-approve and list sessions; default the sole allow-listed id. */
  owner: z.string().regex(SNOWFLAKE, "not a Discord snowflake").optional(),
  allowedThreadIds: idList(SNOWFLAKE, "Discord snowflake"),
  allowedChannelIds: idList(SNOWFLAKE, "Discord snowflake"),
  autoThread: z.boolean().default(false),
  reactionsEnabled: z.boolean().default(true),
  showThinking: z.boolean().default(false),
  queueMode: queueModeSetting,
});

export type DiscordSettings = z.infer<typeof discordSettingsSchema>;

export const discordChannel = defineChannel<DiscordSettings>({
  name: "discord",
  docs: "docs/channels/discord.md",
  configSchema: discordSettingsSchema,
  secretEnv: ["DISCORD_BOT_TOKEN"],
  settingEnv: { apiBase: "DISCORD_API_BASE" },
  securityKeys: ["apiBase", "allowedUserIds", "owner", "allowedThreadIds", "allowedChannelIds", "autoThread"],
  missing: (s, env) => [
    ...(secretOf(env, "DISCORD_BOT_TOKEN") ? [] : ["DISCORD_BOT_TOKEN"]),
    // The transport fails closed on an empty allow-list, so starting it would answer nobody.
    ...(s.allowedUserIds.length > 0 ? [] : ["discord.allowedUserIds"]),
  ],
  load: () => import("./start.js"),
});
