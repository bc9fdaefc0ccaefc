/**
 * Discord's commands: ONE ordered COMMAND_SPEC drives the ! / / text parser, the help card and the
 * application-command registration, so the three cannot drift. Text commands are !-prefixed because
 * Discord's client swallows a bare / message into its own slash UI; the / form is accepted too, and
 * a registered slash command arrives through the same parse. There is deliberately no yolo and no
 * dashboard command here: allowedUserIds answers "may drive the agent", a weaker claim than granting
 * gateway-wide auto-approve or minting a dashboard credential.
 */

export interface CommandSpec {
  name: string;
  aliases: readonly string[];
  args: string;
  help: string;
  /** A mid-turn directive: the payload after it is content, never a command. */
  override?: "steer" | "queue";
}

export const COMMAND_SPEC: readonly CommandSpec[] = [
  { name: "new", aliases: ["reset"], args: "", help: "Start a fresh conversation with the agent." },
  { name: "compact", aliases: [], args: "", help: "Summarize the conversation so far to free context." },
  { name: "model", aliases: [], args: "", help: "Pick the agent's model from a list of buttons." },
  { name: "stop", aliases: ["cancel"], args: "", help: "Stop the running turn and drop queued messages." },
  { name: "status", aliases: [], args: "", help: "Show whether a turn is running and what is queued." },
  { name: "link", aliases: [], args: "", help: "Mirror this conversation's session replies here." },
  { name: "unlink", aliases: [], args: "", help: "Stop mirroring into this conversation." },
  { name: "help", aliases: [], args: "", help: "Show this help." },
  {
    name: "sessions",
    aliases: [],
    args: "",
    help: "Continue a web chat session here (owner only).",
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
];

const BY_NAME = new Map<string, CommandSpec>();
for (const spec of COMMAND_SPEC) for (const n of [spec.name, ...spec.aliases]) BY_NAME.set(n, spec);

export interface ParsedCommand {
  spec: CommandSpec;
  arg: string;
}

/** The one parse: "!name rest" or "/name rest". Unknown names are not commands (/etc/hosts is text). */
export function parseCommand(text: string): ParsedCommand | null {
  const m = /^[!/]([a-z][\w-]*)(?:\s+([\s\S]*))?$/i.exec(text.trim());
  if (!m) return null;
  const spec = BY_NAME.get((m[1] as string).toLowerCase());
  return spec ? { spec, arg: (m[2] ?? "").trim() } : null;
}

/** "!queue" / "/steer" with no body: answered with the directive's usage rather than sent to the model. */
export function isBareOverride(text: string): CommandSpec | null {
  const parsed = parseCommand(text);
  return parsed?.spec.override && parsed.arg === "" ? parsed.spec : null;
}

/**
 * An unrecognized !token shaped like a Discord command name (a leading letter, at least two
 * characters) gets the usage card, so a mistyped !sesions reads as a typo instead of reaching the
 * model. !-only: a message starting with / that the client let through is more likely a path.
 */
export function isUnknownCommand(text: string): boolean {
  const m = /^!([a-z][\w-]{1,31})(?:\s|$)/i.exec(text.trim());
  return m !== null && parseCommand(text) === null;
}

export function usageOf(spec: CommandSpec): string {
  return `Usage: \`!${spec.name}${spec.args ? ` ${spec.args}` : ""}\``;
}

export function helpText(): string {
  const lines = COMMAND_SPEC.map((s) => {
    const alias = s.aliases.length ? ` (also ${s.aliases.map((a) => `\`!${a}\``).join(", ")})` : "";
    return `- \`!${s.name}${s.args ? ` ${s.args}` : ""}\`${alias}: ${s.help}`;
  });
  return [
    "**Commands** (`!` or `/`)",
    ...lines,
    "",
    "When a tool asks for permission, press Approve or Deny under the prompt.",
  ].join("\n");
}

export function unknownCommandCard(): string {
  return `I don't know that command.\n\n${helpText()}`;
}

/** Discord's CHAT_INPUT name and description rules; Discord rejects the WHOLE array on one bad row. */
const NAME_RULE = /^[-_\p{Ll}\p{Lo}\p{N}]{1,32}$/u;

export interface ApplicationCommandRow {
  name: string;
  description: string;
  type: 1;
  /** GUILD and BOT_DM; replaces the deprecated dm_permission. */
  contexts: [0, 1];
  integration_types: [0];
}

/**
 * The registration payload, from the same table. queue and steer are absent: they are message
 * PREFIXES, and a menu tap would send the bare token with no body to act on. A row breaking
 * Discord's constraints is skipped (and reported), never sent.
 */
export function applicationCommandPayload(spec: readonly CommandSpec[] = COMMAND_SPEC): {
  rows: ApplicationCommandRow[];
  skipped: string[];
} {
  const rows: ApplicationCommandRow[] = [];
  const skipped: string[] = [];
  const seen = new Set<string>();
  for (const s of spec) {
    if (s.override) continue;
    const description = s.help.trim();
    const len = Array.from(description).length;
    if (!NAME_RULE.test(s.name) || seen.has(s.name) || len < 1 || len > 100) {
      skipped.push(s.name);
      continue;
    }
    seen.add(s.name);
    rows.push({ name: s.name, description, type: 1, contexts: [0, 1], integration_types: [0] });
  }
  return { rows, skipped };
}
