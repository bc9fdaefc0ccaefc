/**
 * Telegram's commands: ONE table drives the parser, /help and the command menu registered with
 * setMyCommands, so the three cannot drift. The shared handlers live in messaging/; this table only
 * spells the channel's grammar (including Telegram's `/cmd@BotName` form in groups).
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
  { name: "compact", aliases: [], args: "", help: "Ask the agent to compact its context." },
  { name: "model", aliases: [], args: "", help: "Pick the agent's model from a list of buttons." },
  { name: "status", aliases: [], args: "", help: "Show this conversation's state." },
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
  { name: "title", aliases: [], args: "<name>", help: "Name this conversation." },
  {
    name: "temporary",
    aliases: [],
    args: "",
    help: "This conversation reads no memory and saves nothing.",
  },
  { name: "incognito", aliases: [], args: "", help: "This conversation may read memory but saves nothing." },
  { name: "link", aliases: [], args: "", help: "Mirror dashboard replies for this conversation here." },
  { name: "unlink", aliases: [], args: "", help: "Stop mirroring into this conversation." },
  {
    name: "sessions",
    aliases: [],
    args: "",
    help: "List the agent sessions on this host (private chat only).",
  },
  {
    name: "yolo",
    aliases: [],
    args: "[on [30m|2h]|off|status]",
    help: "Auto-approve every tool, everywhere, for a while.",
  },
  { name: "help", aliases: [], args: "", help: "Show this help." },
];

const BY_NAME = new Map<string, CommandSpec>();
for (const spec of COMMAND_SPEC) for (const n of [spec.name, ...spec.aliases]) BY_NAME.set(n, spec);

export type ParsedCommand =
  | { kind: "command"; spec: CommandSpec; arg: string }
  /** `/cmd@OtherBot`: addressed to someone else in the group; never ours, never a prompt. */
  | { kind: "foreign" };

const COMMAND_RE = /^\/([A-Za-z0-9_]{1,32})(?:@([A-Za-z0-9_]{3,64}))?(?:\s+([\s\S]*))?$/;

/**
 * The one parse. Unknown names are not commands (a path like /etc/hosts is text). A command may
 * name the bot (`/new@parley_bot`), as Telegram's menu does in groups.
 */
export function parseCommand(text: string, botUsername: string | null): ParsedCommand | null {
  const m = COMMAND_RE.exec(text.trim());
  if (!m) return null;
  const handle = m[2];
  if (handle !== undefined && handle.toLowerCase() !== (botUsername ?? "").toLowerCase()) {
    return BY_NAME.has((m[1] as string).toLowerCase()) ? { kind: "foreign" } : null;
  }
  const spec = BY_NAME.get((m[1] as string).toLowerCase());
  return spec ? { kind: "command", spec, arg: (m[3] ?? "").trim() } : null;
}

/** A bare /steer or /queue: answered with its usage rather than handed to the model as chat. */
export function isBareMidTurnOverride(parsed: ParsedCommand | null): boolean {
  return parsed?.kind === "command" && parsed.spec.override !== undefined && parsed.arg === "";
}

export function usageOf(spec: CommandSpec): string {
  return `Usage: /${spec.name}${spec.args ? ` ${spec.args}` : ""}`;
}

/** The setMyCommands payload: every command, in table order. */
export function menuCommands(): { command: string; description: string }[] {
  return COMMAND_SPEC.map((s) => ({ command: s.name, description: s.help.slice(0, 256) }));
}

export function helpText(): string {
  const lines = COMMAND_SPEC.map((s) => {
    const alias = s.aliases.length ? ` (also ${s.aliases.map((a) => `/${a}`).join(", ")})` : "";
    return `• \`/${s.name}${s.args ? ` ${s.args}` : ""}\`${alias}: ${s.help}`;
  });
  return [
    "**Commands**",
    ...lines,
    "",
    "When a tool asks for permission, press a button, or reply 1 (approve), 2 (deny) or 3 (approve and trust this conversation).",
  ].join("\n");
}
