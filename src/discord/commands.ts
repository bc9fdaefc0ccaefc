/**
 * Discord's commands: one table, drawn from the shared ones, drives the `!`/`/` text parse, the help
 * card and the application-command registration, so the three cannot drift. Text commands are
 * `!`-prefixed because Discord's client swallows a bare `/` message into its own slash UI; the `/`
 * form is accepted too, and a registered slash command arrives through the same parse.
 */
import type { CommandKit, CommandTable } from "../messaging/channel/command-kit.js";
import { commandTable, defineCommands } from "../messaging/channel/command-kit.js";

export const DISCORD_COMMANDS = commandTable(
  [
    "new",
    "compact",
    "model",
    "stop",
    "status",
    "link",
    "unlink",
    "yolo",
    "history",
    "help",
    "sessions",
    "queue",
    "steer",
  ],
  {
    model: { args: "", help: "Pick the agent's model from a list of buttons." },
    sessions: { help: "Continue a web chat session here (owner only)." },
  },
);

export const DISCORD_HELP_FOOTER = "When a tool asks for permission, press Approve or Deny under the prompt.";

export function discordCommands(): CommandKit {
  // An unknown `!word` gets the help card (a mistyped !sesions reads as a typo); `/x` may be a path.
  return defineCommands(DISCORD_COMMANDS, { prefixes: ["!", "/"], flagUnknownFor: ["!"] });
}

/** Discord's CHAT_INPUT name and description rules; Discord rejects the WHOLE array on one bad row. */
const NAME_RULE = /^[-_\p{Ll}\p{Lo}\p{N}]{1,32}$/u;

export interface ApplicationCommandRow {
  name: string;
  description: string;
  type: 1;
  /** GUILD and BOT_DM; replaces the deprecated dm_permission. */
  contexts: [0, 1];
  integration_types: [0];
}

/**
 * The registration payload, from the same table. queue and steer are absent: they are message
 * PREFIXES, and a menu tap would send the bare token with no body to act on. A row breaking
 * Discord's constraints is skipped (and reported), never sent.
 */
export function applicationCommandPayload(table: CommandTable = DISCORD_COMMANDS): {
  rows: ApplicationCommandRow[];
  skipped: string[];
} {
  const rows: ApplicationCommandRow[] = [];
  const skipped: string[] = [];
  const seen = new Set<string>();
  for (const s of table) {
    if (s.override) continue;
    const description = s.help.trim();
    const len = Array.from(description).length;
    if (!NAME_RULE.test(s.name) || seen.has(s.name) || len < 1 || len > 100) {
      skipped.push(s.name);
      continue;
    }
    seen.add(s.name);
    rows.push({ name: s.name, description, type: 1, contexts: [0, 1], integration_types: [0] });
  }
  return { rows, skipped };
}
