/**
 * The command kit: ONE table per channel drives the parse, /help, usage lines and any platform
 * registration (a command menu, slash commands, an app manifest), so none of them can drift. A
 * message is parsed once and the result is passed down; nothing parses the same text again.
 */
import type { QueueMode } from "../queue/mid-turn-router.js";

export interface CommandSpec {
  /** The canonical name; shared handlers are looked up by it. */
  name: string;
  aliases?: readonly string[];
  /** The argument part of the usage line ("<message>", "[on|off]"). */
  args?: string;
  help: string;
  /** A mid-turn directive: the payload after it is content, never a command. */
  override?: QueueMode;
}

export type CommandTable = readonly CommandSpec[];

export interface CommandGrammar {
  /** Accepted sigils, e.g. ["/"] or ["!", "/"] (Slack's and Discord's composers eat unknown /words). */
  prefixes: readonly string[];
  /** The sigil the bot writes in help and replies; default the first prefix. */
  shown?: string;
  /** The bot's handle for the `/cmd@handle` form (Telegram groups); read per parse, it can arrive late. */
  botHandle?: () => string | null;
  /**
   * Answer an unknown `<prefix>word` with the help card instead of sending it to the model (a
   * mistyped `!sesions` reads as a typo). Only for these prefixes: a `/path` is usually a path.
   */
  flagUnknownFor?: readonly string[];
}

export type ParsedCommand =
  | { kind: "command"; spec: CommandSpec; arg: string }
  /** `/cmd@OtherBot`: addressed to someone else in the group; never ours, never a prompt. */
  | { kind: "foreign" }
  | { kind: "unknown"; name: string };

export interface CommandKit {
  readonly table: CommandTable;
  /** The one parse; null when the text is not a command (unknown names are text: /etc/hosts). */
  parse(text: string): ParsedCommand | null;
  /** How this channel writes a command in a reply: "`/new`" or "`!new`". */
  spell(name: string, args?: string): string;
  usage(spec: CommandSpec): string;
  /** The help card; `footer` is the channel's own last line (how approvals are answered). */
  help(footer?: string): string;
  has(name: string): boolean;
}

const NAME = /^[a-z][a-z0-9_-]{0,31}$/i;

