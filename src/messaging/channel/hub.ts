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
 */
import type { ApprovalDecider, ApprovalVerdict } from "../approval/approvals.js";
import { ChannelApprovals, parseTypedVerdict, RECEIPT_EXPIRED } from "../approval/approvals.js";
import type { Clock } from "../base/clock.js";
import type { Logger } from "../base/logger.js";
import type { QueueMode } from "../queue/mid-turn-router.js";
import { MidTurnRouter } from "../queue/mid-turn-router.js";
import type { QueuedItem, ReceiptSurface } from "../queue/receipt.js";
import { stopRunningTurn } from "../queue/stop.js";
import type { AuditSink } from "../security/audit.js";
import { autoTitleStep } from "../session/auto-title.js";
import { ContextWatch, DEFAULT_CONTEXT_THRESHOLDS } from "../session/context-thresholds.js";
import { ConversationState } from "../session/generations.js";
import { channelNamespaceOf } from "../session/keys.js";
import { PrivacyModes } from "../session/privacy-mode.js";
import type { SessionBinder } from "../session/resume.js";
import type { SessionManager } from "../session/session-manager.js";
import type { SessionStore } from "../session/session-store.js";
import { uploadsRestricted } from "../session/upload-gate.js";
import type { ConversationOwnership } from "../store/ownership.js";
import type { IntakeOutcome, JsonValue } from "../store/port.js";
import type { ApprovalMode } from "../turn/driver.js";
import { COMPACTION_RECEIPT } from "../turn/frames.js";
import type { PipelineProvider, TurnPipelineDeps, TurnResult } from "../turn/pipeline.js";
import { deliveryIsMuted, runTurnPipeline } from "../turn/pipeline.js";
import type { Renderer } from "../turn/renderer.js";
import { DONE, PROMPT_CHOICE, TEXT_CHUNK } from "../turn/renderer.js";
import type { CommandCall, CommandHandler, HubServices } from "./command-handlers.js";
import { SHARED_HANDLERS } from "./command-handlers.js";
import type { CommandKit, ParsedCommand } from "./command-kit.js";
import type { ChannelContext, GrantControl } from "./contract.js";
import { TurnParts } from "./delivery.js";
import type { IntakeSource, IntakeTicket } from "./journal.js";
import { ChannelJournal } from "./journal.js";
import { ModelPicker } from "./model-picker.js";
import { PICK_REFUSAL_TEXT } from "./picker.js";
import type { ApprovalOutcome, ForwardedModelOutcome } from "./press-forwarding.js";
import { PressForwarding } from "./press-forwarding.js";
import { approvalOutcomeLabel, resendNotice } from "./render-kit.js";
import type {
  ChannelSurface,
  Conversation,
  Handled,
  HubPayload,
  IncomingMessage,
  OutboundFilePolicy,
  PickerSurface,
  TurnGuards,
} from "./surface.js";
import { NOTHING, placeOf } from "./surface.js";
import type { SinkApproval, SinkConversation, TurnSink } from "./turn-sink.js";

/** Commands that must work while resume routing refuses: the way back in for a user whose link broke. */
const RECOVERY_COMMANDS: ReadonlySet<string> = new Set(["help", "sessions", "new", "unlink"]);

export interface HubOptions<A, P> {
  surface: ChannelSurface<A, P>;
  commands: CommandKit;
  ctx: Pick<
    ChannelContext,
    | "name"
    | "sessions"
    | "store"
    | "pipeline"
    | "audit"
    | "logger"
    | "clock"
    | "grant"
    | "defaults"
    | "titles"
    | "durable"
    | "egress"
    | "schedules"
    | "sink"
  >;
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

/** Internal: whether the work a message started took its tickets (and will complete them). */
type Dispatched = Handled & { took?: boolean };

export class ConversationHub<A, P = undefined> {
  readonly channel: string;
  readonly router: MidTurnRouter<HubPayload<P>>;
  readonly approvals: ChannelApprovals;
  readonly models: ModelPicker;
  readonly privacy: PrivacyModes | undefined;
  readonly commands: CommandKit;
  private readonly generations: ConversationState;
  private readonly seeded = new Set<string>();
  private readonly addresses = new Map<string, A>();
  private readonly active = new Map<string, Renderer>();
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly services: HubServices;
  private readonly sessions: SessionManager<PipelineProvider>;
  private readonly store: SessionStore;
  private readonly audit: AuditSink;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly grant: GrantControl;
  private readonly approvalMode: ApprovalMode;
  private readonly pipeline: TurnPipelineDeps;
  private readonly context: ContextWatch;
  private readonly journal: ChannelJournal<A, P> | undefined;
  /** Per session: the journaled messages its running turn answers (steered ones ride along). */
  private readonly turnTickets = new Map<string, IntakeTicket[]>();
  /** Shutting down: work cut short now stays unfinished in the journal, to run after the restart. */
  private closing = false;
  /** A pick-up from the shared journal is running (several gateways): the next tick waits its turn. */
  private adopting = false;
  /** Stops the pick-up ticks (several gateways); set once the channel resumed. */
  private untick: (() => void) | undefined;
  /** Several gateways: presses for conversations served elsewhere go there (press-forwarding.ts). */
  private readonly forwarding: PressForwarding | undefined;
  /** Stops judging presses other gateways forward here; set once the channel resumed. */
  private unserve: (() => void) | undefined;
  /** Per conversation: the routing of its received messages, one after another in arrival order. */
  private readonly routing = new Map<string, Promise<unknown>>();
  /** Channel-server mode: where authorized messages go instead of an agent turn. */
  private readonly sink: TurnSink | undefined;
  /** Approval prompts asked for an agent host, by `<key>:<requestId>`: their renderer and nonce. */
  private readonly sinkPrompts = new Map<string, { renderer: Renderer; nonce: string }>();

