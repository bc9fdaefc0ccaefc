/**
 * The web chat's commands: ONE table drives parsing and the /help text. Shared handlers live in
 * messaging/; this table only spells the channel's grammar.
 */
export interface CommandSpec {
  name: string;
  aliases: readonly string[];
  args: string;
  help: string;
  /** A mid-turn override: the payload after it is content, never a command. */
  override?: "steer" | "queue";
}

export const COMMAND_SPEC: readonly CommandSpec[] = [
  { name: "new", aliases: ["reset"], args: "", help: "Start a fresh conversation with the agent." },
  { name: "stop", aliases: ["cancel"], args: "", help: "Stop the running turn and drop queued messages." },
  {
    name: "yolo",
    aliases: [],
    args: "[on [duration]|off|status]",
    help: "Auto-approve every tool for a while.",
  },
  {
    name: "queue",
    aliases: [],
    args: "<message>",
    help: "Hold a message until the current turn ends.",
    override: "queue",
  },
  {
    name: "steer",
    aliases: [],
    args: "<message>",
    help: "Fold a message into the running turn.",
    override: "steer",
  },
  {
    name: "compact",
    aliases: [],
    args: "",
    help: "Ask the agent to compact its context (frees room, keeps the conversation).",
  },
  {
    name: "model",
    aliases: [],
    args: "[number|name]",
    help: "List the agent's models, or switch to one.",
  },
  { name: "help", aliases: [], args: "", help: "Show this help." },
];

const BY_NAME = new Map<string, CommandSpec>();
for (const spec of COMMAND_SPEC) for (const n of [spec.name, ...spec.aliases]) BY_NAME.set(n, spec);

export interface ParsedCommand {
  spec: CommandSpec;
  arg: string;
}

/** The one parse: "/name rest". Unknown names are not commands (a path like /etc/hosts is text). */
export function parseCommand(text: string): ParsedCommand | null {
  const m = /^\/([a-z]+)(?:\s+([\s\S]*))?$/i.exec(text.trim());
  if (!m) return null;
  const spec = BY_NAME.get((m[1] as string).toLowerCase());
  return spec ? { spec, arg: (m[2] ?? "").trim() } : null;
}

export function helpText(): string {
  const lines = COMMAND_SPEC.map((s) => {
    const alias = s.aliases.length ? ` (also ${s.aliases.map((a) => `/${a}`).join(", ")})` : "";
    return `- \`/${s.name}${s.args ? ` ${s.args}` : ""}\`${alias}: ${s.help}`;
  });
  return `**Commands**\n${lines.join("\n")}\n\nWhen a tool asks for permission, press a button or reply \`1\` (approve) or \`2\` (deny).`;
}

export function usageOf(spec: CommandSpec): string {
  return `Usage: \`/${spec.name} ${spec.args}\``;
}
