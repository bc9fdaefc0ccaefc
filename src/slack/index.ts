/**
 * Registry entry for Slack: its config section, its three secrets, and a probe that imports no
 * Slack SDK. Tokens come only from the environment (or $PARLEY_HOME/.env): SLACK_BOT_TOKEN (xoxb-)
 * always, SLACK_APP_TOKEN (xapp-) for Socket Mode, SLACK_SIGNING_SECRET for the Events API over HTTP.
 * `slack.apiUrl` (SLACK_API_URL) is the one place every token goes.
 */
import { z } from "zod";
import type { Env } from "../messaging/channel/contract.js";
import { defineChannel, secretOf } from "../messaging/channel/contract.js";
import { apiOrigin, idList, queueModeSetting } from "../messaging/channel/settings.js";

export const SLACK_API_URL = "https://slack.com/api";
/** Slack ids are upper-case alphanumerics behind a type letter; anything else can never match. */
const USER_ID = /^[UW][A-Z0-9]{2,20}$/;
const TEAM_ID = /^[TE][A-Z0-9]{2,20}$/;
const CHANNEL_ID = /^[CG][A-Z0-9]{2,20}$/;

export const slackSettingsSchema = z.strictObject({
  enabled: z.boolean().optional(),
  /** socket: Socket Mode (no public endpoint); http: the Events API at `listen`. */
  mode: z.enum(["socket", "http"]).default("socket"),
  apiUrl: apiOrigin(SLACK_API_URL),
  /** http mode: where the signed Events API requests arrive, `host:port` (path /slack/events). */
  listen: z
    .string()
    .trim()
    .regex(/^(?:[^\s:]+:)?\d{1,5}$/, "not host:port")
    .default("127.0.0.1:3000"),
  /** Deny by default: an empty list authorizes nobody. */
  allowedUserIds: idList(USER_ID, "Slack user id"),
  /** Workspaces whose members may be admitted; empty: only the bot's own workspace. */
  allowedTeamIds: idList(TEAM_ID, "Slack team id"),
  /** The one user who may arm auto-approve and list sessions; default the sole allow-listed id. */
  owner: z.string().regex(USER_ID, "not a Slack user id").optional(),
  /** Channels where the bot answers when mentioned (and then in the threads it answers). */
  allowedChannelIds: idList(CHANNEL_ID, "Slack channel id"),
  slashCommand: z
    .string()
    .trim()
    .regex(/^\/[a-z0-9_-]{1,31}$/, "a slash command such as /parley")
    .default("/parley"),
  /** Native streaming (chat.startStream); off, or where Slack refuses it, one message is edited. */
  streaming: z.boolean().default(true),
  reactionsEnabled: z.boolean().default(true),
  showThinking: z.boolean().default(false),
  queueMode: queueModeSetting,
});

export type SlackSettings = z.infer<typeof slackSettingsSchema>;

/** A secret that is set but has the wrong shape is named with what it should be (never its value). */
function tokenProblem(env: Env, name: string, prefix: string): string[] {
  const value = secretOf(env, name);
  if (!value) return [name];
  return value.startsWith(prefix) ? [] : [`${name} (an ${prefix} token)`];
}

export const slackChannel = defineChannel<SlackSettings>({
  name: "slack",
  docs: "docs/channels/slack.md",
  configSchema: slackSettingsSchema,
  secretEnv: ["SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET"],
  settingEnv: { apiUrl: "SLACK_API_URL" },
  securityKeys: ["apiUrl", "listen", "allowedUserIds", "allowedTeamIds", "owner", "allowedChannelIds"],
  missing: (s, env) => [
    ...tokenProblem(env, "SLACK_BOT_TOKEN", "xoxb-"),
    ...(s.mode === "socket"
      ? tokenProblem(env, "SLACK_APP_TOKEN", "xapp-")
      : secretOf(env, "SLACK_SIGNING_SECRET")
        ? []
        : ["SLACK_SIGNING_SECRET"]),
    // The transport fails closed on an empty allow-list, so starting it would answer nobody.
    ...(s.allowedUserIds.length > 0 ? [] : ["slack.allowedUserIds"]),
  ],
  load: () => import("./start.js"),
  doctor: async ({ settings, env }) => (await import("./doctor.js")).slackDoctor(settings, env),
});
