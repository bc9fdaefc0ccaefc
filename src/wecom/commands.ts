/**
 * WeCom's commands: one table, drawn from the shared ones, drives the parse and /help. /queue is
 * listed so it is understood: mid-answer it is refused with a resend prompt (nothing is held for
 * later here), idle it simply runs.
 */
import type { CommandKit } from "../messaging/channel/command-kit.js";
import { commandTable, defineCommands } from "../messaging/channel/command-kit.js";

export const WECOM_COMMANDS = commandTable([
  "new",
  "stop",
  "status",
  "compact",
  "model",
  "title",
  "steer",
  "queue",
  "temporary",
  "incognito",
  "history",
  "link",
  "unlink",
  "sessions",
  "yolo",
  "help",
]);

/** No widget exists on WeCom: the typed replies are how a prompt is answered. */
export const WECOM_HELP_FOOTER = "When a tool asks for permission, reply 1 (approve) or 2 (deny).";

export function wecomCommands(): CommandKit {
  return defineCommands(WECOM_COMMANDS, { prefixes: ["/"] });
}