/** Build a channel's command kit from its table and grammar; the table is validated once, here. */
export function defineCommands(table: CommandTable, grammar: CommandGrammar): CommandKit {
  const byName = new Map<string, CommandSpec>();
  for (const spec of table) {
    for (const n of [spec.name, ...(spec.aliases ?? [])]) {
      if (!NAME.test(n)) throw new Error(`command name "${n}" is not a word`);
      if (byName.has(n.toLowerCase())) throw new Error(`command name "${n}" is defined twice`);
      byName.set(n.toLowerCase(), spec);
    }
  }
  const shown = grammar.shown ?? grammar.prefixes[0] ?? "/";
  const sigils = grammar.prefixes.map(escapeRegExp).join("|");
  const pattern = new RegExp(
    `^(${sigils})([A-Za-z][\\w-]{0,31})(?:@([A-Za-z0-9_]{3,64}))?(?:\\s+([\\s\\S]*))?$`,
  );
  const spell = (name: string, args?: string) => `\`${shown}${name}${args ? ` ${args}` : ""}\``;
  const usage = (spec: CommandSpec) => `Usage: ${spell(spec.name, spec.args)}`;
  return {
    table,
    spell,
    usage,
    has: (name) => byName.has(name.toLowerCase()),
    parse(text) {
      const m = pattern.exec(text.trim());
      if (!m) return null;
      const [, sigil = "", rawName = "", handle, rest] = m;
      const spec = byName.get(rawName.toLowerCase());
      if (handle !== undefined) {
        const mine = (grammar.botHandle?.() ?? "").toLowerCase();
        if (handle.toLowerCase() !== mine) return spec ? { kind: "foreign" } : null;
      }
      if (spec) return { kind: "command", spec, arg: (rest ?? "").trim() };
      return grammar.flagUnknownFor?.includes(sigil) && rawName.length >= 2
        ? { kind: "unknown", name: rawName }
        : null;
    },
    help(footer) {
      const lines = table.map((s) => {
        const alias = s.aliases?.length ? ` (also ${s.aliases.map((a) => spell(a)).join(", ")})` : "";
        return `- ${spell(s.name, s.args)}${alias}: ${s.help}`;
      });
      const sigilNote =
        grammar.prefixes.length > 1 ? ` (${grammar.prefixes.map((p) => `\`${p}\``).join(" or ")})` : "";
      return [`**Commands**${sigilNote}`, ...lines, ...(footer ? ["", footer] : [])].join("\n");
    },
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** The shared command table every channel draws from; a channel lists the names it offers. */
export const SHARED_COMMANDS: Readonly<Record<string, CommandSpec>> = {
  new: { name: "new", aliases: ["reset"], help: "Start a fresh conversation with the agent." },
  stop: { name: "stop", aliases: ["cancel"], help: "Stop the running turn and drop queued messages." },
  status: { name: "status", help: "Show this conversation's state." },
  compact: {
    name: "compact",
    help: "Ask the agent to compact its context (frees room, keeps the conversation).",
  },
  model: { name: "model", args: "[number|name]", help: "List the agent's models, or switch to one." },
  yolo: {
    name: "yolo",
    args: "[on [30m|2h]|off|status]",
    help: "Auto-approve every tool, everywhere, for a while (owner, direct chat only).",
  },
  queue: {
    name: "queue",
    args: "<message>",
    help: "Hold a message until the current turn ends.",
    override: "queue",
  },
  steer: {
    name: "steer",
    args: "<message>",
    help: "Fold a message into the running turn.",
    override: "steer",
  },
  sessions: { name: "sessions", help: "List the agent sessions on this host (owner, direct chat only)." },
  link: {
    name: "link",
    args: "[target]",
    help: "Mirror this conversation's session replies here (or, with a configured target, there).",
  },
  unlink: { name: "unlink", help: "Stop mirroring into this conversation." },
  title: { name: "title", args: "<name>", help: "Name this conversation." },
  history: { name: "history", args: "[n]", help: "Show the last messages of this conversation." },
  temporary: { name: "temporary", help: "This conversation reads no memory and saves nothing." },
  incognito: { name: "incognito", help: "This conversation may read memory but saves nothing." },
  every: {
    name: "every",
    args: "<interval> <prompt>",
    help: "Run a prompt on a schedule (30m, 2h, 1d); each answer comes here.",
  },
  at: {
    name: "at",
    args: "<time> <prompt>",
    help: "Run a prompt once at a time (14:30, 2025-06-01 09:00, +45m); the answer comes here.",
  },
  jobs: { name: "jobs", help: "List this conversation's scheduled prompts." },
  unschedule: { name: "unschedule", args: "<id>", help: "Cancel a scheduled prompt." },
  help: { name: "help", help: "Show this help." },
};

/** A channel's table from shared names, in the order given; `overrides` adjust a spec's wording. */
export function commandTable(
  names: readonly string[],
  overrides: Readonly<Record<string, Partial<CommandSpec>>> = {},
): CommandTable {
  return names.map((name) => {
    const base = SHARED_COMMANDS[name];
    if (!base) throw new Error(`no shared command "${name}"`);
    return { ...base, ...overrides[name] };
  });
}

/** The answer to a command name no spec has: the help card, so a typo reads as one. */
export function unknownCommandReply(kit: CommandKit, footer?: string): string {
  return `I don't know that command.\n\n${kit.help(footer)}`;
}

/** A command picked from a platform's command menu: the parse to run, or the reply refusing it. */
export type MenuChoice = { parsed: Extract<ParsedCommand, { kind: "command" }> } | { reply: string };

/**
 * `text` as a platform's menu sends it (a slash command, an application command); `from` says how
 * the platform's users pick one ("from the menu"). A mid-turn directive needs a message with it, and a
 * menu sends none: its usage, or where to write it instead.
 */
export function menuChoice(kit: CommandKit, text: string, from: string, footer?: string): MenuChoice {
  const parsed = kit.parse(text);
  if (parsed?.kind !== "command") return { reply: unknownCommandReply(kit, footer) };
  if (!parsed.spec.override) return { parsed };
  if (!parsed.arg) return { reply: kit.usage(parsed.spec) };
  return { reply: `Send that as a message (${kit.spell(parsed.spec.name, parsed.spec.args)}), not ${from}.` };
}
