/**
 * The turn side of the hub (hub.ts): a routed message handed to the mid-turn router (run now, steer
 * into the live turn, or hold behind one receipt), then one turn under the held session semaphore
 * with the channel's renderer, and after it the context thresholds, the conversation's auto-title
 * and the end of the journaled messages it answered. It owns the router, the renderers of running
 * turns and the tickets each running turn answers; the hub owns everything before the router (the
 * typed floor, commands, where a message runs, privacy) and is asked only whether it is closing.
 */
import type { ApprovalDecider, ChannelApprovals } from "../approval/approvals.js";
import type { QueueMode } from "../queue/mid-turn-router.js";
import { MidTurnRouter } from "../queue/mid-turn-router.js";
import type { QueuedItem, ReceiptSurface } from "../queue/receipt.js";
import { stopRunningTurn } from "../queue/stop.js";
import { autoTitleStep } from "../session/auto-title.js";
import type { ContextWatch } from "../session/context-thresholds.js";
import { channelNamespaceOf } from "../session/keys.js";
import type { PrivacyModes } from "../session/privacy-mode.js";
import type { SessionStore } from "../session/session-store.js";
import { uploadsRestricted } from "../session/upload-gate.js";
import type { TranscriptAppend } from "../store/port.js";
import type { ApprovalMode } from "../turn/driver.js";
import type { TurnPipelineDeps, TurnResult } from "../turn/pipeline.js";
import { deliveryIsMuted, runTurnPipeline } from "../turn/pipeline.js";
import type { Renderer } from "../turn/renderer.js";
import type { ChannelContext } from "./contract.js";
import type { ConversationKeys } from "./conversation-keys.js";
import type { IntakeTicket, TicketWork } from "./journal.js";
import { resendNotice } from "./render-kit.js";
import type {
  ChannelSurface,
  Conversation,
  Dispatched,
  HubPayload,
  IncomingMessage,
  OutboundFilePolicy,
  TurnGuards,
} from "./surface.js";
import { NOTHING, replyTo } from "./surface.js";

/** What of the channel context the turns use. */
export type TurnContext = Pick<
  ChannelContext,
  "name" | "sessions" | "store" | "pipeline" | "audit" | "logger" | "clock" | "grant" | "defaults" | "titles"
>;

export interface TurnRunnerOptions<A, P> {
  surface: ChannelSurface<A, P>;
  ctx: TurnContext;
  keys: ConversationKeys<A>;
  tickets: TicketWork;
  approvals: ChannelApprovals;
  privacy: PrivacyModes | undefined;
  context: ContextWatch;
  /** The channel's own mid-turn mode; the gateway-wide one otherwise. */
  queueMode: QueueMode | undefined;
  /** False: never hold a message behind a running turn (HubOptions.holdsMidTurn). */
  holdsMidTurn: boolean | undefined;
  /** The hub's in-flight work (a shutdown waits for it). */
  track<T>(p: Promise<T>): Promise<T | undefined>;
  /** Shutting down: work cut short now stays unfinished in the journal, to run after the restart. */
  closing(): boolean;
}

export class TurnRunner<A, P> {
  readonly router: MidTurnRouter<HubPayload<P>>;
  private readonly channel: string;
  private readonly pipeline: TurnPipelineDeps;
  private readonly approvalMode: ApprovalMode;
  private readonly active = new Map<string, Renderer>();
  /** Per session: the journaled messages its running turn answers (steered ones ride along). */
  private readonly turnTickets = new Map<string, IntakeTicket[]>();

  constructor(private readonly o: TurnRunnerOptions<A, P>) {
    const c = o.ctx;
    this.channel = c.name;
    this.approvalMode = c.defaults.approvalMode;
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
    this.router = new MidTurnRouter<HubPayload<P>>({
      sessions: c.sessions,
      // Never holding, "queue" would refuse every message mid-turn: steering is all there is.
      queueMode: o.holdsMidTurn === false ? "steer" : (o.queueMode ?? c.defaults.queueMode),
      surfaceFor: (key) => this.receipts(key),
      runTurn: (key, text, release, opts) => this.runTurn(key, text, release, opts.items),
      ...(o.holdsMidTurn === false ? { holds: false } : {}),
      // Dropped by /stop: they will never run. Dropped by a shutdown: they run after the restart.
      onDropped: (_key, items) => {
        if (!o.closing())
          void o.tickets.finish(
            items.flatMap((i) => i.payload?.tickets ?? []),
            "refused",
          );
      },
    });
  }

