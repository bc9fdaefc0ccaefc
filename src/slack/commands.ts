/**
 * Slack's commands: one table drives the `!sub` text parse, the help card, the slash command's
 * sub-commands and the app manifest (manifest.ts), so none of them can drift. Text commands are
 * `!`-prefixed because Slack's composer swallows an unknown `/word` (and a slash command cannot be
 * used inside a thread); `/` is accepted too when it does arrive as text.
 */
import type { CommandKit } from "../messaging/channel/command-kit.js";
import { commandTable, defineCommands } from "../messaging/channel/command-kit.js";

export const SLACK_COMMANDS = commandTable(
  [
    "new",
    "stop",
    "status",
    "help",
    "yolo",
    "model",
    "compact",
    "queue",
    "steer",
    "sessions",
    "link",
    "unlink",
    "temporary",
    "incognito",
    // Issue 16 gives every channel its history; a thread's title is Slack's assistant thread title.
    "title",
    "history",
  ],
  { model: { args: "", help: "Pick the agent's model from a list of buttons." } },
);

export const SLACK_HELP_FOOTER =
  "When a tool asks for permission, press Approve or Deny under the prompt (or reply 1 or 2).";

export function slackCommands(): CommandKit {
  // An unknown `!word` gets the help card (a mistyped !stauts reads as a typo); `/x` may be a path.
  return defineCommands(SLACK_COMMANDS, { prefixes: ["!", "/"], flagUnknownFor: ["!"] });
}

/** The slash command's usage hint in the manifest: its sub-commands, from the same table. */
export function slashUsageHint(): string {
  return SLACK_COMMANDS.filter((s) => !s.override)
    .map((s) => s.name)
    .join(" | ");
}
