/**
 * ConversationHub: the one dispatcher every channel composes (never inherits). Per authorized
 * message: the typed approval floor, the one command parse and its shared handler, the session the
 * conversation routes to (its generation seeded from the store, or a resumed session), privacy
 * modifiers, then the mid-turn router (run now, steer into the live turn, or hold behind one
 * receipt) into the turn pipeline with the channel's renderer. It owns approvals, in-flight work and
 * quiescent shutdown; a channel supplies only its surface (addresses, replies, renderers, files).
 *
 * It is also where accept-before-ack lives for every channel (see journal.ts): `receive` journals an
 * authorized message before the platform is acknowledged; the message then travels as a ticket with
 * whatever work it starts (a command, a turn, a queued item, a steer folded into a running turn)
 * and is completed when that work ends; `resume` runs what a restart found unfinished. A turn that
 * answers a journaled message is named after it, so its outbound parts (delivery.ts) and history
 * lines are found again when it runs a second time.
 *
 * The hub itself is the intake and the decisions (journal, order, typed floor, command parse, where
 * a message runs, privacy); each other responsibility is a part composed here and handed exactly
 * what it needs: conversation-keys.ts (session keys, generations), turn-runner.ts (the router and
 * the turns), command-path.ts (a command to its handler), prompt-answers.ts (presses and typed
 * answers), gateway-peers.ts (several gateways on one store), sink-bridge.ts (channel-server mode).
 */
import type { ApprovalVerdict } from "../approval/approvals.js";
import { ChannelApprovals, parseTypedVerdict, RECEIPT_EXPIRED } from "../approval/approvals.js";
import type { MidTurnRouter, QueueMode } from "../queue/mid-turn-router.js";
import { ContextWatch, DEFAULT_CONTEXT_THRESHOLDS } from "../session/context-thresholds.js";
import { PrivacyModes } from "../session/privacy-mode.js";
import type { SessionBinder } from "../session/resume.js";
import type { JsonValue } from "../store/port.js";
import type { Renderer } from "../turn/renderer.js";
import type { CommandHandler, HubServices } from "./command-handlers.js";
import type { CommandKit, MenuChoice } from "./command-kit.js";
import { menuChoice, unknownCommandReply } from "./command-kit.js";
import { CommandPath } from "./command-path.js";
import type { ChannelContext } from "./contract.js";
import { ConversationKeys } from "./conversation-keys.js";
import { GatewayPeers } from "./gateway-peers.js";
import type { IntakeSource, IntakeTicket, TicketWork } from "./journal.js";
import { ChannelJournal, ticketWork } from "./journal.js";
import { ModelPicker } from "./model-picker.js";
import { PICK_REFUSAL_TEXT } from "./picker.js";
import type { ApprovalOutcome } from "./press-forwarding.js";
import { PromptAnswers } from "./prompt-answers.js";
import { SinkBridge } from "./sink-bridge.js";
import type {
  ChannelSurface,
  Dispatched,
  Handled,
  HubPayload,
  IncomingMessage,
  PickerSurface,
  TurnGuards,
} from "./surface.js";
import { NOTHING, placeOf, replyTo } from "./surface.js";
import type { TurnContext } from "./turn-runner.js";
import { TurnRunner } from "./turn-runner.js";

export interface HubOptions<A, P> {
  surface: ChannelSurface<A, P>;
  commands: CommandKit;
  /** The channel context: what its turns use (turn-runner.ts), and the store, egress, schedules, agent host. */
  ctx: TurnContext & Pick<ChannelContext, "durable" | "egress" | "schedules" | "sink" | "drops" | "status">;
  /** Whether this sender is the channel's configured owner (/yolo, listings). */
  isOwner(userId: string): boolean;
  /** The channel's own mid-turn mode; the gateway-wide one otherwise. */
  queueMode?: QueueMode | undefined;
  approvalTimeoutMs?: number | undefined;
  /** The help card's last line: how approvals are answered on this channel. */
  helpFooter: string;
  /** Handlers this channel answers differently (by command name). */
  handlers?: Readonly<Record<string, CommandHandler<P>>>;
  /** Honour `temporary`/`incognito` modifiers and commands. */
  privacy?: boolean;
  /** Session resume: a conversation may continue a session born elsewhere (the web chat). */
  binder?: SessionBinder | undefined;
  /** A gate after commands, before the agent (e.g. a group Topic answering only when mentioned). */
  admit?(message: IncomingMessage<A, P>): boolean;
  /**
   * The platform redelivers a message it saw go unanswered, keyed on the platform id (WeCom's
   * msgid): a message whose work failed is then not deduped against that redelivery (journal.ts).
   */
  redelivers?: boolean;
  /**
   * False: a message that arrives while a turn runs is steered into it or refused with a resend
   * prompt, never held for later (a platform whose answer is bound to the message that asked).
   */
  holdsMidTurn?: boolean;
  /**
   * What this message's sender is not allowed (surface.ts `TurnGuards`): decided from the message
   * itself, so a message resumed after a restart is held to the same rules.
   */
  guards?(message: IncomingMessage<A, P>): TurnGuards;
}

