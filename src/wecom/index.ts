/**
 * Registry entry for WeCom (the AI-bot long connection): its config section, its two secrets, a
 * probe and doctor lines that import no `ws`. WECOM_BOT_ID and WECOM_SECRET come only from the
 * environment (or $PARLEY_HOME/.env); the secret is sent in the subscribe frame and nowhere else.
 */
import { z } from "zod";
import type { Env } from "../messaging/channel/contract.js";
import { defineChannel, secretOf } from "../messaging/channel/contract.js";
import { idList } from "../messaging/channel/settings.js";
import { describeHealth, maskId, readHealth } from "./health.js";
import { admissibleSocketUrl, parseOrigin, WECOM_MEDIA_HOSTS } from "./origins.js";

export const WECOM_WS_URL = "wss://openws.work.weixin.qq.com";
/** A WeCom userid: letters, digits and . _ @ -, at most 64 (anything else can never match a sender). */
const USERID = /^[A-Za-z0-9._@-]{1,64}$/;

/** A list from the config file, or a comma-separated environment value (WECOM_MEDIA_HOSTS). */
const commaList = (v: unknown) =>
  typeof v === "string"
    ? v
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : v;

/** An allow-list entry as a userid, or as `{ userid, name }` (the name is for the operator only). */
const userEntries = z.preprocess(
  (v) =>
    Array.isArray(v)
      ? v.map((e) =>
          typeof e === "object" && e !== null && "userid" in e ? (e as { userid: unknown }).userid : e,
        )
      : v,
  idList(USERID, "WeCom userid"),
);

export const wecomSettingsSchema = z.strictObject({
  enabled: z.boolean().optional(),
  /** The long-connection endpoint; the secret rides on it, so ws:// is accepted only on loopback. */
  wsUrl: z
    .string()
    .trim()
    .refine(admissibleSocketUrl, "not a wss:// URL (ws:// is accepted only on a loopback host)")
    .default(WECOM_WS_URL),
  /** Origins media and response_url may be fetched from / posted to (https; http only on loopback). */
  mediaHosts: z.preprocess(
    commaList,
    z
      .array(
        z
          .string()
          .refine((e) => parseOrigin(e) !== null, "not an https host or origin (http only on loopback)"),
      )
      .default([...WECOM_MEDIA_HOSTS]),
  ),
  /** Deny by default: an empty list authorizes nobody. */
  allowedUsers: userEntries,
  /** The explicit allow-everyone opt-in; a frame with no userid is still refused. */
  allowAllUsers: z.boolean().default(false),
  /** The one user who may arm auto-approve and list sessions; default the sole allow-listed userid. */
  owner: z.string().trim().regex(USERID, "not a WeCom userid").optional(),
});

export type WeComSettings = z.infer<typeof wecomSettingsSchema>;

/** What `parley doctor` adds under the WeCom line: the origin, the bot (masked), the last verdict. */
export function wecomDoctorLines(s: WeComSettings, env: Env, home: string): string[] {
  const botId = secretOf(env, "WECOM_BOT_ID");
  const last = readHealth(home);
  const who = s.allowAllUsers
    ? "everyone (wecom.allowAllUsers)"
    : `${s.allowedUsers.length} userid${s.allowedUsers.length === 1 ? "" : "s"}`;
  return [
    `origin: ${s.wsUrl}`,
    `bot id: ${botId ? maskId(botId) : "not set"}`,
    `allow-list: ${who}`,
    `media hosts: ${s.mediaHosts.join(", ")}`,
    last
      ? `last verdict: ${describeHealth(last)} at ${new Date(last.at).toISOString()}`
      : "last verdict: none recorded yet (the channel has not connected from this data home)",
  ];
}

export const wecomChannel = defineChannel<WeComSettings>({
  name: "wecom",
  docs: "docs/channels/wecom.md",
  configSchema: wecomSettingsSchema,
  secretEnv: ["WECOM_BOT_ID", "WECOM_SECRET"],
  settingEnv: { wsUrl: "WECOM_WS_URL", mediaHosts: "WECOM_MEDIA_HOSTS" },
  securityKeys: ["wsUrl", "mediaHosts", "allowedUsers", "allowAllUsers", "owner"],
  missing: (s, env) => [
    ...(secretOf(env, "WECOM_BOT_ID") ? [] : ["WECOM_BOT_ID"]),
    ...(secretOf(env, "WECOM_SECRET") ? [] : ["WECOM_SECRET"]),
    // The transport fails closed on an empty allow-list, so starting it would answer nobody.
    ...(s.allowedUsers.length > 0 || s.allowAllUsers ? [] : ["wecom.allowedUsers (or wecom.allowAllUsers)"]),
  ],
  doctor: ({ settings, env, home }) => {
    const last = readHealth(home);
    // A refused subscription or a kick needs the operator; anything else the gateway retries itself.
    const blocked =
      last?.state === "unhealthy" && (last.reason === "subscribe_refused" || last.reason === "kicked");
    return { lines: wecomDoctorLines(settings, env, home), healthy: !blocked };
  },
  load: () => import("./start.js"),
});
