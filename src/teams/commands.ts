/**
 * Teams' commands: one table, drawn from the shared ones, drives the parse, /help and the app
 * manifest's command list (`parley teams manifest`), so the three cannot drift. Teams' compose box
 * shows a bot's commands as suggestions when the user types `/`... only from the manifest, which is
 * why the manifest is generated here rather than written by hand.
 */
import type { CommandKit, CommandTable } from "../messaging/channel/command-kit.js";
import { commandTable, defineCommands } from "../messaging/channel/command-kit.js";

export const TEAMS_COMMANDS = commandTable(
  [
    "new",
    "compact",
    "stop",
    "yolo",
    "link",
    "unlink",
    "sessions",
    "status",
    "help",
    "model",
    "queue",
    "steer",
  ],
  {
    model: { args: "", help: "Pick the agent's model from a card." },
    sessions: { help: "Continue a web chat session here (only when one person is allow-listed)." },
  },
);

export const TEAMS_HELP_FOOTER =
  "When a tool asks for permission, press a button on its card, or reply 1 (approve) or 2 (deny).";

export function teamsCommands(): CommandKit {
  return defineCommands(TEAMS_COMMANDS, { prefixes: ["/"] });
}

/** Teams shows at most ten commands per scope; a title at most 32 characters, a description 128. */
const MAX_MANIFEST_COMMANDS = 10;
const MAX_TITLE = 32;
const MAX_DESCRIPTION = 128;

export interface ManifestCommand {
  title: string;
  description: string;
}

/**
 * The manifest's command list, from the same table. /queue and /steer are message PREFIXES: picked
 * from the menu they would arrive with nothing to act on, so they are left out (the help card still
 * lists them). An alias is not listed twice.
 */
export function manifestCommands(table: CommandTable = TEAMS_COMMANDS): ManifestCommand[] {
  return table
    .filter((s) => !s.override)
    .slice(0, MAX_MANIFEST_COMMANDS)
    .map((s) => ({
      title: Array.from(s.name).slice(0, MAX_TITLE).join(""),
      description: Array.from(s.help).slice(0, MAX_DESCRIPTION).join(""),
    }));
}

/**
 * A Teams app manifest for the bot: personal scope only (a group chat or a channel would show tool
 * output to people the allow-list never admitted), supportsFiles (without it Teams delivers no
 * file a user attaches), the command list. Icons are the operator's to add to the package.
 */
export function teamsManifest(appId: string): Record<string, unknown> {
  return {
    $schema: "https://developer.microsoft.com/en-us/json-schemas/teams/v1.17/MicrosoftTeams.schema.json",
    manifestVersion: "1.17",
    version: "1.0.0",
    id: appId,
    developer: {
      name: "parley",
      websiteUrl: "https://example.com/parley",
      privacyUrl: "https://example.com/parley/privacy",
      termsOfUseUrl: "https://example.com/parley/terms",
    },
    name: { short: "parley", full: "parley: your agent in Teams" },
    description: {
      short: "Talk to your AI agent from Teams.",
      full: "parley connects an AI agent to Teams: ask it anything, approve its tools from a card.",
    },
    icons: { outline: "outline.png", color: "color.png" },
    accentColor: "#3B5BDB",
    bots: [
      {
        botId: appId,
        scopes: ["personal"],
        supportsFiles: true,
        isNotificationOnly: false,
        commandLists: [{ scopes: ["personal"], commands: manifestCommands() }],
      },
    ],
    permissions: ["identity", "messageTeamMembers"],
    validDomains: [],
  };
}
