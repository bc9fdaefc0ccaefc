/**
 * Registry entry for Feishu/Lark: its config section, its secret, and a probe that imports no SDK.
 * One self-built app with the bot ability; events arrive over the SDK's long connection, so parley
 * needs no public URL. The app secret comes only from FEISHU_APP_SECRET (the environment or
 * $PARLEY_HOME/.env); `feishu.domain` is the one origin it is ever sent to.
 */
import { z } from "zod";
import type { Env } from "../messaging/channel/contract.js";
import { defineChannel, secretOf } from "../messaging/channel/contract.js";
import { idList } from "../messaging/channel/settings.js";
import { domainSetting } from "./domain.js";

/** The SDK's own check on an app id (its long connection refuses anything else). */
export const FEISHU_APP_ID = /^cli_[0-9a-f]{16}$/i;
/** A user's open_id (per app): what the allow-list holds and a DM is keyed on. */
export const FEISHU_OPEN_ID = /^ou_[0-9A-Za-z_-]{8,64}$/;
/** A chat's id (a group, or the chat behind a DM). */
export const FEISHU_CHAT_ID = /^oc_[0-9A-Za-z_-]{8,64}$/;

export const feishuSettingsSchema = z.strictObject({
  enabled: z.boolean().optional(),
  appId: z.string().trim().regex(FEISHU_APP_ID, "not a Feishu app id (cli_ and 16 hex digits)").optional(),
  /** `feishu`, `lark`, or an https origin: REST and the long connection's discovery both go there. */
  domain: domainSetting,
  /** Deny by default: an empty list answers nobody. */
  allowedOpenIds: idList(FEISHU_OPEN_ID, "Feishu open_id (ou_…)"),
  /** The one person who may arm auto-approve; default the sole allow-listed open_id. */
  owner: z.string().trim().regex(FEISHU_OPEN_ID, "not a Feishu open_id (ou_…)").optional(),
  /** Groups are answered only when this is on AND the group is listed in allowedGroupIds. */
  allowGroup: z.boolean().default(false),
  allowedGroupIds: idList(FEISHU_CHAT_ID, "Feishu chat_id (oc_…)"),
  dmScope: z
    .enum(["per-channel-peer", "per-peer", "unified"])
    .default("per-channel-peer")
    .transform((v) => (v === "unified" ? "unified" : "per-channel-peer")),
});

export type FeishuSettings = z.infer<typeof feishuSettingsSchema>;
export type FeishuDmScope = FeishuSettings["dmScope"];

const missingFeishu = (s: FeishuSettings, env: Env): string[] => [
  ...(s.appId ? [] : ["feishu.appId (or FEISHU_APP_ID)"]),
  ...(secretOf(env, "FEISHU_APP_SECRET") ? [] : ["FEISHU_APP_SECRET"]),
  // The transport fails closed on an empty allow-list, so starting it would answer nobody.
  ...(s.allowedOpenIds.length > 0 ? [] : ["feishu.allowedOpenIds"]),
];

export const feishuChannel = defineChannel<FeishuSettings>({
  name: "feishu",
  docs: "docs/channels/feishu.md",
  configSchema: feishuSettingsSchema,
  secretEnv: ["FEISHU_APP_SECRET"],
  settingEnv: { appId: "FEISHU_APP_ID", domain: "FEISHU_DOMAIN" },
  securityKeys: ["domain", "allowedOpenIds", "owner", "allowGroup", "allowedGroupIds"],
  missing: missingFeishu,
  load: () => import("./start.js"),
  // Asks Feishu only once the section is complete: an incomplete one is reported by its status line.
  doctor: async ({ settings, env }) =>
    missingFeishu(settings, env).length > 0
      ? { healthy: true, lines: [] }
      : (await import("./check.js")).checkFeishu(settings, env),
});
