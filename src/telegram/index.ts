/**
 * Registry entry for Telegram: its config section, its secret, and a probe that imports no grammY.
 * The token comes only from TELEGRAM_BOT_TOKEN (the environment or $PARLEY_HOME/.env).
 */
import { z } from "zod";
import { defineChannel, secretOf } from "../messaging/channel/contract.js";
import { apiOrigin, idList, queueModeSetting } from "../messaging/channel/settings.js";

/** Telegram ids are integers (negative for supergroups); anything else can never match a sender. */
const TELEGRAM_ID = /^-?[0-9]{1,20}$/;
export const TELEGRAM_API_ROOT = "https://api.telegram.org";

export const telegramSettingsSchema = z.strictObject({
  enabled: z.boolean().optional(),
  /** Bot API base URL (a self-hosted Bot API server, tests). */
  apiRoot: apiOrigin(TELEGRAM_API_ROOT),
  /** Deny by default: an empty list authorizes nobody. */
  allowedUserIds: idList(TELEGRAM_ID, "Telegram user id"),
  /** The one user who may arm auto-approve and list sessions; default the sole allow-listed id. */
  owner: z.string().regex(TELEGRAM_ID, "not a Telegram user id").optional(),
  allowForum: z.boolean().default(false),
  /** Negative supergroup ids. */
  allowedForumChatIds: idList(TELEGRAM_ID, "Telegram chat id"),
  /** Anything but mention/off answers every Topic message. */
  forumActivation: z.enum(["always", "mention", "off"]).default("always"),
  queueMode: queueModeSetting,
  /** Telegram holds a long poll at most 50 s; asking for more just gets 50. */
  pollTimeoutSeconds: z.number().int().min(0).max(50).default(30),
  dmScope: z
    .enum(["per-channel-peer", "per-peer", "unified"])
    .default("per-channel-peer")
    .transform((v) => (v === "unified" ? "unified" : "per-channel-peer")),
});

export type TelegramSettings = z.infer<typeof telegramSettingsSchema>;
export type ForumActivation = TelegramSettings["forumActivation"];
export type TelegramDmScope = TelegramSettings["dmScope"];

export const telegramChannel = defineChannel<TelegramSettings>({
  name: "telegram",
  docs: "docs/channels/telegram.md",
  configSchema: telegramSettingsSchema,
  secretEnv: ["TELEGRAM_BOT_TOKEN"],
  settingEnv: { apiRoot: "TELEGRAM_API_ROOT" },
  securityKeys: ["apiRoot", "allowedUserIds", "owner", "allowForum", "allowedForumChatIds"],
  missing: (s, env) => [
    ...(secretOf(env, "TELEGRAM_BOT_TOKEN") ? [] : ["TELEGRAM_BOT_TOKEN"]),
    // The transport fails closed on an empty allow-list, so starting it would answer nobody.
    ...(s.allowedUserIds.length > 0 ? [] : ["telegram.allowedUserIds"]),
  ],
  load: () => import("./start.js"),
});
