/**
 * iMessage's commands: one table, drawn from the shared ones, drives the parse and /help: the
 * spec's set (/new /compact /stop /status /help), /yolo for the owner handle, and /model (a
 * numbered list answered with `/model 2`: there are no buttons).
 */
import type { CommandKit } from "../messaging/channel/command-kit.js";
import { commandTable, defineCommands } from "../messaging/channel/command-kit.js";

export const IMESSAGE_COMMANDS = commandTable(["new", "stop", "status", "compact", "model", "yolo", "help"]);

export const IMESSAGE_HELP_FOOTER =
  "When a tool asks for permission, reply 1 to approve or 2 to deny. Messages sent while I am working are folded into the answer or queued behind it.";

export function imessageCommands(): CommandKit {
  return defineCommands(IMESSAGE_COMMANDS, { prefixes: ["/"] });
}