/** Said when a file reaches a channel that takes none: silence would read as the agent ignoring it. */
export function filesUnsupportedNotice(withText: boolean): string {
  return withText
    ? "📎 Files are not supported here yet: the agent got your words, without the file."
    : "📎 Files are not supported here yet, so the agent did not get this. Paste the text instead.";
}

/** Where a message runs: the conversation's own session, or a resumed one. */
interface Routed {
  key: string;
  resumed: boolean;
}

/** A pressable list a channel keeps itself (see ConversationHub.registerList). */
export interface ChannelList<A> {
  /** Whether this gateway posted the list the press data names. */
  holds(data: JsonValue): boolean;
  /** Settle a press here: the text for the presser, or null when the list shows the outcome. */
  judge(address: A, data: JsonValue): Promise<string | null>;
}

export class ConversationHub<A, P = undefined> {
  readonly channel: string;
  readonly router: MidTurnRouter<HubPayload<P>>;
  readonly approvals: ChannelApprovals;
  readonly models: ModelPicker;
  readonly privacy: PrivacyModes | undefined;
  readonly commands: CommandKit;
  /** Each conversation's session key and each key's address (conversation-keys.ts). */
  private readonly keys: ConversationKeys<A>;
  /** The router and the turns it runs (turn-runner.ts). */
  private readonly turns: TurnRunner<A, P>;
  private readonly inflight = new Set<Promise<unknown>>();
  /** Presses and typed answers to open approval prompts (prompt-answers.ts). */
  private readonly answers: PromptAnswers<A>;
  /** Parsed commands to their handlers (command-path.ts). */
  private readonly commandPath: CommandPath<A, P>;
  private readonly journal: ChannelJournal<A, P> | undefined;
  private readonly tickets: TicketWork;
  /** Shutting down: work cut short now stays unfinished in the journal, to run after the restart. */
  private closing = false;
  /** Several gateways on one store: pick-ups and forwarded presses (gateway-peers.ts). */
  private readonly peers: GatewayPeers<A, P> | undefined;
  /** Lists the channel keeps itself, by name (registerList). */
  private readonly lists = new Map<string, ChannelList<A>>();
  /** Per conversation: the routing of its received messages, one after another in arrival order. */
  private readonly routing = new Map<string, Promise<unknown>>();
  /** Channel-server mode: authorized messages go to an agent host instead of a turn (sink-bridge.ts). */
  private readonly sink: SinkBridge<A, P> | undefined;