  constructor(private readonly o: HubOptions<A, P>) {
    const c = o.ctx;
    this.channel = c.name;
    this.commands = o.commands;
    this.sessions = c.sessions;
    this.store = c.store;
    this.audit = c.audit;
    this.logger = c.logger;
    this.clock = c.clock;
    this.grant = c.grant;
    this.approvalMode = c.defaults.approvalMode;
    this.context = new ContextWatch({
      thresholds: c.defaults.contextThresholds ?? DEFAULT_CONTEXT_THRESHOLDS,
      sessions: c.sessions,
      logger: c.logger,
      commands: { compact: o.commands.spell("compact"), new: o.commands.spell("new") },
    });
    this.pipeline = {
      ...c.pipeline,
      sessions: c.sessions,
      store: c.store,
      clock: c.clock,
      // After every turn, inside its hold on the session: the context thresholds (notice, compaction).
      postTurn: [
        ...(c.pipeline.postTurn ?? []),
        { name: "context_thresholds", run: (r) => this.afterTurn(r) },
      ],
    };
    this.journal = c.durable
      ? new ChannelJournal<A, P>({
          channel: this.channel,
          durable: c.durable,
          surface: o.surface,
          audit: this.audit,
          logger: this.logger,
          now: () => this.clock.now(),
          ...(o.redelivers ? { forgetFailed: true } : {}),
        })
      : undefined;
    this.approvals = new ChannelApprovals({
      channel: this.channel,
      timers: this.clock,
      audit: this.audit,
      ...(o.approvalTimeoutMs ? { timeoutMs: o.approvalTimeoutMs } : {}),
      logger: this.logger,
      onTimeout: (request) => void this.markApproval(request.sessionKey, request.requestId, "timeout"),
    });
    this.generations = new ConversationState({ clock: this.clock, ...c.defaults.rotation });
    this.privacy = o.privacy
      ? new PrivacyModes({ audit: this.audit, store: this.store, logger: this.logger })
      : undefined;
    this.router = new MidTurnRouter<HubPayload<P>>({
      sessions: this.sessions,
      // Never holding, "queue" would refuse every message mid-turn: steering is all there is.
      queueMode: o.holdsMidTurn === false ? "steer" : (o.queueMode ?? c.defaults.queueMode),
      surfaceFor: (key) => this.receipts(key),
      runTurn: (key, text, release, opts) => this.runTurn(key, text, release, opts.items),
      ...(o.holdsMidTurn === false ? { holds: false } : {}),
      // Dropped by /stop: they will never run. Dropped by a shutdown: they run after the restart.
      onDropped: (_key, items) => {
        if (!this.closing)
          void this.finish(
            items.flatMap((i) => i.payload?.tickets ?? []),
            "refused",
          );
      },
    });
    const ownership = c.durable?.ownership;
    this.forwarding = ownership
      ? new PressForwarding({ channel: this.channel, ownership, logger: this.logger })
      : undefined;
    this.models = new ModelPicker({
      sessions: this.sessions,
      logger: this.logger,
      now: () => this.clock.now(),
      afterSwitch: (key) => this.router.drain(key),
    });
    this.services = {
      channel: this.channel,
      sessions: this.sessions,
      store: this.store,
      router: this.router,
      approvals: this.approvals.registry,
      grant: this.grant,
      audit: this.audit,
      logger: this.logger,
      commands: o.commands,
      models: this.models,
      privacy: this.privacy,
      binder: o.binder,
      history: c.pipeline.history,
      helpFooter: o.helpFooter,
      generation: (route) => this.generations.generation(route),
      clock: this.clock,
      schedules: c.schedules,
      egress: c.egress,
    };
    this.sink = c.sink;
    this.sink?.attach(this.channel, (address) => this.sinkConversation(address as unknown as A));
  }

  // ── addresses ─────────────────────────────────────────────────────────────────────────────

  /** The current session key of an address (its generation seeded once from the store). */
  keyOf(address: A): string {
    const { route } = this.o.surface.conversation(address);
    if (!this.seeded.has(route)) {
      // Without the seed a restart counts from 0, and /new would land on a key already discarded.
      this.generations.seedGeneration(route, this.store.generationOf(this.o.surface.sessionKey(address, 0)));
      this.seeded.add(route);
    }
    const key = this.o.surface.sessionKey(address, this.generations.generation(route));
    this.addresses.set(key, address);
    return key;
  }

