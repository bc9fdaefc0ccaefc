/**
 * Webex's commands: one table, drawn from the shared ones, drives the parse and /help. An unknown
 * `/word` gets the help (a mistyped command reads as a typo, not as a message to the agent).
 */
import type { CommandKit } from "../messaging/channel/command-kit.js";
import { commandTable, defineCommands } from "../messaging/channel/command-kit.js";

export const WEBEX_COMMANDS = commandTable([
  "new",
  "compact",
  "help",
  "stop",
  "link",
  "unlink",
  "yolo",
  "model",
  "sessions",
  "status",
  "queue",
  "steer",
]);

export const WEBEX_HELP_FOOTER =
  "When a tool asks for permission, reply `1` (approve) or `2` (deny), or press a button on the card.";

export function webexCommands(): CommandKit {
  return defineCommands(WEBEX_COMMANDS, { prefixes: ["/"], flagUnknownFor: ["/"] });
}