  constructor(private readonly o: HubOptions<A, P>) {
    const c = o.ctx;
    this.channel = c.name;
    this.commands = o.commands;
    const context = new ContextWatch({
      thresholds: c.defaults.contextThresholds ?? DEFAULT_CONTEXT_THRESHOLDS,
      sessions: c.sessions,
      logger: c.logger,
      commands: { compact: o.commands.spell("compact"), new: o.commands.spell("new") },
    });
    this.journal = c.durable
      ? new ChannelJournal<A, P>({
          channel: this.channel,
          durable: c.durable,
          surface: o.surface,
          audit: c.audit,
          drops: c.drops,
          logger: c.logger,
          now: () => c.clock.now(),
          ...(o.redelivers ? { forgetFailed: true } : {}),
        })
      : undefined;
    this.tickets = ticketWork(this.journal);
    this.approvals = new ChannelApprovals({
      channel: this.channel,
      timers: c.clock,
      audit: c.audit,
      ...(o.approvalTimeoutMs ? { timeoutMs: o.approvalTimeoutMs } : {}),
      logger: c.logger,
      onTimeout: (request) =>
        void this.answers.markApproval(request.sessionKey, request.requestId, "timeout"),
    });
    this.keys = new ConversationKeys<A>({
      channel: this.channel,
      surface: o.surface,
      store: c.store,
      logger: c.logger,
      clock: c.clock,
      rotation: c.defaults.rotation,
    });
    this.privacy = o.privacy
      ? new PrivacyModes({ audit: c.audit, store: c.store, logger: c.logger })
      : undefined;
    const track = <T>(p: Promise<T>) => this.track(p);
    const closing = () => this.closing;
    this.turns = new TurnRunner<A, P>({
      surface: o.surface,
      ctx: c,
      keys: this.keys,
      tickets: this.tickets,
      approvals: this.approvals,
      privacy: this.privacy,
      context,
      queueMode: o.queueMode,
      holdsMidTurn: o.holdsMidTurn,
      track,
      closing,
    });
    this.router = this.turns.router;
    this.models = new ModelPicker({
      sessions: c.sessions,
      logger: c.logger,
      now: () => c.clock.now(),
      afterSwitch: (key) => this.router.drain(key),
    });
    const ownership = c.durable?.ownership;
    this.peers =
      ownership && this.journal
        ? new GatewayPeers<A, P>({
            channel: this.channel,
            ownership,
            journal: this.journal,
            surface: o.surface,
            models: this.models,
            logger: c.logger,
            route: (message) => this.routeInOrder(message),
            pressHere: (address, press) => this.answers.pressHere(address, press),
            listHere: (address, list, data) => this.listHere(address, list, data),
            track,
            closing,
          })
        : undefined;
    const peers = this.peers;
    this.answers = new PromptAnswers<A>({
      channel: this.channel,
      approvals: this.approvals,
      keys: this.keys,
      surface: o.surface,
      binder: o.binder,
      logger: c.logger,
      // A host's prompt by its id, else the session's running turn.
      rendererOf: (key, requestId) =>
        this.sink?.promptRenderer(key, requestId) ?? this.turns.activeRenderer(key),
      forward: peers ? (address, press) => peers.forwardApproval(address, press) : undefined,
    });
    const services: HubServices = {
      channel: this.channel,
      sessions: c.sessions,
      store: c.store,
      router: this.router,
      approvals: this.approvals.registry,
      grant: c.grant,
      audit: c.audit,
      logger: c.logger,
      commands: o.commands,
      models: this.models,
      privacy: this.privacy,
      binder: o.binder,
      history: c.pipeline.history,
      helpFooter: o.helpFooter,
      generation: (route) => this.keys.generation(route),
      clock: c.clock,
      schedules: c.schedules,
      egress: c.egress,
    };
    this.sink = c.sink
      ? new SinkBridge<A, P>({
          sink: c.sink,
          surface: o.surface,
          ctx: c,
          keys: this.keys,
          tickets: this.tickets,
          approvals: this.approvals,
          outboundFiles: (key) => this.turns.outboundFiles(key),
          press: (address, p) => this.press(address, p),
          track,
        })
      : undefined;
    this.commandPath = new CommandPath<A, P>({
      surface: o.surface,
      commands: o.commands,
      handlers: o.handlers,
      isOwner: (userId) => o.isOwner(userId),
      services,
      tickets: this.tickets,
      context,
      route: (address, nativeKey) => this.route(address, nativeKey),
      advance: (address) => this.advance(address),
      hostAnswers: this.sink?.hasCommand.bind(this.sink),
      track,
    });
    // Counts for health, metrics and `parley status`: read when asked, never pushed per message.
    c.status?.hub({
      queued: () => this.router.queued(),
      awaitingApproval: () => this.approvals.registry.openSessions(),
    });
  }

  // ── addresses ─────────────────────────────────────────────────────────────────────────────

  /** The current session key of an address (its generation seeded once from the store). */
  keyOf(address: A): string {
    return this.keys.keyOf(address);
  }

  /** /new: a fresh generation, persisted so a restart cannot resurrect the old one. */
  advance(address: A): string {
    return this.keys.advance(address);
  }

  /** The address a session key renders to, when this hub has seen it. */
  addressOf(key: string): A | undefined {
    return this.keys.addressOf(key);
  }

  /** The renderer of a session's running turn. */
  activeRenderer(key: string): Renderer | undefined {
    return this.turns.activeRenderer(key);
  }

  // ── intake ────────────────────────────────────────────────────────────────────────────────

