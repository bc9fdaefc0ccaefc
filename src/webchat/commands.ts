/**
 * The web chat's commands: one table, drawn from the shared ones, drives the parse and /help.
 * The web chat is the operator's own dashboard, so it has no listing command; its /link names a
 * configured target (the owner's Telegram, say) that its answers are mirrored to.
 */
import type { CommandKit } from "../messaging/channel/command-kit.js";
import { commandTable, defineCommands } from "../messaging/channel/command-kit.js";

export const WEBCHAT_COMMANDS = commandTable([
  "new",
  "stop",
  "status",
  "compact",
  "model",
  "title",
  "yolo",
  "queue",
  "steer",
  "history",
  "link",
  "unlink",
  "every",
  "at",
  "jobs",
  "unschedule",
  "help",
]);

export const WEBCHAT_HELP_FOOTER =
  "When a tool asks for permission, press a button or reply `1` (approve) or `2` (deny).";

export function webchatCommands(): CommandKit {
  return defineCommands(WEBCHAT_COMMANDS, { prefixes: ["/"] });
}
