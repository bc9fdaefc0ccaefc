/**
 * Feishu's commands: one table, drawn from the shared ones, drives the parse and /help. The spec's
 * set (/new /compact /stop /status /help), /yolo for the owner in a DM, and /model (a numbered list
 * answered with `/model 2`: Feishu has no buttons). Nothing that holds a message for later: a reply
 * here answers one inbound message, so /queue and /steer have no meaning.
 */
import type { CommandKit } from "../messaging/channel/command-kit.js";
import { commandTable, defineCommands } from "../messaging/channel/command-kit.js";

export const FEISHU_COMMANDS = commandTable(["new", "stop", "status", "compact", "model", "yolo", "help"]);

export const FEISHU_HELP_FOOTER =
  "When a tool asks for permission, reply 1 to approve or 2 to deny (quote the prompt to be sure which).";

export function feishuCommands(): CommandKit {
  return defineCommands(FEISHU_COMMANDS, { prefixes: ["/"] });
}