  /**
   * THE intake entry for one authorized message: journal it (durable when `onAccepted` runs, so
   * that is where the platform is acknowledged), drop a redelivery of the same platform id, then
   * route it like `handle`, after the conversation's earlier messages (`handleInOrder`). Rejects
   * when the journal cannot take it: the caller then does NOT acknowledge, and the platform
   * delivers it again. `onAccepted` is told the ticket (null for a redelivery, undefined where
   * nothing is journaled); a caller that acknowledges there need not wait for the routing.
   */
  async receive(
    message: IncomingMessage<A, P>,
    source: IntakeSource,
    opts: { onAccepted?: (ticket: IntakeTicket | null | undefined) => void } = {},
  ): Promise<Handled> {
    const ticket = await this.accept(message, source);
    opts.onAccepted?.(ticket);
    if (ticket === null) return NOTHING;
    return this.handleInOrder({ ...message, tickets: ticket ? [ticket] : [] });
  }

  /**
   * Several gateways on one store: run what this gateway must now serve from the shared journal
   * (messages another gateway received for a conversation owned here, and the unfinished work of a
   * gateway that is gone), with the same stale / cut-short rules as a restart. One pick-up at a time.
   */
  async adopt(): Promise<void> {
    await this.peers?.adopt();
  }

  /**
   * `receive` for an intake that acknowledges the platform as soon as the message is journaled
   * (Feishu's event handler returning, Weixin's poll cursor moving): resolves then, or when nothing
   * needed journaling (a redelivery); rejects only when the journal could not take it, so the caller
   * does not acknowledge and the platform delivers it again. The routing runs on, tracked (a
   * shutdown waits for it); a failure after the journal is logged, never a second rejection.
   * Resolves with what `onAccepted` was told: null for a redelivery, so the channel can count it.
   */
  receiveJournaled(
    message: IncomingMessage<A, P>,
    source: IntakeSource,
  ): Promise<IntakeTicket | null | undefined> {
    return new Promise<IntakeTicket | null | undefined>((resolve, reject) => {
      let journaled = false;
      this.receive(message, source, {
        onAccepted: (ticket) => {
          journaled = true;
          resolve(ticket);
        },
      }).then(
        ({ turn }) => void this.track(turn),
        (error: unknown) => {
          if (!journaled) reject(error);
          else this.o.ctx.logger.error(`${this.channel}: routing a message failed`, { error: String(error) });
        },
      );
    });
  }

  /**
   * `handle`, after every message of the same conversation handed here earlier has been routed:
   * routing can wait (a receipt behind a paced platform), and the next message must neither wait
   * for that at intake nor overtake it.
   */
  async handleInOrder(message: IncomingMessage<A, P>): Promise<Handled> {
    if (this.peers && (message.tickets?.length ?? 0) > 0 && !(await this.peers.servesHere(message)))
      return NOTHING;
    return this.routeInOrder(message);
  }

  /** `handleInOrder` for a message known to be served here. */
  private routeInOrder(message: IncomingMessage<A, P>): Promise<Handled> {
    const route = this.o.surface.conversation(message.address).route;
    const mine = (this.routing.get(route) ?? Promise.resolve()).then(() => this.handle(message));
    const tail = mine.then(
      () => {},
      () => {},
    );
    this.routing.set(route, tail);
    void tail.then(() => {
      if (this.routing.get(route) === tail) this.routing.delete(route);
    });
    return mine;
  }

  /**
   * Only the journaling half of `receive`, for messages the platform sends as parts of one (an
   * album's items are each journaled, then routed once, merged, with all their tickets). null for a
   * redelivery; undefined when nothing is journaled here (no store).
   */
  async accept(
    message: IncomingMessage<A, P>,
    source: IntakeSource,
  ): Promise<IntakeTicket | null | undefined> {
    return this.journal?.accept(message, source);
  }

  /**
   * Route one authorized message; resolves once routed, with the end of the work it started. Its
   * tickets are completed when that work ends (at once, when it started none).
   */
  async handle(message: IncomingMessage<A, P>): Promise<Handled> {
    const tickets = message.tickets ?? [];
    let handled: Dispatched;
    try {
      handled = await this.dispatch(message);
    } catch (error) {
      await this.tickets.finish(tickets, "failed");
      throw error;
    }
    if (!handled.took) await this.tickets.finish(tickets, "answered");
    return { turn: handled.turn };
  }

  /** A command picked from the platform's menu (`from`: how its users pick one): command-kit's menuChoice. */
  menuChoice(text: string, from: string): MenuChoice {
    return menuChoice(this.o.commands, text, from, this.o.helpFooter);
  }

