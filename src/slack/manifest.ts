/**
 * The Slack app manifest, generated from the same command table as the `!sub` parse and the help
 * card, and from the scopes and events the channel really uses (doctor checks the token against the
 * same list). docs/channels/slack.md carries one for each mode; a test keeps them equal to this.
 */
import { SLACK_COMMANDS, slashUsageHint } from "./commands.js";

/** Every bot scope a call parley makes needs; doctor names any the token lacks. */
export const REQUIRED_SCOPES = [
  "app_mentions:read",
  "assistant:write",
  "channels:history",
  "chat:write",
  "commands",
  "files:read",
  "files:write",
  "groups:history",
  "im:history",
  "reactions:write",
] as const;

/** The events the intake listens to: mentions in channels, and messages in DMs and threads. */
export const BOT_EVENTS = ["app_mention", "message.channels", "message.groups", "message.im"] as const;

export interface ManifestOptions {
  mode: "socket" | "http";
  slashCommand: string;
  /** The app's name in Slack (the bot's display name). */
  name?: string;
  /** http mode: the public URL Slack posts events, presses and commands to. */
  requestUrl?: string;
}

export function slackManifest(o: ManifestOptions): Record<string, unknown> {
  const name = o.name ?? "parley";
  const http = o.mode === "http";
  const url = o.requestUrl ?? "https://YOUR-PUBLIC-HOST/slack/events";
  return {
    display_information: {
      name,
      description: "An AI agent you can talk to in DMs and channel threads.",
    },
    features: {
      app_home: {
        home_tab_enabled: false,
        messages_tab_enabled: true,
        messages_tab_read_only_enabled: false,
      },
      bot_user: { display_name: name, always_online: true },
      assistant_view: { assistant_description: "Ask the agent anything; it answers in the thread." },
      slash_commands: [
        {
          command: o.slashCommand,
          description: `Control ${name}: ${SLACK_COMMANDS.filter((s) => !s.override).length} sub-commands (${o.slashCommand} help)`,
          usage_hint: slashUsageHint(),
          should_escape: false,
          ...(http ? { url } : {}),
        },
      ],
    },
    oauth_config: { scopes: { bot: [...REQUIRED_SCOPES] } },
    settings: {
      event_subscriptions: { ...(http ? { request_url: url } : {}), bot_events: [...BOT_EVENTS] },
      interactivity: { is_enabled: true, ...(http ? { request_url: url } : {}) },
      org_deploy_enabled: false,
      socket_mode_enabled: !http,
      token_rotation_enabled: false,
    },
  };
}
