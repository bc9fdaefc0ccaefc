/**
 * Telegram's commands: one table, drawn from the shared ones, drives the parse (with Telegram's
 * `/cmd@BotName` form in groups), /help and the command menu registered with setMyCommands, so the
 * three cannot drift.
 */
import type { CommandKit, CommandTable } from "../messaging/channel/command-kit.js";
import { commandTable, defineCommands } from "../messaging/channel/command-kit.js";

export const TELEGRAM_COMMANDS = commandTable([
  "new",
  "stop",
  "compact",
  "model",
  "status",
  "queue",
  "steer",
  "title",
  "temporary",
  "incognito",
  "link",
  "unlink",
  "sessions",
  "yolo",
  "history",
  "every",
  "at",
  "jobs",
  "unschedule",
  "help",
]);

export const TELEGRAM_HELP_FOOTER =
  "When a tool asks for permission, press a button, or reply 1 (approve), 2 (deny) or 3 (always allow).";

export function telegramCommands(botUsername: () => string | null): CommandKit {
  return defineCommands(TELEGRAM_COMMANDS, { prefixes: ["/"], botHandle: botUsername });
}

/** The setMyCommands payload: every command, in table order (Telegram caps a description at 256). */
export function menuCommands(
  table: CommandTable = TELEGRAM_COMMANDS,
): { command: string; description: string }[] {
  return table.map((s) => ({ command: s.name, description: Array.from(s.help).slice(0, 256).join("") }));
}