  /**
   * At start: run again what the journal holds unfinished for this channel (or tell its sender why
   * not: journal.ts). Resolves once all of it is routed; call it before intake opens, so a
   * conversation's older message still comes first.
   */
  async resume(): Promise<void> {
    // Several gateways: only what this one owns and nobody live has in hand (gateway-peers.ts).
    if (this.peers) return this.peers.start();
    // A typed 1/2/3 found unfinished answered a prompt that died with the earlier process: it must
    // not approve whatever the rerun asks next (the rerun may ask something else).
    await this.journal?.resume(
      async (message) => void this.track((await this.handle({ ...message, staleVerdict: true })).turn),
    );
  }

  /** Route one authorized message (the work behind `handle`). */
  private async dispatch(incoming: IncomingMessage<A, P>): Promise<Dispatched> {
    let message = incoming;
    const nativeKey = this.keyOf(message.address);
    let files = message.attachments ?? [];
    // A file's caption is content for the agent, never a command or a typed approval answer.
    const interpret = (message.interpretCommands ?? true) && files.length === 0;
    if (files.length > 0 && !this.o.surface.attachments) {
      // A channel that takes no files says so: the words (if any) still go on, the file cannot.
      this.o.ctx.audit.log("inbound", "dropped", { channel: this.channel, reason: "files_unsupported" });
      const withText = message.text.trim() !== "";
      await replyTo(
        this.o.surface,
        message,
        filesUnsupportedNotice(withText),
        await this.tickets.parts(message.tickets, ":files"),
      );
      if (!withText) return NOTHING;
      message = { ...message, attachments: [] };
      files = [];
    }
    const guards = this.o.guards?.(message) ?? {};
    let text = message.text;
    let override: QueueMode | undefined;
    if (interpret) {
      if (message.staleVerdict && parseTypedVerdict(text) !== null) {
        // It answers a prompt that is gone (an earlier process's, or one already decided): it approves
        // nothing, and is neither sent to the agent nor mistaken for the prompt open now.
        this.o.ctx.audit.log("tool_permission", "refused", { channel: this.channel, reason: "stale_typed" });
        await replyTo(this.o.surface, message, RECEIPT_EXPIRED, await this.tickets.parts(message.tickets));
        return NOTHING;
      }
      // Only a sender who may answer prompts answers one; anyone else's "1" is just a message.
      if (
        guards.answersApprovals !== false &&
        (await this.answers.typedVerdict(message.address, message.text, nativeKey))
      )
        return NOTHING;
      const parsed = message.parsed !== undefined ? message.parsed : this.o.commands.parse(text);
      if (parsed?.kind === "foreign") return NOTHING;
      if (parsed?.kind === "unknown") {
        await replyTo(
          this.o.surface,
          message,
          unknownCommandReply(this.o.commands, this.o.helpFooter),
          await this.tickets.parts(message.tickets),
        );
        return NOTHING;
      }
      if (parsed?.kind === "command" && parsed.spec.override) {
        if (!parsed.arg) {
          await replyTo(
            this.o.surface,
            message,
            this.o.commands.usage(parsed.spec),
            await this.tickets.parts(message.tickets),
          );
          return NOTHING;
        }
        override = parsed.spec.override;
        text = parsed.arg; // the payload is content: "/queue /new" queues the literal "/new"
      } else if (parsed?.kind === "command") return this.commandPath.run(message, parsed, nativeKey);
    }
    if (this.o.admit && !this.o.admit(message)) return NOTHING;
    const routed = await this.route(message.address, nativeKey);
    if (!routed) return NOTHING;
    let key = routed.key;
    if (!routed.resumed) {
      // Rotation belongs to the conversation's own session, checked after the busy check.
      key = this.keys.rotate(message.address, key, this.o.ctx.sessions.isBusy(key));
    }
    if (this.privacy) {
      // Modifiers only ever restrict, so one in a caption is honoured too.
      const stripped = await this.privacy.stripAndApply(text, key, {
        source: this.channel,
        caller: message.userId,
        notify: async (notice) => void (await this.o.surface.reply(message.address, notice)),
      });
      if (stripped.onlyModifier && files.length === 0) return NOTHING;
      text = stripped.text;
    }
    // A sender who may not steer is held behind the receipt, whatever the mode or directive.
    if (guards.steer === false) override = "queue";
    if (this.sink) return this.sink.take(key, message, text);
    return this.turns.submit(key, message, text, { interpret, override, guards });
  }

