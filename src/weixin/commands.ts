/**
 * Weixin's commands: one table, drawn from the shared ones, drives the parse and /help. The spec's
 * set (/new /compact /stop /status /help), /yolo for the owner, and /model (a numbered list answered
 * with `/model 2`: WeChat has no buttons). Nothing that holds a message for
 * later: a message mid-answer is steered in or refused with a prompt to resend.
 */
import type { CommandKit } from "../messaging/channel/command-kit.js";
import { commandTable, defineCommands } from "../messaging/channel/command-kit.js";

export const WEIXIN_COMMANDS = commandTable(["new", "compact", "stop", "status", "model", "yolo", "help"]);

/** WeChat has no buttons: a prompt is answered by typing. */
export const WEIXIN_HELP_FOOTER = "When a tool asks for permission, reply 1 to approve or 2 to deny.";

export function weixinCommands(): CommandKit {
  return defineCommands(WEIXIN_COMMANDS, { prefixes: ["/"] });
}