  /** The renderer of a session's running turn. */
  activeRenderer(key: string): Renderer | undefined {
    return this.active.get(key);
  }

  /** Hand a message to the router; resolves once it ran (started), steered or queued. */
  async submit(
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
      else await this.o.tickets.finish(tickets, "answered");
      this.active.get(key)?.noteSteer?.(text);
      // A reaction, not a reply: a steer costs no bubble. A muted conversation gets none either.
      if (message.messageId && this.o.surface.acknowledgeSteer && !this.muted(key))
        await this.o.surface
          .acknowledgeSteer(message.address, message.messageId)
          .catch((error: unknown) =>
            this.o.ctx.logger.debug(`${this.channel}: steer reaction failed`, { error: String(error) }),
          );
    }
    if (outcome === "refused") {
      // Never held (holdsMidTurn false) and the live turn could not take it: the sender resends.
      this.o.ctx.audit.log("mid_turn", "refused", { channel: this.channel, reason: "busy" });
      if (!this.muted(key))
        await replyTo(
          this.o.surface,
          message,
          resendNotice(files.length > 0),
          await this.o.tickets.parts(tickets),
        );
      await this.o.tickets.finish(tickets, "refused");
      return NOTHING;
    }
    return { turn: this.o.track(turn).then(() => {}), took: true };
  }

  /** Shutdown: stop every running turn (what it cut short stays unfinished in the journal). */
  async stopAll(): Promise<void> {
    const c = this.o.ctx;
    for (const key of [...this.active.keys()]) {
      await stopRunningTurn(c.sessions, key, {
        router: this.router,
        approvals: this.o.approvals.registry,
        onError: (error) =>
          c.logger.warn(`${this.channel}: stop on shutdown failed`, { error: String(error) }),
      });
    }
  }

  /** The one upload policy: the agent's real working folder, under the restricted-session ceiling. */
  outboundFiles(key: string): OutboundFilePolicy {
    const c = this.o.ctx;
    return {
      root: async () => {
        const provider = (await c.sessions.existingProvider(key)) as { cwd?: unknown } | undefined;
        return typeof provider?.cwd === "string" ? provider.cwd : undefined;
      },
      allowed: () =>
        !uploadsRestricted(c.store, key, this.channel, {
          audit: c.audit,
          logger: c.logger,
          ...(this.o.privacy ? { privacy: this.o.privacy } : {}),
        }),
    };
  }

  private muted(key: string): boolean {
    return deliveryIsMuted(this.o.ctx.store, key, this.channel, this.o.ctx.logger);
  }

  /** The context thresholds after a turn that ended normally, its notices sent to the conversation. */
  private async afterTurn(result: TurnResult): Promise<void> {
    if (!result.ok) return;
    const key = result.sessionKey;
    const address = this.o.keys.addressOf(key);
    if (address === undefined) return;
    await this.o.context.afterTurn(key, result.contextUsagePct, {
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
    const address = this.o.keys.addressOf(key);
    const surface = address === undefined ? undefined : this.o.surface.receipts?.(address);
    const failed = (error: unknown) =>
      this.o.ctx.logger.warn(`${this.channel}: a queue receipt did not land`, { error: String(error) });
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

  private decider(key: string): ApprovalDecider {
    return {
      open: (request, signal) => this.o.approvals.widget.open({ ...request, sessionKey: key }, signal),
    };
  }

  /** One turn under the held session semaphore (the router drains after it). */
  private async runTurn(
    key: string,
    text: string,
    release: () => void,
    items: readonly QueuedItem<HubPayload<P>>[],
  ): Promise<void> {
    for (const item of items) item.payload?.started?.();
    const address = this.o.keys.addressOf(key);
    if (address === undefined) {
      release();
      throw new Error(`${this.channel}: a turn for a session with no known conversation`);
    }
    const conversation: Conversation = this.o.surface.conversation(address);
    const last = items[items.length - 1]?.payload;
    // The messages this turn answers; steered ones join while it runs.
    const tickets = items.flatMap((i) => [...(i.payload?.tickets ?? [])]);
    this.turnTickets.set(key, tickets);
    await this.o.tickets.claim(tickets);
    const parts = await this.o.tickets.parts(tickets);
    const renderer = this.o.surface.newRenderer(address, {
      sessionKey: key,
      files: this.outboundFiles(key),
      extras: items.map((i) => i.payload?.extra),
      parts,
      ...(last?.messageId !== undefined ? { messageId: last.messageId } : {}),
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
    // How many of `tickets` the answer's one-step commit completed (a steer may join after it).
    let committed = 0;
    const commitAnswer = async (_result: TurnResult, line: TranscriptAppend | undefined) => {
      const answering = [...tickets];
      const written = await this.o.tickets.answered(answering, line);
      if (written) committed = answering.length;
      return written;
    };
    try {
      result = await runTurnPipeline(this.pipeline, {
        sessionKey: key,
        channelType: this.channel,
        text: prompt,
        renderer,
        release,
        turnId: parts.turnId,
        userLines: items.map((i) => {
          const own = i.payload?.tickets[0]?.turnId;
          return {
            text: i.text,
            attachments: i.files ?? [],
            ...(own !== undefined ? { ownTurnId: own } : {}),
          };
        }),
        recordAnswer: (r) => !this.cutShort(r),
        commitAnswer,
        renderedAt: conversation.link,
        // A resumed session's origin is its web chat tab: re-binding it here would move that link.
        ...(channelNamespaceOf(key) === this.channel ? { origin: conversation.link } : {}),
        policy: {
          approvalMode: this.approvalMode,
          decider: this.decider(key),
          ...(guards.some((g) => g.denyAllTools) ? { denyAllTools: true } : {}),
          // Read per request: a revoke lands on the very next tool.
          autoApproveSession: () => this.o.ctx.grant.isActive(),
        },
        ...(attachments.length > 0
          ? {
              attachments,
              ...(this.o.surface.ingestLimits ? { ingestLimits: this.o.surface.ingestLimits } : {}),
            }
          : {}),
        // Refused files, an approval prompt denied because it could not be shown: said out of band.
        notify: async (line: string) => void (await this.o.surface.reply(address, line)),
      });
      this.nameConversation(result, address);
    } finally {
      if (this.active.get(key) === renderer) this.active.delete(key);
      if (this.turnTickets.get(key) === tickets) this.turnTickets.delete(key);
      this.o.approvals.registry.denyAll(key);
      await this.settle(tickets.slice(committed), result);
    }
  }

  /** After a good exchange, one background naming turn per conversation (a person's title wins). */
  private nameConversation(result: TurnResult, address: A): void {
    const c = this.o.ctx;
    const generate = c.titles;
    if (!generate) return;
    const retitle = this.o.surface.retitle?.bind(this.o.surface);
    autoTitleStep({
      generate,
      store: c.store,
      audit: c.audit,
      logger: c.logger,
      source: this.channel,
      timers: c.clock,
      // A restricted conversation persists nothing, a title included.
      isRestricted: (key) => this.o.privacy?.isRestricted(key) ?? restrictedByFlags(c.store, key),
      ...(retitle ? { setChannelTitle: (title: string) => retitle(address, title) } : {}),
    }).run(result);
  }

  /** A turn that ended because this process is shutting down: its messages run after the restart. */
  private cutShort(result: TurnResult | undefined): boolean {
    return this.o.closing() && (result?.stopReason === "cancelled" || !result?.ok);
  }

  /** The turn's messages are done with it, unless a shutdown cut it short. */
  private async settle(tickets: readonly IntakeTicket[], result: TurnResult | undefined): Promise<void> {
    if (this.cutShort(result)) return;
    const cancelled = result?.stopReason === "cancelled";
    await this.o.tickets.finish(tickets, result?.ok ? "answered" : cancelled ? "refused" : "failed");
  }
}

/** The durable privacy flags, for a channel without the privacy commands. */
function restrictedByFlags(store: SessionStore, key: string): boolean {
  return store.flag(key, "temporary") || store.flag(key, "incognito");
}
