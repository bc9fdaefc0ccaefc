/**
 * WhatsApp's commands: one table drives the parse and /help. A command is the WHOLE message
 * (`/new`, never `/new please`): in a group a prefix match would swallow ordinary messages that
 * happen to begin with a slash, and a member's command is dropped there. Everything that acts on
 * the session is the operator's alone; anyone admitted may ask for /help, and /yolo refuses anyone
 * but the operator on its own (the shared handler, audited).
 */
import type { CommandCall, CommandHandler } from "../messaging/channel/command-handlers.js";
import { SHARED_HANDLERS } from "../messaging/channel/command-handlers.js";
import type { CommandKit } from "../messaging/channel/command-kit.js";
import { commandTable, defineCommands } from "../messaging/channel/command-kit.js";
import type { AuditSink } from "../messaging/security/audit.js";

export const WHATSAPP_COMMANDS = commandTable(["new", "stop", "status", "compact", "model", "yolo", "help"]);

export const WHATSAPP_HELP_FOOTER =
  "When a tool asks for permission, reply 1 (approve) or 2 (deny), or 3 to always allow that tool: the whole message, nothing else.";

/** Anyone admitted may send these; the rest are the operator's. */
const FOR_EVERYONE: ReadonlySet<string> = new Set(["help", "yolo"]);

export function whatsappCommands(): CommandKit {
  const kit = defineCommands(WHATSAPP_COMMANDS, { prefixes: ["/"] });
  return {
    ...kit,
    parse(text) {
      const parsed = kit.parse(text);
      // Whole message only: an argument is allowed only where the command takes one.
      if (parsed?.kind === "command" && parsed.arg !== "" && !parsed.spec.args) return null;
      return parsed;
    },
  };
}

export function isOperatorOnly(name: string): boolean {
  return !FOR_EVERYONE.has(name);
}

/** The shared handlers, each session-acting one refusing (audited, spoken) anyone but the operator. */
export function whatsappHandlers(audit: AuditSink): Record<string, CommandHandler> {
  const out: Record<string, CommandHandler> = {};
  for (const spec of WHATSAPP_COMMANDS) {
    const shared = SHARED_HANDLERS[spec.name];
    if (!shared || !isOperatorOnly(spec.name)) continue;
    out[spec.name] = async (call: CommandCall) => {
      if (call.owner) return shared(call);
      audit.log("whatsapp.command", "refused", {
        user: call.userId,
        command: spec.name,
        reason: "not_operator",
      });
      return `Only the operator can use ${call.hub.commands.spell(spec.name)} here.`;
    };
  }
  return out;
}
