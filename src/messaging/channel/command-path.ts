/**
 * One parsed command, from the hub's dispatch (hub.ts) to its handler: where it runs (a recovery
 * command on the conversation's own session even while resume routing refuses), the channel-server
 * refusal, the call a handler gets (command-handlers.ts), and its work off the intake path with the
 * message's tickets. It owns no state; the hub hands it the routing decision and its services.
 */
import type { ContextWatch } from "../session/context-thresholds.js";
import type { IntakeOutcome, JsonValue } from "../store/port.js";
import { COMPACTION_RECEIPT } from "../turn/frames.js";
import type { CommandCall, CommandHandler, HubServices } from "./command-handlers.js";
import { SHARED_HANDLERS } from "./command-handlers.js";
import type { CommandKit, ParsedCommand } from "./command-kit.js";
import type { TicketWork } from "./journal.js";
import type { ChannelSurface, Dispatched, IncomingMessage } from "./surface.js";
import { NOTHING, replyTo } from "./surface.js";

/** Commands that must work while resume routing refuses: the way back in for a user whose link broke. */
const RECOVERY_COMMANDS: ReadonlySet<string> = new Set(["help", "sessions", "new", "unlink"]);

export interface CommandPathOptions<A, P> {
  surface: ChannelSurface<A, P>;
  commands: CommandKit;
  /** Handlers this channel answers differently (by command name). */
  handlers: Readonly<Record<string, CommandHandler<P>>> | undefined;
  /** Whether this sender is the channel's configured owner (/yolo, listings). */
  isOwner(userId: string): boolean;
  /** What every handler may use. */
  services: HubServices;
  tickets: TicketWork;
  /** The context thresholds: a compaction that ran re-arms the soft notice. */
  context: ContextWatch;
  /** Where a message runs; null when resume routing refused (its notice was sent). */
  route(address: A, nativeKey: string): Promise<{ key: string } | null>;
  /** /new: a fresh generation of the conversation; the new key. */
  advance(address: A): string;
  /** Channel-server mode: whether the agent host answers this command (absent: not that mode). */
  hostAnswers: ((name: string) => boolean) | undefined;
  /** The hub's in-flight work (a shutdown waits for it). */
  track<T>(p: Promise<T>): Promise<T | undefined>;
}

export class CommandPath<A, P> {
  constructor(private readonly o: CommandPathOptions<A, P>) {}

  /** Run one command; resolves once routed, with its work (which completes the message's tickets). */
  async run(
    message: IncomingMessage<A, P>,
    parsed: Extract<ParsedCommand, { kind: "command" }>,
    nativeKey: string,
  ): Promise<Dispatched> {
    const { surface, tickets: ticketWork } = this.o;
    const name = parsed.spec.name;
    let key = nativeKey;
    if (!RECOVERY_COMMANDS.has(name)) {
      const routed = await this.o.route(message.address, nativeKey);
      if (!routed) return NOTHING;
      key = routed.key;
    }
    if (this.o.hostAnswers && !this.o.hostAnswers(name)) {
      await replyTo(
        surface,
        message,
        `${this.o.commands.spell(name)} is not available here: parley is running as a channel server, and the agent is your agent host's.`,
        await ticketWork.parts(message.tickets),
      );
      return NOTHING;
    }
    const handler = this.o.handlers?.[name] ?? SHARED_HANDLERS[name];
    const conversation = surface.conversation(message.address);
    const call: CommandCall<P> = {
      hub: this.o.services,
      spec: parsed.spec,
      arg: parsed.arg,
      userId: message.userId,
      owner: this.o.isOwner(message.userId),
      conversation,
      key,
      advance: () => this.o.advance(message.address),
      pickers: surface.pickers?.(message.address),
      notify: async (text) => void (await surface.reply(message.address, text)),
      retitle: async (title) => {
        await surface.retitle?.(message.address, title);
      },
      extra: message.extra,
      address: message.address as unknown as JsonValue,
    };
    // Off the intake path: a command may wait on the agent (/compact, /model), which must not hold
    // up the next message. Whatever queued while it held the session runs right after it.
    const tickets = message.tickets ?? [];
    const work = (async () => {
      let outcome: IntakeOutcome = "failed";
      await ticketWork.claim(tickets);
      try {
        const reply = handler ? await handler(call) : this.o.commands.usage(parsed.spec);
        // A compaction that ran re-arms the soft context notice: the next growth cycle is news again.
        // A refused or failed one (busy, unsupported, no session) compacted nothing: the latch holds.
        if (name === "compact" && reply.startsWith(COMPACTION_RECEIPT)) this.o.context.release(key);
        if (reply) await replyTo(surface, message, reply, await ticketWork.parts(tickets));
        outcome = "answered";
      } finally {
        await ticketWork.finish(tickets, outcome);
        await this.o.services.router.drain(key);
      }
    })();
    return { turn: this.o.track(work).then(() => {}), took: true };
  }
}
