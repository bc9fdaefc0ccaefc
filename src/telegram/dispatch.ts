/**
 * Telegram's dispatcher: its addresses (DM or forum Topic) and its widgets only. Per update:
 * the transport's audited gate, then commands from the one COMMAND_SPEC, the typed approval floor,
 * the activation gate for Topics, and everything else through the shared MidTurnRouter (run now,
 * steer into the live turn, or hold behind one receipt) into driveTurn with this channel's renderer.
 * A message with files is content only (no command, no typed answer, never steered): its RAW
 * descriptors ride the queue and the turn that answers it downloads them through the shared ingest;
 * an album's items are collected (albums.ts) and answered as one message.
 *
 * Intake is sequential and turns are not: handleUpdate answers `accepted` once the message is routed
 * (so the poller keeps per-chat order) and `settled` once the update is terminal (the cursor's
 * low-water mark advances past it only then).
 */
import type { GrantControl } from "../gateway/channel.js";
import type { ApprovalDecider, ApprovalRequest, ApprovalTicket } from "../messaging/approval/approvals.js";
import {
  ChannelApprovals,
  type PendingApprovals,
  parseTypedVerdict,
  RECEIPT_EXPIRED,
  type TextReplyApprovalDecider,
  type WidgetApprovalDecider,
} from "../messaging/approval/approvals.js";
import { SessionTrust } from "../messaging/approval/session-trust.js";
import type { Clock } from "../messaging/base/clock.js";
import { realClock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { Release } from "../messaging/base/mutex.js";
import type { InboundAttachment, InboundMessage } from "../messaging/channel/transport.js";
import type { QueueMode } from "../messaging/queue/mid-turn-router.js";
import { MidTurnRouter } from "../messaging/queue/mid-turn-router.js";
import type { QueuedItem } from "../messaging/queue/receipt.js";
import { stopRunningTurn } from "../messaging/queue/stop.js";
import type { AuditSink } from "../messaging/security/audit.js";
import { ConversationState } from "../messaging/session/generations.js";
import { PrivacyModes } from "../messaging/session/privacy-mode.js";
import type { SessionManager } from "../messaging/session/session-manager.js";
import type { SessionStore } from "../messaging/session/session-store.js";
import { MemorySessionStore } from "../messaging/session/session-store.js";
import { uploadsRestricted } from "../messaging/session/upload-gate.js";
import { splitMarkdownSafe } from "../messaging/text/split.js";
import type { ApprovalMode } from "../messaging/turn/driver.js";
import type { PipelineDeps, PipelineProvider } from "../messaging/turn/pipeline.js";
import { driveTurn } from "../messaging/turn/pipeline.js";
import { AlbumCollector } from "./albums.js";
import { distinctNames, TELEGRAM_INGEST_LIMITS } from "./attachments.js";
import { optionLabel, parseApprovalData, parseModelData } from "./buttons.js";
import type { Handled } from "./command-handlers.js";
import { NOTHING, runCommand } from "./command-handlers.js";
import { isBareMidTurnOverride, parseCommand, usageOf } from "./commands.js";
import { activationOutcome } from "./gate.js";
import { fitTelegramHtml } from "./html.js";
import { STEER_RECEIPT_EMOJI, TELEGRAM_SOURCE_CAP } from "./limits.js";
import { TelegramModelPicker } from "./model-picker.js";
import type { TelegramRendererOptions } from "./renderer.js";
import { TelegramRenderer } from "./renderer.js";
import type { Route } from "./routes.js";
import { locationOf, routeOf, sessionKeyFor } from "./routes.js";
import type { ForumActivation, TelegramDmScope } from "./settings.js";
import type { TelegramTransport } from "./transport.js";
import { threadOf } from "./transport.js";
import type { TgCallbackQuery, TgMessage, TgUpdate } from "./wire.js";

export interface TelegramDispatcherOptions {
  transport: TelegramTransport;
  sessions: SessionManager<PipelineProvider>;
  pipeline: Omit<PipelineDeps, "sessions">;
  audit: AuditSink;
  logger: Logger;
  approvalMode: ApprovalMode;
  queueMode: QueueMode;
  forumActivation: ForumActivation;
  dmScope: TelegramDmScope;
  /** How many user ids are allow-listed: host-wide listings need exactly one (an unambiguous owner). */
  ownerCount: number;
  grant?: GrantControl;
  /** The session store (links, flags, titles, generations); in-memory when the gateway has none. */
  store?: SessionStore;
  clock?: Clock;
  approvalTimeoutMs?: number;
  agentName?: string;
  renderer?: Partial<Omit<TelegramRendererOptions, "chatId" | "threadId">>;
  /** Album collection timing (tests); the defaults are albums.ts's. */
  albums?: { settleMs?: number; maxWaitMs?: number };
}

export interface UpdateHandling {
  accepted: Promise<void>;
  settled: Promise<void>;
}

/** Per-message payload riding the router's queue. */
interface Carried {
  onStart?: () => void;
  /** RAW descriptors (file_ids, never bytes or temp paths): the turn that answers fetches them. */
  attachments?: InboundAttachment[];
}

/** One message as the conversation path needs it (an album's items arrive merged into one). */
interface Incoming {
  message: InboundMessage;
  raw: TgMessage | undefined;
}

const DONE: UpdateHandling = { accepted: Promise.resolve(), settled: Promise.resolve() };

export class TelegramDispatcher {
  readonly store: SessionStore;
  readonly router: MidTurnRouter;
  readonly privacy: PrivacyModes;
  readonly trust: SessionTrust;
  readonly registry: PendingApprovals;
  readonly conversations: ConversationState;
  /** /model's posted lists (TTL on the injected clock). */
  readonly models: TelegramModelPicker;
  private readonly widget: WidgetApprovalDecider;
  private readonly typed: TextReplyApprovalDecider;
  private readonly active = new Map<string, TelegramRenderer>();
  private readonly keyRoutes = new Map<string, Route>();
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly clock: Clock;
  /** Album items waiting to be answered as one message. */
  readonly albums: AlbumCollector<Incoming>;

  constructor(readonly o: TelegramDispatcherOptions) {
    this.clock = o.clock ?? realClock;
    this.albums = new AlbumCollector<Incoming>({
      timers: this.clock,
      logger: o.logger,
      flush: (items) => this.converse(mergeAlbum(items)),
      ...o.albums,
    });
    this.store = o.store ?? new MemorySessionStore({ logger: o.logger });
    this.privacy = new PrivacyModes({ audit: o.audit, store: this.store, logger: o.logger });
    this.trust = new SessionTrust(o.audit);
    const approvals = new ChannelApprovals({
      channel: "telegram",
      timers: this.clock,
      audit: o.audit,
      ...(o.approvalTimeoutMs ? { timeoutMs: o.approvalTimeoutMs } : {}),
      logger: o.logger,
      onTimeout: (request, notice) =>
        this.active.get(request.sessionKey)?.markApproval(request.requestId, notice),
      // The Trust button arms the SHARED per-session grant (both halves), never a channel-local one.
      armSessionGrant: (key: string) =>
        this.trust.addTrustedSession(key, { sessions: this.store, source: "telegram" }),
    });
    ({ registry: this.registry, widget: this.widget, typed: this.typed } = approvals);
    this.conversations = new ConversationState({
      clock: this.clock,
      seed: (route) => this.store.generationOf(this.bucketKey(route)),
    });
    this.models = new TelegramModelPicker({
      transport: o.transport,
      sessions: o.sessions,
      logger: o.logger,
      reply: (r, text) => this.reply(r, text),
      now: () => this.clock.now(),
      afterSwitch: (key) => this.router.drain(key),
    });
    this.router = new MidTurnRouter({
      sessions: o.sessions,
      queueMode: o.queueMode,
      surfaceFor: (key) => this.receiptSurface(key),
      runTurn: (key, text, release, opts) => this.runTurn(key, text, release, opts.items),
    });
  }

  // ── addresses ─────────────────────────────────────────────────────────────────────────────

  private keyOpts(gen: number) {
    return {
      agent: this.o.agentName ?? "default",
      gen,
      dmScope: this.o.dmScope,
      // Only a sender known to BE the operator may share the unified bucket: one allow-listed id.
      operator: this.o.ownerCount === 1,
    };
  }

  /** The generation-0 key a route's generation is persisted on (a Topic route always holds a ':'). */
  private bucketKey(route: string): string {
    const chatType = route.includes(":") ? "forum" : "direct";
    return sessionKeyFor({ route, chatType, chatId: "", threadId: undefined }, this.keyOpts(0));
  }

  /** The current session key of a route (its generation included); remembers where the key lives. */
  keyOf(r: Route): string {
    const key = sessionKeyFor(r, this.keyOpts(this.conversations.generation(r.route)));
    this.keyRoutes.set(key, r);
    return key;
  }

  /** /new: a fresh generation on the same route, persisted so a restart cannot resurrect the old one. */
  advance(r: Route): string {
    const gen = this.conversations.advance(r.route);
    try {
      this.store.setGeneration(this.bucketKey(r.route), gen);
    } catch (error) {
      this.o.logger.warn("telegram: persisting the generation failed", { error: String(error) });
    }
    return this.keyOf(r);
  }

  /** Send markdown text into a route (split and bound like every body). */
  async reply(r: Route, text: string): Promise<void> {
    for (const source of splitMarkdownSafe(text, TELEGRAM_SOURCE_CAP)) {
      for (const html of fitTelegramHtml(source)) {
        try {
          await this.o.transport.postHtml(r.chatId, html, { threadId: r.threadId });
        } catch (error) {
          this.o.logger.warn("telegram: reply failed", { error: String(error) });
          return;
        }
      }
    }
  }

  private receiptSurface(key: string) {
    return {
      post: async (text: string) => {
        const r = this.keyRoutes.get(key);
        if (!r) throw new Error("telegram: receipt for an unknown session");
        return String(
          await this.o.transport.postHtml(r.chatId, fitTelegramHtml(text)[0] ?? "", { threadId: r.threadId }),
        );
      },
      // Edited, never deleted: the receipt is the record that a held message was accepted.
      edit: async (id: string, text: string) => {
        const r = this.keyRoutes.get(key);
        if (r) await this.o.transport.editHtml(r.chatId, Number(id), fitTelegramHtml(text)[0] ?? "");
      },
    };
  }

  // ── intake ────────────────────────────────────────────────────────────────────────────────

  handleUpdate(update: TgUpdate): UpdateHandling {
    if (update.callback_query) {
      const done = this.track(this.onCallback(update.callback_query));
      return { accepted: done, settled: done };
    }
    if (!update.message) return DONE;
    let finish: () => void = () => {};
    const turnDone = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const accepted = this.track(
      (async () => {
        const outcome = await this.o.transport.receive(update);
        if (outcome.status !== "dispatched") return finish();
        const { turn } = await this.onMessage(outcome.message);
        turn.then(finish, (error: unknown) => {
          this.o.logger.error("telegram: turn failed", { error: String(error) });
          finish();
        });
      })().catch((error: unknown) => {
        finish();
        throw error;
      }),
    );
    return { accepted, settled: accepted.then(() => turnDone) };
  }

  private track<T>(p: Promise<T>): Promise<T> {
    const guarded = p.catch((error: unknown) => {
      this.o.logger.error("telegram: handling an update failed", { error: String(error) });
    });
    this.inflight.add(guarded);
    void guarded.finally(() => this.inflight.delete(guarded));
    return guarded as Promise<T>;
  }

  /**
   * Routes one authorized message; resolves once routed, with the turn's end wrapped in an object
   * (an async function returning a bare promise would wait for it, and intake would stall).
   */
  private async onMessage(message: InboundMessage): Promise<Handled> {
    const t = this.o.transport;
    const raw = t.rawOf(message);
    const r = routeOf(message.userId, message.conversationId, message.threadId);
    const album = raw?.media_group_id;
    if (album !== undefined && message.attachments.length > 0)
      return this.albums.add(r.route, album, { message, raw });
    // Anything else from this conversation comes after the album sent before it.
    await this.albums.flush(r.route);
    // A file's caption is content for the agent, never a command or a typed approval answer.
    if (message.attachments.length > 0) return this.converse({ message, raw });
    const key = this.keyOf(r);
    let text = message.text;
    let override: QueueMode | undefined;
    const parsed = parseCommand(text, t.identity?.username ?? null);
    if (parsed?.kind === "foreign") return NOTHING;

    // A message that is entirely 1/2/3 answers the open prompt (typed replies are the floor).
    if (parseTypedVerdict(text) !== null && this.registry.hasOpen(key)) {
      const answer = this.typed.handleReply(key, text);
      if (answer) await this.reply(r, answer);
      return NOTHING;
    }
    if (parsed?.kind === "command") {
      if (isBareMidTurnOverride(parsed)) {
        await this.reply(r, usageOf(parsed.spec));
        return NOTHING;
      }
      if (parsed.spec.override) {
        override = parsed.spec.override;
        text = parsed.arg; // the payload is content: "/queue /new" queues the literal "/new"
      } else {
        return runCommand(this, {
          route: r,
          key,
          userId: message.userId,
          spec: parsed.spec,
          arg: parsed.arg,
        });
      }
    }
    return this.converse({ message, raw }, { text, override });
  }

  /**
   * A message for the agent (commands are behind it): the activation gate for Topics, rotation,
   * privacy modifiers, then the router. Files make it content only: never steered, never a command.
   */
  private async converse(
    { message, raw }: Incoming,
    opts: { text?: string; override?: QueueMode | undefined } = {},
  ): Promise<Handled> {
    const r = routeOf(message.userId, message.conversationId, message.threadId);
    const override = opts.override;
    const activation = activationOutcome(raw?.chat.type ?? "", this.o.forumActivation, message.isMention);
    if (activation !== "activated") {
      this.o.audit.log("telegram.activation", "denied", { chat: r.chatId, reason: activation });
      return NOTHING;
    }
    let key = this.keyOf(r);
    const busy = this.o.sessions.isBusy(key);
    if (this.conversations.maybeRotate(r.route, { busy }).rotated) key = this.keyOf(r);
    // Privacy modifiers only ever restrict, so one in a caption is honoured too.
    const privacy = await this.privacy.stripAndApply(opts.text ?? message.text, key, {
      source: "telegram",
      caller: message.userId,
      notify: (notice) => this.reply(r, notice),
    });
    const files = message.attachments;
    if (privacy.onlyModifier && files.length === 0) return NOTHING;
    return this.submit(key, privacy.text, {
      interpretCommands: files.length === 0,
      override,
      messageId: raw?.message_id,
      attachments: files,
    });
  }

  /** Hand a message to the router; resolves once it ran, steered or queued. */
  async submit(
    key: string,
    text: string,
    opts: {
      interpretCommands: boolean;
      override?: QueueMode | undefined;
      messageId?: number | undefined;
      attachments?: InboundAttachment[];
    },
  ): Promise<Handled> {
    let started: () => void = () => {};
    const running = new Promise<"ran">((resolve) => {
      started = () => resolve("ran");
    });
    const files = opts.attachments ?? [];
    // The queue carries the RAW descriptors: files fetched now would be deleted before a queued turn ran.
    const carried: Carried = { onStart: started, ...(files.length > 0 ? { attachments: files } : {}) };
    const item: QueuedItem = {
      text,
      payload: carried,
      ...(files.length > 0 ? { files: files.map((f) => f.name) } : {}),
    };
    // With files the router never steers (a steer carries text only): it runs or queues.
    const turn = this.router.submit(key, item, {
      interpretCommands: opts.interpretCommands,
      ...(opts.override ? { override: opts.override } : {}),
      hasAttachments: files.length > 0,
    });
    const outcome = await Promise.race([turn, running]);
    if (outcome === "steered") {
      this.active.get(key)?.noteSteer(text);
      const r = this.keyRoutes.get(key);
      // A reaction, not a reply: a mid-turn steer costs no extra bubble.
      if (r && opts.messageId !== undefined)
        await this.o.transport.react(r.chatId, opts.messageId, STEER_RECEIPT_EMOJI);
    }
    return { turn };
  }

  // ── turns ─────────────────────────────────────────────────────────────────────────────────

  private decider(key: string): ApprovalDecider {
    return {
      open: (request: ApprovalRequest, signal: AbortSignal): ApprovalTicket =>
        this.widget.open({ ...request, sessionKey: key }, signal),
    };
  }

  /** One turn under the held session semaphore (the router drains after it). */
  async runTurn(key: string, text: string, release: Release, items: readonly QueuedItem[]): Promise<void> {
    for (const item of items) (item.payload as Carried | undefined)?.onStart?.();
    const r = this.keyRoutes.get(key);
    if (!r) {
      release();
      throw new Error("telegram: a turn for a session with no known route");
    }
    const renderer = new TelegramRenderer(this.o.transport, {
      chatId: r.chatId,
      threadId: r.threadId,
      timers: this.clock,
      now: () => this.clock.now(),
      logger: this.o.logger,
      uploads: {
        root: async () =>
          ((await this.o.sessions.existingProvider(key)) as { cwd?: unknown } | undefined)?.cwd as
            | string
            | undefined,
        allowed: () =>
          !uploadsRestricted(this.store, key, "telegram", {
            audit: this.o.audit,
            privacy: this.privacy,
            logger: this.o.logger,
          }),
      },
      ...this.o.renderer,
    });
    // Every combined item's files, in arrival order; fetched and deleted inside driveTurn's frame.
    const files = distinctNames(items.flatMap((i) => (i.payload as Carried | undefined)?.attachments ?? []));
    this.active.set(key, renderer);
    try {
      await driveTurn(
        {
          ...this.o.pipeline,
          ...(this.o.pipeline.store ? {} : { store: this.store }),
          sessions: this.o.sessions,
          clock: this.clock,
        },
        {
          sessionKey: key,
          channelType: "telegram",
          text,
          renderer,
          release,
          origin: locationOf(r),
          policy: {
            approvalMode: this.o.approvalMode,
            decider: this.decider(key),
            // Read per request: the global grant, or this conversation's Trust press.
            autoApproveSession: () => (this.o.grant?.isActive() ?? false) || this.trust.isSessionTrusted(key),
          },
          ...(files.length > 0
            ? {
                attachments: files.map((f) => this.o.transport.attachmentSource(f)),
                ingestLimits: TELEGRAM_INGEST_LIMITS,
                // Refusal lines go where the answer goes: this chat, this Topic.
                notify: (line: string) => this.reply(r, line),
              }
            : {}),
        },
      );
    } finally {
      if (this.active.get(key) === renderer) this.active.delete(key);
      this.registry.denyAll(key);
    }
  }

  // ── button presses ────────────────────────────────────────────────────────────────────────

  private async onCallback(q: TgCallbackQuery): Promise<void> {
    const t = this.o.transport;
    // An unauthorized presser gets no answer at all (audited by the transport).
    if (!t.authorizeCallback(q) || !q.message) return;
    const m = q.message;
    const r = routeOf(String(q.from.id), String(m.chat.id), threadOf(m));
    const key = this.keyOf(r);
    const data = q.data ?? "";
    if (data.startsWith("a:")) {
      const press = parseApprovalData(data);
      // Taken before the press: the verdict can end the turn (and retire its renderer) at once.
      const renderer = this.active.get(key);
      const reply = press
        ? this.widget.press(key, press.requestId, press.nonce, press.verdict)
        : RECEIPT_EXPIRED;
      if (!press) this.o.audit.log("tool_permission", "refused", { session: key, reason: "malformed_press" });
      if (reply === RECEIPT_EXPIRED || !press) {
        await t.answerCallback(q.id, RECEIPT_EXPIRED);
        // A stale button should not keep inviting presses.
        await t
          .clearKeyboard(r.chatId, m.message_id)
          .catch((error: unknown) =>
            this.o.logger.debug("telegram: clearing a stale keyboard failed", { error: String(error) }),
          );
        return;
      }
      const outcome =
        press.verdict === "deny"
          ? "❌ Denied"
          : press.verdict === "approve"
            ? "✅ Approved"
            : "🤝 Approved and trusted";
      // Queued on the renderer now, ahead of the output the verdict releases.
      const marked = renderer?.markApproval(press.requestId, outcome);
      await t.answerCallback(q.id, outcome);
      await marked;
      return;
    }
    const modelIndex = parseModelData(data);
    if (modelIndex !== null) {
      const { applied } = await this.models.press({
        queryId: q.id,
        route: r,
        messageId: m.message_id,
        index: modelIndex,
        presser: String(q.from.id),
      });
      // Off the intake path: switching may wait on the agent (or start one).
      this.track(applied);
      return;
    }
    const label = optionLabel(data, m.reply_markup);
    await t.answerCallback(q.id, label ?? undefined);
    if (label === null) return;
    await t
      .clearKeyboard(r.chatId, m.message_id)
      .catch((error: unknown) =>
        this.o.logger.debug("telegram: clearing an options keyboard failed", { error: String(error) }),
      );
    // A label is model-authored: it is sent as text with command interpretation OFF.
    await this.reply(r, `› ${label}`);
    const { turn } = await this.submit(key, label, { interpretCommands: false });
    this.track(turn);
  }

  // ── lifecycle ─────────────────────────────────────────────────────────────────────────────

  /** Shutdown: deny open prompts, stop live turns, and wait for in-flight work to settle. */
  async shutdown(): Promise<void> {
    // A held album's updates settle only with its turn (the drain would wait on them forever): it is
    // routed now, like any message that arrived before the stop, and stopped with the rest below.
    await this.albums.flushAll();
    for (const key of [...this.active.keys()]) {
      await stopRunningTurn(this.o.sessions, key, {
        router: this.router,
        approvals: this.registry,
        onError: (error) => this.o.logger.warn("telegram: stop on shutdown failed", { error: String(error) }),
      });
    }
    await Promise.allSettled([...this.inflight]);
  }
}

/** An album's items as one message: the captions in order, every file, a mention if any had one. */
function mergeAlbum(items: readonly Incoming[]): Incoming {
  const sorted = [...items].sort((a, b) => (a.raw?.message_id ?? 0) - (b.raw?.message_id ?? 0));
  const [first] = sorted as [Incoming, ...Incoming[]];
  const message: InboundMessage = {
    ...first.message,
    text: sorted
      .map((i) => i.message.text)
      .filter((t) => t.trim() !== "")
      .join("\n\n"),
    attachments: sorted.flatMap((i) => i.message.attachments),
    isMention: sorted.some((i) => i.message.isMention),
  };
  return { message, raw: first.raw };
}