  /**
   * A press on an approval widget. The prompt is found under whichever of this conversation's keys
   * opened it (a resumed session's, or its own) and the nonce alone decides. Returns the outcome
   * label when it landed, or the neutral expiry receipt. With several gateways, a prompt that is not
   * open here is judged by the gateway serving the conversation, if that is another one.
   */
  async press(
    address: A,
    p: {
      requestId: string;
      nonce: string | null | undefined;
      verdict: ApprovalVerdict;
      /** What the prompt shows once decided, when the press did more than the verdict says. */
      label?: string;
    },
  ): Promise<ApprovalOutcome> {
    return this.answers.press(address, p);
  }

  /**
   * Whether a press with this nonce would land on an open prompt of this conversation, without
   * settling it: for a press that must do something first (arm a grant) only when it will count.
   */
  promptOpen(address: A, p: { requestId: string; nonce: string | null | undefined }): boolean {
    return this.answers.promptOpen(address, p);
  }

  /**
   * A press on a posted model list: a refusal for the presser, or the switch under way. With several
   * gateways, a list not posted here is judged by the gateway serving the conversation.
   */
  async pickModel(
    address: A,
    p: { handle: string; index: number; presser: string },
    pickers: PickerSurface & { retire?(handle: string): Promise<void> },
  ): Promise<{ refusal: string } | { applied: Promise<void> }> {
    if (!this.models.offers(p.handle) && this.peers) {
      const forwarded = await this.peers.forwardModel(address, p);
      // Applied there: the list there is settled to the outcome by the gateway that posted it.
      if (forwarded) return "refusal" in forwarded ? forwarded : { applied: Promise.resolve() };
    }
    const scope = placeOf(this.o.surface.conversation(address));
    return this.models.press(p.handle, p.index, { presser: p.presser, scope }, pickers);
  }

  /**
   * A list the channel keeps itself (Teams' session list), pressable through `pressList`: `holds`
   * says whether this gateway posted the list a press names, `judge` settles a press here.
   */
  registerList(name: string, list: ChannelList<A>): void {
    this.lists.set(name, list);
  }

  /**
   * A press on a registered list: the text to tell the presser, or null when the list shows the
   * outcome. With several gateways, a list not posted here is judged by the gateway serving the
   * conversation (it holds the list).
   */
  async pressList(address: A, name: string, data: JsonValue): Promise<string | null> {
    const list = this.lists.get(name);
    if (!list) throw new Error(`${this.channel}: no list named ${name} is registered`);
    if (!list.holds(data) && this.peers) {
      const forwarded = await this.peers.forwardList(address, name, data);
      if (forwarded) return forwarded.text;
    }
    return list.judge(address, data);
  }

  /** A list press judged here (another gateway forwarded it): an unknown list is a list no longer here. */
  private listHere(address: A, name: string, data: JsonValue): Promise<string | null> {
    const list = this.lists.get(name);
    return list ? list.judge(address, data) : Promise.resolve(PICK_REFUSAL_TEXT.unknown);
  }

  /** Keep a promise in flight until it settles (shutdown waits for it); failures are logged. */
  track<T>(p: Promise<T>): Promise<T | undefined> {
    const guarded = p.catch((error: unknown) => {
      this.o.ctx.logger.error(`${this.channel}: handling failed`, { error: String(error) });
      return undefined;
    });
    this.inflight.add(guarded);
    void guarded.finally(() => this.inflight.delete(guarded));
    return guarded;
  }

  /**
   * Quiescent shutdown: deny open prompts, stop live turns, wait for in-flight work to settle. What
   * the stop cut short stays unfinished in the journal: the next start answers it.
   */
  async shutdown(): Promise<void> {
    this.closing = true;
    this.peers?.stop();
    for (const key of this.sink?.promptSessions() ?? []) this.approvals.registry.denyAll(key);
    await this.turns.stopAll();
    await Promise.allSettled([...this.inflight]);
  }

  // ── internals ─────────────────────────────────────────────────────────────────────────────

  /** Decide ONCE where a message runs; null when resume routing refused (its notice was sent). */
  private async route(address: A, nativeKey: string): Promise<Routed | null> {
    if (!this.o.binder) return { key: nativeKey, resumed: false };
    const { link } = this.o.surface.conversation(address);
    const decision = await this.o.binder.routeAndDeliver(link, nativeKey, (notice) =>
      this.o.surface.reply(address, notice),
    );
    if (decision.kind === "refuse") return null;
    // A resumed session's turn renders HERE, not at its web chat origin.
    if (decision.resumed) this.keys.renderAt(decision.sessionKey, address);
    return { key: decision.sessionKey, resumed: decision.resumed };
  }
}