  /** /new: a fresh generation, persisted so a restart cannot resurrect the old one. */
  advance(address: A): string {
    this.keyOf(address);
    const { route } = this.o.surface.conversation(address);
    this.persistGeneration(address, this.generations.advance(route));
    return this.keyOf(address);
  }

  /** A new generation outlives a restart: without it the next start would resume the one left behind. */
  private persistGeneration(address: A, generation: number): void {
    try {
      this.store.setGeneration(this.o.surface.sessionKey(address, 0), generation);
    } catch (error) {
      this.logger.warn(`${this.channel}: persisting the generation failed`, { error: String(error) });
    }
  }

  /** The address a session key renders to, when this hub has seen it. */
  addressOf(key: string): A | undefined {
    return this.addresses.get(key);
  }

  /** The renderer of a session's running turn. */
  activeRenderer(key: string): Renderer | undefined {
    return this.active.get(key);
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
   * Several gateways on one store: run a journaled message here only when this gateway serves its
   * conversation and has taken the message in hand; otherwise it stays journaled for the owner's
   * pick-up (`adopt`). A store that cannot say leaves it journaled too: a pick-up runs it later.
   */
  private async servesHere(
    message: IncomingMessage<A, P>,
    ownership: ConversationOwnership,
  ): Promise<boolean> {
    const key = this.ownershipKey(message.address);
    try {
      if (!(await ownership.acquire(key))) return false;
      for (const t of message.tickets ?? []) if (!(await ownership.takeInHand(t.id))) return false;
      return true;
    } catch (error) {
      this.logger.warn(`${this.channel}: ownership check failed; the message waits for a pick-up`, {
        error: String(error),
      });
      return false;
    }
  }

  /**
   * Several gateways on one store: run what this gateway must now serve from the shared journal
   * (messages another gateway received for a conversation owned here, and the unfinished work of a
   * gateway that is gone), with the same stale / cut-short rules as a restart. One pick-up at a time.
   */
  async adopt(): Promise<void> {
    const ownership = this.o.ctx.durable?.ownership;
    if (!this.journal || !ownership || this.closing || this.adopting) return;
    this.adopting = true;
    try {
      const rows = await ownership.pickUp(this.channel);
      if (rows.length === 0) return;
      await this.journal.resume(
        async (message) =>
          void this.track((await this.routeInOrder({ ...message, staleVerdict: true })).turn),
        rows,
      );
    } finally {
      this.adopting = false;
    }
  }

  /**
   * `receive` for an intake that acknowledges the platform as soon as the message is journaled
   * (Feishu's event handler returning, Weixin's poll cursor moving): resolves then, or when nothing
   * needed journaling (a redelivery); rejects only when the journal could not take it, so the caller
   * does not acknowledge and the platform delivers it again. The routing runs on, tracked (a
   * shutdown waits for it); a failure after the journal is logged, never a second rejection.
   */
  receiveJournaled(message: IncomingMessage<A, P>, source: IntakeSource): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let journaled = false;
      this.receive(message, source, {
        onAccepted: () => {
          journaled = true;
          resolve();
        },
      }).then(
        ({ turn }) => void this.track(turn),
        (error: unknown) => {
          if (!journaled) reject(error);
          else this.logger.error(`${this.channel}: routing a message failed`, { error: String(error) });
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
    const ownership = this.o.ctx.durable?.ownership;
    if (ownership && (message.tickets?.length ?? 0) > 0 && !(await this.servesHere(message, ownership)))
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
      await this.finish(tickets, "failed");
      throw error;
    }
    if (!handled.took) await this.finish(tickets, "answered");
    return { turn: handled.turn };
  }

  /**
   * At start: run again what the journal holds unfinished for this channel (or tell its sender why
   * not: journal.ts). Resolves once all of it is routed; call it before intake opens, so a
   * conversation's older message still comes first.
   */
  async resume(): Promise<void> {
    // Several gateways: only what this one owns and nobody live has in hand (the rest is theirs),
    // then at every tick, since other gateways journal for conversations served here.
    const ownership = this.o.ctx.durable?.ownership;
    if (ownership) {
      this.untick ??= ownership.onTick(() => this.adopt());
      this.unserve ??= this.forwarding?.serve({
        approval: (press) => this.pressHere(press.address as unknown as A, press),
        model: (press) => this.pickModelForwarded(press.address as unknown as A, press),
      });
      return this.adopt();
    }
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
      this.audit.log("inbound", "dropped", { channel: this.channel, reason: "files_unsupported" });
      const withText = message.text.trim() !== "";
      await this.replyTo(
        message,
        filesUnsupportedNotice(withText),
        await this.partsFor(message.tickets, ":files"),
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
        this.audit.log("tool_permission", "refused", { channel: this.channel, reason: "stale_typed" });
        await this.replyTo(message, RECEIPT_EXPIRED, await this.partsFor(message.tickets));
        return NOTHING;
      }
      // Only a sender who may answer prompts answers one; anyone else's "1" is just a message.
      if (guards.answersApprovals !== false && (await this.typedVerdict(message, nativeKey))) return NOTHING;
      const parsed = message.parsed !== undefined ? message.parsed : this.o.commands.parse(text);
      if (parsed?.kind === "foreign") return NOTHING;
      if (parsed?.kind === "unknown") {
        await this.replyTo(
          message,
          `I don't know that command.\n\n${this.o.commands.help(this.o.helpFooter)}`,
          await this.partsFor(message.tickets),
        );
        return NOTHING;
      }
      if (parsed?.kind === "command" && parsed.spec.override) {
        if (!parsed.arg) {
          await this.replyTo(
            message,
            this.o.commands.usage(parsed.spec),
            await this.partsFor(message.tickets),
          );
          return NOTHING;
        }
        override = parsed.spec.override;
        text = parsed.arg; // the payload is content: "/queue /new" queues the literal "/new"
      } else if (parsed?.kind === "command") return this.command(message, parsed, nativeKey);
    }
    if (this.o.admit && !this.o.admit(message)) return NOTHING;
    const routed = await this.route(message.address, nativeKey);
    if (!routed) return NOTHING;
    let key = routed.key;
    if (!routed.resumed) {
      // Rotation belongs to the conversation's own session, checked after the busy check.
      const { route } = this.o.surface.conversation(message.address);
      const rotation = this.generations.maybeRotate(route, { busy: this.sessions.isBusy(key) });
      if (rotation.rotated) {
        this.persistGeneration(message.address, rotation.generation);
        key = this.keyOf(message.address);
      }
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
    if (this.sink) return this.toSink(this.sink, key, message, text);
    return this.submit(key, message, text, { interpret, override, guards });
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
    const openHere = this.conversationKeys(address).some((k) =>
      this.approvals.registry.isOpen(k, p.requestId),
    );
    if (!openHere && this.forwarding) {
      const forwarded = await this.forwarding.approval(this.ownershipKey(address), {
        address: address as unknown as JsonValue,
        requestId: p.requestId,
        nonce: p.nonce ?? null,
        verdict: p.verdict,
        ...(p.label !== undefined ? { label: p.label } : {}),
      });
      if (forwarded) return forwarded;
    }
    return this.pressHere(address, p);
  }

  /** `press` judged on this gateway only (a forwarded press is never forwarded again). */
  private async pressHere(
    address: A,
    p: { requestId: string; nonce: string | null | undefined; verdict: ApprovalVerdict; label?: string },
  ): Promise<ApprovalOutcome> {
    const keys = this.conversationKeys(address);
    const key = keys.find((k) => this.approvals.registry.isOpen(k, p.requestId)) ?? keys[0] ?? "";
    // Taken before the press: the verdict can end the turn (and retire its renderer) at once.
    const renderer = this.promptRenderer(key, p.requestId);
    if (this.approvals.widget.press(key, p.requestId, p.nonce, p.verdict) === RECEIPT_EXPIRED)
      return { ok: false, text: RECEIPT_EXPIRED };
    const label = p.label ?? approvalOutcomeLabel(p.verdict);
    await renderer?.markApproval?.(p.requestId, label);
    return { ok: true, label };
  }

  /**
   * Whether a press with this nonce would land on an open prompt of this conversation, without
   * settling it: for a press that must do something first (arm a grant) only when it will count.
   */
  promptOpen(address: A, p: { requestId: string; nonce: string | null | undefined }): boolean {
    return this.conversationKeys(address).some((k) =>
      this.approvals.registry.matches(k, p.requestId, p.nonce),
    );
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
    if (!this.models.offers(p.handle) && this.forwarding) {
      const forwarded = await this.forwarding.model(this.ownershipKey(address), {
        address: address as unknown as JsonValue,
        ...p,
      });
      // Applied there: the list there is settled to the outcome by the gateway that posted it.
      if (forwarded) return "refusal" in forwarded ? forwarded : { applied: Promise.resolve() };
    }
    const scope = placeOf(this.o.surface.conversation(address));
    return this.models.press(p.handle, p.index, { presser: p.presser, scope }, pickers);
  }

  /** A model-list press another gateway forwarded: judged here, the switch tracked here. */
  private async pickModelForwarded(
    address: A,
    p: { handle: string; index: number; presser: string },
  ): Promise<ForwardedModelOutcome> {
    const pickers = this.o.surface.pickers?.(address);
    if (!pickers) return { refusal: PICK_REFUSAL_TEXT.unknown };
    const scope = placeOf(this.o.surface.conversation(address));
    const pick = await this.models.press(p.handle, p.index, { presser: p.presser, scope }, pickers);
    if ("refusal" in pick) return pick;
    void this.track(pick.applied);
    return { applied: true };
  }

  /** The key a conversation's ownership and journal rows go by across gateways. */
  private ownershipKey(address: A): string {
    return `${this.channel}:${this.o.surface.conversation(address).route}`;
  }

  /** Keep a promise in flight until it settles (shutdown waits for it); failures are logged. */
  track<T>(p: Promise<T>): Promise<T | undefined> {
    const guarded = p.catch((error: unknown) => {
      this.logger.error(`${this.channel}: handling failed`, { error: String(error) });
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
    this.untick?.();
    this.unserve?.();
    for (const id of [...this.sinkPrompts.keys()])
      this.approvals.registry.denyAll(id.slice(0, id.lastIndexOf(":")));
    for (const key of [...this.active.keys()]) {
      await stopRunningTurn(this.sessions, key, {
        router: this.router,
        approvals: this.approvals.registry,
        onError: (error) =>
          this.logger.warn(`${this.channel}: stop on shutdown failed`, { error: String(error) }),
      });
    }
    await Promise.allSettled([...this.inflight]);
  }

  // ── internals ─────────────────────────────────────────────────────────────────────────────

  private replyTo(message: IncomingMessage<A, P>, text: string, parts?: TurnParts): Promise<boolean> {
    return message.replyTo ? message.replyTo(text) : this.o.surface.reply(message.address, text, parts);
  }

  /**
   * The outbound parts of the work answering these tickets (unrecorded where nothing is journaled);
   * `suffix` names another piece of work for the same message (a notice beside its turn).
   */
  private partsFor(tickets: readonly IntakeTicket[] | undefined, suffix = ""): Promise<TurnParts> {
    return this.journal?.parts(tickets, suffix) ?? Promise.resolve(TurnParts.unrecorded());
  }

  /** Complete journaled messages (a no-op for none). */
  private finish(tickets: readonly IntakeTicket[], outcome: IntakeOutcome): Promise<void> {
    if (tickets.length === 0 || !this.journal) return Promise.resolve();
    return this.journal.finish(tickets, outcome);
  }

  /** Every key a prompt of this conversation may be open under: its own, then any attached one. */
  private conversationKeys(address: A): string[] {
    const own = this.keyOf(address);
    if (!this.o.binder) return [own];
    const attached = this.o.binder.boundKeys(this.o.surface.conversation(address).link);
    return [own, ...attached.filter((k) => k !== own)];
  }

  /** A message that is entirely 1/2/3 answers the open prompt (typed replies are the floor). */
  private async typedVerdict(message: IncomingMessage<A, P>, nativeKey: string): Promise<boolean> {
    if (parseTypedVerdict(message.text) === null || !this.approvals.registry.anyOpen) return false;
    const keys = this.o.binder ? this.conversationKeys(message.address) : [nativeKey];
    for (const key of keys) {
      if (!this.approvals.registry.hasOpen(key)) continue;
      const answer = this.approvals.typed.handleReply(key, message.text);
      if (answer === null || answer === RECEIPT_EXPIRED) continue;
      // The prompt on screen is closed too: a decided prompt must never look live.
      await this.markApproval(key, answer.requestId, answer.verdict);
      return true;
    }
    return false;
  }

  private async markApproval(
    key: string,
    requestId: string,
    outcome: Parameters<typeof approvalOutcomeLabel>[0],
  ): Promise<void> {
    try {
      await this.promptRenderer(key, requestId)?.markApproval?.(requestId, approvalOutcomeLabel(outcome));
    } catch (error) {
      this.logger.warn(`${this.channel}: marking the approval prompt failed`, { error: String(error) });
    }
  }

  /** Decide ONCE where a message runs; null when resume routing refused (its notice was sent). */
  private async route(address: A, nativeKey: string): Promise<Routed | null> {
    if (!this.o.binder) return { key: nativeKey, resumed: false };
    const { link } = this.o.surface.conversation(address);
    const decision = await this.o.binder.routeAndDeliver(link, nativeKey, (notice) =>
      this.o.surface.reply(address, notice),
    );
    if (decision.kind === "refuse") return null;
    // A resumed session's turn renders HERE, not at its web chat origin.
    if (decision.resumed) this.addresses.set(decision.sessionKey, address);
    return { key: decision.sessionKey, resumed: decision.resumed };
  }

  private async command(
    message: IncomingMessage<A, P>,
    parsed: Extract<ParsedCommand, { kind: "command" }>,
    nativeKey: string,
  ): Promise<Dispatched> {
    const name = parsed.spec.name;
    let key = nativeKey;
    if (!RECOVERY_COMMANDS.has(name)) {
      const routed = await this.route(message.address, nativeKey);
      if (!routed) return NOTHING;
      key = routed.key;
    }
    if (this.sink && !this.sink.commands.has(name)) {
      await this.replyTo(
        message,
        `${this.o.commands.spell(name)} is not available here: parley is running as a channel server, and the agent is your agent host's.`,
        await this.partsFor(message.tickets),
      );
      return NOTHING;
    }
    const handler = this.o.handlers?.[name] ?? SHARED_HANDLERS[name];
    const conversation = this.o.surface.conversation(message.address);
    const call: CommandCall<P> = {
      hub: this.services,
      spec: parsed.spec,
      arg: parsed.arg,
      userId: message.userId,
      owner: this.o.isOwner(message.userId),
      conversation,
      key,
      advance: () => this.advance(message.address),
      pickers: this.o.surface.pickers?.(message.address),
      notify: async (text) => void (await this.o.surface.reply(message.address, text)),
      retitle: async (title) => {
        await this.o.surface.retitle?.(message.address, title);
      },
      extra: message.extra,
      address: message.address as unknown as JsonValue,
    };
    // Off the intake path: a command may wait on the agent (/compact, /model), which must not hold
    // up the next message. Whatever queued while it held the session runs right after it.
    const tickets = message.tickets ?? [];
    const work = (async () => {
      let outcome: IntakeOutcome = "failed";
      await this.journal?.claim(tickets);
      try {
        const reply = handler ? await handler(call) : this.o.commands.usage(parsed.spec);
        // A compaction that ran re-arms the soft context notice: the next growth cycle is news again.
        // A refused or failed one (busy, unsupported, no session) compacted nothing: the latch holds.
        if (name === "compact" && reply.startsWith(COMPACTION_RECEIPT)) this.context.release(key);
        if (reply) await this.replyTo(message, reply, await this.partsFor(tickets));
        outcome = "answered";
      } finally {
        await this.finish(tickets, outcome);
        await this.router.drain(key);
      }
    })();
    return { turn: this.track(work).then(() => {}), took: true };
  }

  /** Hand a message to the router; resolves once it ran (started), steered or queued. */
  private async submit(
    key: string,
    message: IncomingMessage<A, P>,
    text: string,
    opts: { interpret: boolean; override: QueueMode | undefined; guards: TurnGuards },
  ): Promise<Dispatched> {
    let started: () => void = () => {};
    const running = new Promise<"ran">((resolve) => {
      started = () => resolve("ran");
    });
    const files = message.attachments ?? [];
    // The queue carries descriptors: files fetched now would be deleted before a queued turn ran.
    const tickets = message.tickets ?? [];
    const payload: HubPayload<P> = {
      started,
      tickets,
      attachments: files,
      ...(message.messageId !== undefined ? { messageId: message.messageId } : {}),
      ...(message.extra !== undefined ? { extra: message.extra } : {}),
      ...(Object.keys(opts.guards).length > 0 ? { guards: opts.guards } : {}),
    };
    const item: QueuedItem<HubPayload<P>> = {
      text,
      payload,
      ...(files.length > 0 ? { files: files.map((f) => f.name) } : {}),
    };
    // With files the router never steers (a steer carries text only): it runs now or queues.
    const turn = this.router.submit(key, item, {
      interpretCommands: opts.interpret,
      ...(opts.override ? { override: opts.override } : {}),
      hasAttachments: files.length > 0,
    });
    const outcome = await Promise.race([turn, running]);
    if (outcome === "steered") {
      // Folded into the running turn: answered when that turn ends (at once if it just did).
      const riding = this.turnTickets.get(key);
      if (riding) riding.push(...tickets);
      else await this.finish(tickets, "answered");
      this.active.get(key)?.noteSteer?.(text);
      // A reaction, not a reply: a steer costs no bubble. A muted conversation gets none either.
      if (message.messageId && this.o.surface.acknowledgeSteer && !this.muted(key))
        await this.o.surface
          .acknowledgeSteer(message.address, message.messageId)
          .catch((error: unknown) =>
            this.logger.debug(`${this.channel}: steer reaction failed`, { error: String(error) }),
          );
    }
    if (outcome === "refused") {
      // Never held (holdsMidTurn false) and the live turn could not take it: the sender resends.
      this.audit.log("mid_turn", "refused", { channel: this.channel, reason: "busy" });
      if (!this.muted(key))
        await this.replyTo(message, resendNotice(files.length > 0), await this.partsFor(tickets));
      await this.finish(tickets, "refused");
      return NOTHING;
    }
    return { turn: this.track(turn).then(() => {}), took: true };
  }

  private muted(key: string): boolean {
    return deliveryIsMuted(this.store, key, this.channel, this.logger);
  }

  /** The context thresholds after a turn that ended normally, its notices sent to the conversation. */
  private async afterTurn(result: TurnResult): Promise<void> {
    if (!result.ok) return;
    const key = result.sessionKey;
    const address = this.addresses.get(key);
    if (address === undefined) return;
    await this.context.afterTurn(key, result.contextUsagePct, {
      notify: (text) => this.o.surface.reply(address, text),
      muted: () => this.muted(key),
    });
  }

  /**
   * The receipt bubble of a session's conversation; silent while the conversation is muted. A
   * receipt is a courtesy: one that cannot be posted or edited (a network error) is logged, and
   * the queue it describes goes on (a throw here would strand the queue and hold its session).
   */
  private receipts(key: string): ReceiptSurface {
    const address = this.addresses.get(key);
    const surface = address === undefined ? undefined : this.o.surface.receipts?.(address);
    const failed = (error: unknown) =>
      this.logger.warn(`${this.channel}: a queue receipt did not land`, { error: String(error) });
    return {
      post: async (text) => {
        if (!surface || this.muted(key)) return "";
        return surface.post(text).catch((error: unknown) => {
          failed(error);
          return "";
        });
      },
      edit: async (id, text) => {
        if (surface && id && !this.muted(key)) await surface.edit(id, text).catch(failed);
      },
    };
  }

  /** The one upload policy: the agent's real working folder, under the restricted-session ceiling. */
  private outboundFiles(key: string): OutboundFilePolicy {
    return {
      root: async () => {
        const provider = (await this.sessions.existingProvider(key)) as { cwd?: unknown } | undefined;
        return typeof provider?.cwd === "string" ? provider.cwd : undefined;
      },
      allowed: () =>
        !uploadsRestricted(this.store, key, this.channel, {
          audit: this.audit,
          logger: this.logger,
          ...(this.privacy ? { privacy: this.privacy } : {}),
        }),
    };
  }

  private decider(key: string): ApprovalDecider {
    return { open: (request, signal) => this.approvals.widget.open({ ...request, sessionKey: key }, signal) };
  }

  /** One turn under the held session semaphore (the router drains after it). */
  private async runTurn(
    key: string,
    text: string,
    release: () => void,
    items: readonly QueuedItem<HubPayload<P>>[],
  ): Promise<void> {
    for (const item of items) item.payload?.started?.();
    const address = this.addresses.get(key);
    if (address === undefined) {
      release();
      throw new Error(`${this.channel}: a turn for a session with no known conversation`);
    }
    const conversation: Conversation = this.o.surface.conversation(address);
    const last = items[items.length - 1]?.payload;
    // The messages this turn answers; steered ones join while it runs.
    const tickets = items.flatMap((i) => [...(i.payload?.tickets ?? [])]);
    this.turnTickets.set(key, tickets);
    await this.journal?.claim(tickets);
    const parts = await this.partsFor(tickets);
    const renderer = this.o.surface.newRenderer(address, {
      sessionKey: key,
      files: this.outboundFiles(key),
      extras: items.map((i) => i.payload?.extra),
      parts,
      ...(last?.messageId !== undefined ? { messageId: last.messageId } : {}),
      denyPrompt: (requestId, nonce) => void this.approvals.widget.press(key, requestId, nonce, "deny"),
    });
    // Every combined message's files, in arrival order; fetched and deleted inside the pipeline.
    const refs = items.flatMap((i) => i.payload?.attachments ?? []);
    const extras = items.map((i) => i.payload?.extra);
    // A burst answered as one turn is held to the strictest of its senders' guards.
    const guards = items.flatMap((i) => (i.payload?.guards ? [i.payload.guards] : []));
    const notes = [...new Set(guards.flatMap((g) => (g.promptNote ? [g.promptNote] : [])))];
    const prompt = notes.length > 0 ? `${notes.join("\n\n")}\n\n${text}` : text;
    const attachments =
      refs.length > 0 && this.o.surface.attachments
        ? this.o.surface.attachments({ refs, extras }, address)
        : [];
    this.active.set(key, renderer);
    let result: TurnResult | undefined;
    try {
      result = await runTurnPipeline(this.pipeline, {
        sessionKey: key,
        channelType: this.channel,
        text: prompt,
        renderer,
        release,
        turnId: parts.turnId,
        userLines: items.map((i) => ({ text: i.text, attachments: i.files ?? [] })),
        recordAnswer: (r) => !this.cutShort(r),
        renderedAt: conversation.link,
        // A resumed session's origin is its web chat tab: re-binding it here would move that link.
        ...(channelNamespaceOf(key) === this.channel ? { origin: conversation.link } : {}),
        policy: {
          approvalMode: this.approvalMode,
          decider: this.decider(key),
          ...(guards.some((g) => g.denyAllTools) ? { denyAllTools: true } : {}),
          // Read per request: a revoke lands on the very next tool.
          autoApproveSession: () => this.grant.isActive(),
        },
        ...(attachments.length > 0
          ? {
              attachments,
              ...(this.o.surface.ingestLimits ? { ingestLimits: this.o.surface.ingestLimits } : {}),
              notify: async (line: string) => void (await this.o.surface.reply(address, line)),
            }
          : {}),
      });
      this.nameConversation(result, address);
    } finally {
      if (this.active.get(key) === renderer) this.active.delete(key);
      if (this.turnTickets.get(key) === tickets) this.turnTickets.delete(key);
      this.approvals.registry.denyAll(key);
      await this.settle(tickets, result);
    }
  }

  // ── channel-server mode ───────────────────────────────────────────────────────────────────

  /** The renderer showing a prompt: a host's prompt by its id, else the session's running turn. */
  private promptRenderer(key: string, requestId: string): Renderer | undefined {
    return this.sinkPrompts.get(`${key}:${requestId}`)?.renderer ?? this.active.get(key);
  }

  /**
   * An authorized message to the agent host. Its tickets are completed once the sink holds it
   * durably; when it cannot, they stay unfinished and a restart offers the message again.
   */
  private async toSink(
    sink: TurnSink,
    key: string,
    message: IncomingMessage<A, P>,
    text: string,
  ): Promise<Dispatched> {
    const taken: Parameters<TurnSink["take"]>[0] = {
      channel: this.channel,
      conversation: this.o.surface.conversation(message.address),
      address: message.address as unknown as JsonValue,
      sessionKey: key,
      userId: message.userId,
      text,
      attachments: message.attachments ?? [],
      atMs: this.clock.now(),
      ...(message.messageId !== undefined ? { messageId: message.messageId } : {}),
    };
    const tickets = message.tickets ?? [];
    await this.journal?.claim(tickets);
    let pushed: Promise<boolean>;
    try {
      if (await sink.intercept?.(taken)) pushed = Promise.resolve(true);
      else pushed = (await sink.take(taken)).pushed;
    } catch (error) {
      this.logger.error(`${this.channel}: the agent host could not take a message`, { error: String(error) });
      return { turn: Promise.resolve(), took: true };
    }
    const settled = pushed.then(
      async (ok) => {
        if (ok) await this.finish(tickets, "answered");
      },
      (error: unknown) =>
        this.logger.error(`${this.channel}: pushing a message to the agent host failed`, {
          error: String(error),
        }),
    );
    return { turn: this.track(settled), took: true };
  }

  /** One conversation as the sink reaches back into it. */
  private sinkConversation(address: A): SinkConversation {
    const conversation = this.o.surface.conversation(address);
    const key = this.keyOf(address);
    const fresh = (parts: TurnParts, files = this.outboundFiles(key)): Renderer => {
      const renderer = this.o.surface.newRenderer(address, { sessionKey: key, files, extras: [], parts });
      // A relay: the host's words, not a turn of ours (no status line, no "no answer" notice).
      renderer.quiet = true;
      return renderer;
    };
    return {
      conversation,
      sessionKey: key,
      capabilities: fresh(TurnParts.unrecorded()).capabilities,
      render: async (text, opts) => {
        const parts = this.o.ctx.durable
          ? await TurnParts.open(this.o.ctx.durable.state.deliveries, opts.turnId, {
              channel: this.channel,
              logger: this.logger,
              audit: this.audit,
            })
          : TurnParts.unrecorded(opts.turnId);
        const renderer = fresh(parts, opts.files);
        try {
          await renderer.dispatch({ kind: TEXT_CHUNK, text });
          await renderer.dispatch({ kind: DONE, stopReason: "end_turn" });
        } finally {
          await renderer.close();
        }
        return !renderer.deliveryFailed;
      },
      ask: (request, signal) => this.sinkAsk(address, key, request, signal, fresh),
      answer: async (requestId, verdict) => {
        const open = this.sinkPrompts.get(`${key}:${requestId}`);
        if (!open) return false;
        const pressed = await this.press(address, { requestId, nonce: open.nonce, verdict });
        return pressed.ok;
      },
      react: async (messageId, emoji) => (await this.o.surface.react?.(address, messageId, emoji)) ?? false,
    };
  }

  /** A host's approval prompt in a conversation: the same widget, nonce, typed floor and timeout as a turn's. */
  private async sinkAsk(
    address: A,
    key: string,
    request: SinkApproval,
    signal: AbortSignal,
    fresh: (parts: TurnParts) => Renderer,
  ): Promise<ApprovalVerdict> {
    this.addresses.set(key, address);
    const renderer = fresh(TurnParts.unrecorded());
    const ticket = this.approvals.widget.open(
      { sessionKey: key, toolCallId: request.requestId, toolKind: "other", ...request },
      signal,
    );
    const id = `${key}:${request.requestId}`;
    this.sinkPrompts.set(id, { renderer, nonce: ticket.nonce });
    try {
      await renderer.dispatch({ kind: PROMPT_CHOICE, ...request, nonce: ticket.nonce });
      const verdict = await ticket.verdict;
      // Withdrawn by the host (or a shutdown) before anyone answered: the prompt must not look live.
      if (signal.aborted)
        await renderer.markApproval?.(
          request.requestId,
          approvalOutcomeLabel(signal.reason === "timeout" ? "timeout" : "abandoned"),
        );
      return verdict;
    } finally {
      this.sinkPrompts.delete(id);
      await renderer.close();
    }
  }

  /** After a good exchange, one background naming turn per conversation (a person's title wins). */
  private nameConversation(result: TurnResult, address: A): void {
    const generate = this.o.ctx.titles;
    if (!generate) return;
    const retitle = this.o.surface.retitle?.bind(this.o.surface);
    autoTitleStep({
      generate,
      store: this.store,
      audit: this.audit,
      logger: this.logger,
      source: this.channel,
      timers: this.clock,
      // A restricted conversation persists nothing, a title included.
      isRestricted: (key) => this.privacy?.isRestricted(key) ?? restrictedByFlags(this.store, key),
      ...(retitle ? { setChannelTitle: (title: string) => retitle(address, title) } : {}),
    }).run(result);
  }

  /** A turn that ended because this process is shutting down: its messages run after the restart. */
  private cutShort(result: TurnResult | undefined): boolean {
    return this.closing && (result?.stopReason === "cancelled" || !result?.ok);
  }

  /** The turn's messages are done with it, unless a shutdown cut it short. */
  private async settle(tickets: readonly IntakeTicket[], result: TurnResult | undefined): Promise<void> {
    if (this.cutShort(result)) return;
    const cancelled = result?.stopReason === "cancelled";
    await this.finish(tickets, result?.ok ? "answered" : cancelled ? "refused" : "failed");
  }
}

/** The durable privacy flags, for a channel without the privacy commands. */
function restrictedByFlags(store: SessionStore, key: string): boolean {
  return store.flag(key, "temporary") || store.flag(key, "incognito");
}
