/**
 * Discord's dispatcher: its addresses (a DM, an allow-listed thread, an autoThread-created thread)
 * and its widgets only. Per Gateway event: the transport's silent screen, then its audited receive,
 * then commands from the one COMMAND_SPEC, presses (approval, option, model), the typed approval
 * floor, and everything else through the shared MidTurnRouter (run now, steer, or queue behind one
 * receipt) into driveTurn with a DiscordRenderer. Events are handled in the background: the Gateway
 * reader is never blocked on a turn.
 */

import type { ApprovalDecider, ApprovalRequest, ApprovalTicket } from "../messaging/approval/approvals.js";
import {
  ChannelApprovals,
  type PendingApprovals,
  RECEIPT_EXPIRED,
  type TextReplyApprovalDecider,
  type WidgetApprovalDecider,
} from "../messaging/approval/approvals.js";
import type { Clock } from "../messaging/base/clock.js";
import { realClock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { InboundAttachment, InboundMessage } from "../messaging/channel/transport.js";
import type { QueueMode } from "../messaging/queue/mid-turn-router.js";
import { MidTurnRouter } from "../messaging/queue/mid-turn-router.js";
import type { QueuedItem } from "../messaging/queue/receipt.js";
import { stopRunningTurn } from "../messaging/queue/stop.js";
import type { AuditSink } from "../messaging/security/audit.js";
import { compactSession } from "../messaging/session/agent-controls.js";
import { ConversationState } from "../messaging/session/generations.js";
import type { ChannelLink } from "../messaging/session/keys.js";
import {
  buildDmSessionKey,
  channelNamespaceOf,
  rebindConversationLocation,
  releaseConversationLocation,
} from "../messaging/session/keys.js";
import type { SessionManager } from "../messaging/session/session-manager.js";
import { uploadsRestricted } from "../messaging/session/upload-gate.js";
import type { ApprovalMode } from "../messaging/turn/driver.js";
import type { PipelineDeps, PipelineProvider } from "../messaging/turn/pipeline.js";
import { driveTurn } from "../messaging/turn/pipeline.js";
import {
  helpText,
  isBareOverride,
  isUnknownCommand,
  parseCommand,
  unknownCommandCard,
  usageOf,
} from "./commands.js";
import { discordSafe, fitPlatformCap } from "./format.js";
import { DiscordModelPicker } from "./model-picker.js";
import type { ActionRow, MessageBody } from "./payload.js";
import { commandReply, EPHEMERAL } from "./payload.js";
import { DiscordRenderer } from "./renderer.js";
import type { DiscordSessionPicker, ListSurface } from "./session-picker.js";
import type { RenderToggles } from "./settings.js";
import type { DiscordRest, DiscordTransport } from "./transport.js";
import type { UploadPolicy } from "./uploads.js";
import { parseCustomId } from "./widgets.js";
import type { DiscordEnvelope, DiscordInteraction } from "./wire.js";
import { buttonLabel, INTERACTION_APPLICATION_COMMAND } from "./wire.js";

/**
 * A command in an allowed channel (not a thread) would otherwise act on the sender's DM session,
 * which is not the conversation they are looking at.
 */
export const CHANNEL_COMMAND_REFUSAL =
  "Commands act on a conversation: use them inside a thread here (send a message to start one) or in a DM.";

/** The reaction that tells a user their mid-turn message was folded into the running turn. */
export const STEER_RECEIPT_EMOJI = "📥";

export interface DiscordDispatcherOptions {
  transport: DiscordTransport;
  rest: DiscordRest;
  sessions: SessionManager<PipelineProvider>;
  pipeline: Omit<PipelineDeps, "sessions">;
  audit: AuditSink;
  logger: Logger;
  approvalMode: ApprovalMode;
  queueMode: QueueMode;
  /** The process-wide grant; Discord offers no command to arm it, but honours it. */
  autoApproveSession?: () => boolean;
  /** Re-read per turn (reactions, show-thinking). */
  toggles: () => RenderToggles;
  clock?: Clock;
  approvalTimeoutMs?: number;
  throttleMs?: number;
  agentName?: string;
  /** `!sessions`: continue a web chat session in a DM or thread (absent without a durable store). */
  resume?: DiscordSessionPicker;
}

/** Commands that must work while routing refuses: the way back in for a user whose link broke. */
const RECOVERY_COMMANDS: ReadonlySet<string> = new Set(["help", "sessions", "new", "unlink"]);

/** Where a message runs: the chat's own session, or a web chat session this DM continues. */
interface Routed {
  key: string;
  resumed: boolean;
}

interface Origin {
  messageId?: string;
  /** RAW descriptors (URLs, never bytes or temp paths): the turn that answers fetches them. */
  attachments?: InboundAttachment[];
}

type Reply = (text: string) => Promise<void>;

/** Where a command came from: typed text, or a slash command (whose one reply is its interaction's). */
type Surface = "text" | { slash: DiscordInteraction };

export class DiscordDispatcher {
  private readonly registry: PendingApprovals;
  private readonly widget: WidgetApprovalDecider;
  private readonly typed: TextReplyApprovalDecider;
  private readonly router: MidTurnRouter;
  private readonly conversations: ConversationState;
  private readonly active = new Map<string, DiscordRenderer>();
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly keyToLocation = new Map<string, ChannelLink>();
  private readonly clock: Clock;
  private readonly models: DiscordModelPicker;

  constructor(private readonly o: DiscordDispatcherOptions) {
    this.clock = o.clock ?? realClock;
    this.models = new DiscordModelPicker({
      rest: o.rest,
      sessions: o.sessions,
      now: () => this.clock.now(),
      // The switch held the session lock: a message that arrived meanwhile waits in the queue.
      afterSwitch: (key) => this.router.drain(key),
    });
    // The decision window denies by default on timeout; the prompt says so.
    const approvals = new ChannelApprovals({
      channel: "discord",
      timers: this.clock,
      audit: o.audit,
      ...(o.approvalTimeoutMs ? { timeoutMs: o.approvalTimeoutMs } : {}),
      logger: o.logger,
      onTimeout: (request, notice) =>
        this.active.get(request.sessionKey)?.markApproval(request.requestId, notice),
    });
    ({ registry: this.registry, widget: this.widget, typed: this.typed } = approvals);
    this.conversations = new ConversationState({ clock: this.clock });
    this.router = new MidTurnRouter({
      sessions: o.sessions,
      queueMode: o.queueMode,
      surfaceFor: (key) => {
        const channelId = this.locationOf(key).conversationId;
        return {
          post: async (text) => {
            const res = await o.rest.createMessage(channelId, { content: discordSafe(text) });
            return res.ok ? res.data.id : "";
          },
          edit: async (id, text) => {
            if (id) await o.rest.editMessage(channelId, id, { content: discordSafe(text) });
          },
        };
      },
      runTurn: (key, text, release, opts) => this.runTurn(key, text, release, opts.items),
    });
  }

  /** One Gateway dispatch. Runs in the background; failures are logged, never thrown at the reader. */
  handle(envelope: DiscordEnvelope): Promise<void> {
    const task = this.route(envelope).catch((error: unknown) => {
      this.o.logger.error("discord dispatch failed", { error: String(error) });
    });
    this.inflight.add(task);
    void task.finally(() => this.inflight.delete(task));
    return task;
  }

  private location(message: InboundMessage): ChannelLink {
    return {
      channelType: "discord",
      conversationId: message.conversationId,
      ...(message.threadId ? { threadId: message.threadId } : {}),
    };
  }

  private locationOf(key: string): ChannelLink {
    return this.keyToLocation.get(key) ?? { channelType: "discord", conversationId: key };
  }

  /** DM: the peer's id is the scope (so proactive sends can name their principal); thread: the thread. */
  sessionKeyFor(message: InboundMessage): string {
    const thread = message.threadId;
    const route = thread ? `thread:${thread}` : `dm:${message.userId}`;
    const gen = this.conversations.generation(route);
    const key = thread
      ? buildDmSessionKey("discord", this.o.agentName ?? "default", thread, { gen, chatType: "thread" })
      : buildDmSessionKey("discord", this.o.agentName ?? "default", message.userId, { gen });
    this.keyToLocation.set(key, this.location(message));
    return key;
  }

  private routeName(message: InboundMessage): string {
    return message.threadId ? `thread:${message.threadId}` : `dm:${message.userId}`;
  }

  private async route(envelope: DiscordEnvelope): Promise<void> {
    const t = this.o.transport;
    if (!(await t.screen(envelope))) return;
    const outcome = await t.receive(envelope);
    if (envelope.kind === "interaction") {
      if (outcome.status === "denied" && envelope.interaction.type === INTERACTION_APPLICATION_COMMAND)
        await this.callbackReply(envelope.interaction, "You are not allowed to use this bot.");
      if (outcome.status === "dispatched") await this.onInteraction(envelope.interaction, outcome.message);
      return;
    }
    if (outcome.status !== "dispatched") return;
    let message = outcome.message;
    if (t.routeFor(message) === "channel") {
      // A command names no conversation here (each message opens its own thread): answer, open nothing.
      // A file's caption is content, never a command (the same rule onMessage applies).
      const cmd = message.attachments.length > 0 ? null : parseCommand(message.text);
      if (cmd && !cmd.spec.override) {
        const channelId = message.conversationId;
        return this.post(channelId, cmd.spec.name === "help" ? helpText() : CHANNEL_COMMAND_REFUSAL);
      }
      const routed = await t.openThreadFor(message);
      if (!routed) return;
      message = routed;
    }
    const reply: Reply = async (text) => this.post(message.conversationId, text);
    await this.onMessage(message, reply, { interpretCommands: true });
  }

  private async post(channelId: string, text: string): Promise<void> {
    await this.postConfirmed(channelId, text);
  }

  /** True only when every part landed: a resume notice counts as delivered on confirmation alone. */
  private async postConfirmed(channelId: string, text: string): Promise<boolean> {
    for (const part of fitPlatformCap(discordSafe(text))) {
      const res = await this.o.rest.createMessage(channelId, { content: part });
      if (!res.ok) {
        this.o.logger.warn("discord reply failed", { status: res.status });
        return false;
      }
    }
    return true;
  }

  /**
   * Decide ONCE where this message runs. Null when routing refused; the notice has then been sent
   * through `deliver` (true = confirmed), which is what lets the binder settle the record.
   */
  private async resolveRoute(
    message: InboundMessage,
    nativeKey: string,
    deliver: (notice: string) => Promise<boolean>,
  ): Promise<Routed | null> {
    const resume = this.o.resume;
    if (!resume) return { key: nativeKey, resumed: false };
    const location = this.location(message);
    const decision = await resume.binder.routeAndDeliver(location, nativeKey, deliver);
    if (decision.kind === "refuse") return null;
    // The resumed session's turn renders HERE, not at its web chat origin.
    if (decision.resumed) this.keyToLocation.set(decision.sessionKey, location);
    return { key: decision.sessionKey, resumed: decision.resumed };
  }

  /** Every key a prompt in this conversation may be registered under: its own, then any attached one. */
  private conversationKeys(message: InboundMessage, nativeKey: string): string[] {
    const attached = this.o.resume?.binder.boundKeys(this.location(message)) ?? [];
    return [nativeKey, ...attached.filter((k) => k !== nativeKey)];
  }

  /**
   * A slash-command reply: type 4, ephemeral (an approved thread is readable by every member). With
   * `components` it is a private widget; `text` is then already display-safe and capped.
   */
  private async callbackReply(
    interaction: DiscordInteraction,
    text: string,
    components?: ActionRow[],
  ): Promise<boolean> {
    const [first] = components ? [text] : fitPlatformCap(discordSafe(text));
    const res = await this.o.rest.interactionCallback(
      interaction.id,
      interaction.token,
      commandReply(first ?? "", components),
    );
    if (!res.ok) this.o.logger.warn("discord command reply failed", { status: res.status });
    return res.ok;
  }

  private async onInteraction(interaction: DiscordInteraction, message: InboundMessage): Promise<void> {
    if (interaction.type === INTERACTION_APPLICATION_COMMAND) {
      // The one permitted first response is the command's reply itself.
      const deliver = (text: string) => this.callbackReply(interaction, text);
      const reply: Reply = async (text) => {
        await deliver(text);
      };
      if (this.o.transport.routeFor(message) === "channel" && !message.text.startsWith("/help"))
        return reply(CHANNEL_COMMAND_REFUSAL);
      const handled = await this.command(message, reply, deliver, { slash: interaction });
      if (!handled) await reply("I don't know that command.");
      return;
    }
    const customId = interaction.data?.custom_id ?? "";
    const target = parseCustomId(customId);
    const nativeKey = this.sessionKeyFor(message);
    const ephemeral = async (text: string) => {
      const res = await this.o.rest.followup(interaction.token, {
        content: discordSafe(text),
        flags: EPHEMERAL,
      });
      if (!res.ok) this.o.logger.warn("discord follow-up failed", { status: res.status });
    };
    if (!target) return;
    if (target.kind === "approval") {
      // A press dispatches no turn, so it is not routed: the prompt is found under whichever of this
      // conversation's keys opened it (a pick can attach a session while an earlier turn still runs),
      // and the nonce alone decides.
      const keys = this.conversationKeys(message, nativeKey);
      const key = keys.find((k) => this.registry.isOpen(k, target.requestId)) ?? nativeKey;
      const verdict = target.approve ? "approve" : "deny";
      const answer = this.widget.press(key, target.requestId, target.nonce, verdict);
      if (answer === RECEIPT_EXPIRED) return ephemeral(answer);
      await this.active
        .get(key)
        ?.markApproval(target.requestId, target.approve ? "✅ Approved" : "❌ Denied");
      return;
    }
    if (target.kind === "model" || target.kind === "session") {
      const shown = interaction.message;
      if (!shown) return ephemeral("That list is no longer available: ask for a new one.");
      const refusal =
        target.kind === "model"
          ? await this.models.press(shown.channel_id, shown.id, target.index, message.userId)
          : this.o.resume
            ? await this.o.resume.press(
                this.location(message),
                this.editShown(interaction, shown),
                target.handle,
                target.index,
                message.userId,
              )
            : "That list is no longer available: ask for a new one.";
      if (refusal !== null) await ephemeral(refusal);
      return;
    }
    // An option press: the label comes back from the component the user actually saw.
    const label = buttonLabel(interaction, customId);
    const shown = interaction.message;
    if (!label || !shown) return ephemeral("That choice is no longer available.");
    await this.o.rest.editMessage(shown.channel_id, shown.id, {
      content: fitPlatformCap(`${shown.content}\n-# ✔️ ${discordSafe(label)}`)[0] ?? "",
      components: [],
    });
    // A label is model-authored: re-dispatched with command interpretation OFF.
    await this.onMessage({ ...message, text: label }, (text) => this.post(message.conversationId, text), {
      interpretCommands: false,
    });
  }

  /**
   * How to edit the message a press sits on: an ephemeral one only through the press's @original
   * (after the deferred update the transport sent), anything else through its channel route.
   */
  private editShown(
    interaction: DiscordInteraction,
    shown: NonNullable<DiscordInteraction["message"]>,
  ): (body: MessageBody) => Promise<boolean> {
    return async (body) => {
      const ephemeral = ((shown.flags ?? 0) & EPHEMERAL) !== 0;
      const res = ephemeral
        ? await this.o.rest.editOriginal(interaction.token, body)
        : await this.o.rest.editMessage(shown.channel_id, shown.id, body);
      if (!res.ok) this.o.logger.warn("discord list edit failed", { status: res.status });
      return res.ok;
    };
  }

  private async onMessage(
    message: InboundMessage,
    reply: Reply,
    opts: { interpretCommands: boolean },
  ): Promise<void> {
    const nativeKey = this.sessionKeyFor(message);
    let text = message.text;
    let override: QueueMode | undefined;
    const hasAttachments = message.attachments.length > 0;
    // A file's caption is content for the agent, never a command or a typed approval answer.
    const interpretCommands = opts.interpretCommands && !hasAttachments;
    // A thread is read by everyone who can see its channel: a routing notice names no session title.
    const deliver = (notice: string) => this.postConfirmed(message.conversationId, notice);
    if (interpretCommands) {
      // A message that is entirely 1 / 2 answers the open prompt: typed replies are the floor.
      // Looked up only while some prompt is open: the attached keys cost a scan of the session store.
      const keys = this.registry.anyOpen ? this.conversationKeys(message, nativeKey) : [];
      for (const key of keys) {
        if (!this.registry.hasOpen(key)) continue;
        const answer = this.typed.handleReply(key, text);
        if (answer !== null) return answer ? reply(answer) : undefined;
      }
      const bare = isBareOverride(text);
      if (bare) return reply(usageOf(bare));
      const cmd = parseCommand(text);
      if (cmd?.spec.override) {
        override = cmd.spec.override;
        text = cmd.arg; // the payload is content: "!queue !new" queues the literal "!new"
      } else if (cmd) {
        await this.command(message, reply, deliver, "text");
        return;
      } else if (isUnknownCommand(text)) return reply(unknownCommandCard());
    }
    const routed = await this.resolveRoute(message, nativeKey, deliver);
    if (!routed) return;
    let current = routed.key;
    if (!routed.resumed) {
      // Rotation belongs to this conversation's own session; a resumed one keeps its transcript.
      const busy = this.o.sessions.isBusy(nativeKey);
      this.conversations.maybeRotate(this.routeName(message), { busy });
      current = this.sessionKeyFor(message);
    }
    // The queue carries the RAW descriptors: files fetched now would be deleted before a queued turn ran.
    const payload: Origin = {
      ...(message.messageId ? { messageId: message.messageId } : {}),
      ...(hasAttachments ? { attachments: message.attachments } : {}),
    };
    const item: QueuedItem = {
      text,
      payload,
      ...(hasAttachments ? { files: message.attachments.map((a) => a.name) } : {}),
    };
    // With attachments the router never steers (a steer carries text only): it runs or queues.
    const outcome = await this.router.submit(current, item, {
      interpretCommands,
      ...(override ? { override } : {}),
      hasAttachments,
    });
    if (outcome === "steered") {
      this.active.get(current)?.noteSteer(text);
      if (message.messageId)
        await this.o.rest.addReaction(message.conversationId, message.messageId, STEER_RECEIPT_EMOJI);
    }
  }

  /**
   * A known command. Recovery commands run unrouted (they must work while routing refuses); the rest
   * act on the session this conversation routes to, decided once. Returns false for unknown text.
   */
  private async command(
    message: InboundMessage,
    reply: Reply,
    deliver: (notice: string) => Promise<boolean>,
    surface: Surface,
  ): Promise<boolean> {
    const cmd = parseCommand(message.text);
    if (!cmd) return false;
    const nativeKey = this.sessionKeyFor(message);
    if (cmd.spec.override || RECOVERY_COMMANDS.has(cmd.spec.name))
      return this.onCommand(message, reply, surface, nativeKey);
    const routed = await this.resolveRoute(message, nativeKey, deliver);
    if (!routed) return true;
    return this.onCommand(message, reply, surface, routed.key);
  }

  /** Returns false when the text is not a known command. The handlers return text; `reply` sends it. */
  private async onCommand(
    message: InboundMessage,
    reply: Reply,
    surface: Surface,
    key: string,
  ): Promise<boolean> {
    const cmd = parseCommand(message.text);
    if (!cmd) return false;
    if (cmd.spec.override) {
      await reply(
        cmd.arg ? "Send that as a message (`!queue <message>`), not from the menu." : usageOf(cmd.spec),
      );
      return true;
    }
    const store = this.o.pipeline.store;
    switch (cmd.spec.name) {
      case "help":
        await reply(helpText());
        return true;
      case "compact":
        await reply(await compactSession(this.o.sessions, key, { newCommand: "`!new`" }));
        // Messages that arrived while the compaction held the session ran nowhere yet.
        await this.router.drain(key);
        return true;
      case "model": {
        // Button-only: the picker is an ordinary channel message; a slash command still owes an ack.
        const refusal = await this.models.post(message.conversationId, message.userId, key);
        if (refusal !== null) await reply(refusal);
        else if (surface !== "text") await reply("Model picker posted in this conversation.");
        return true;
      }
      case "stop":
        await reply(
          await stopRunningTurn(this.o.sessions, key, { router: this.router, approvals: this.registry }),
        );
        return true;
      case "status": {
        const running = await this.o.sessions.hasActiveTurn(key);
        const queued = this.router.receiptQueue(key).size;
        await reply(`${running ? "▶️ A turn is running." : "💤 Idle."}${queued ? ` ${queued} queued.` : ""}`);
        return true;
      }
      case "sessions": {
        if (!this.o.resume) {
          await reply("Continuing a web chat session is not available in this gateway.");
          return true;
        }
        // In a thread the list exists only as the ephemeral answer to the owner's slash command.
        const where: ListSurface = !message.threadId
          ? { kind: "dm" }
          : surface === "text"
            ? { kind: "thread" }
            : {
                kind: "thread-private",
                reply: (content, rows) => this.callbackReply(surface.slash, content, rows),
              };
        const answer = await this.o.resume.list(this.location(message), message.userId, where);
        if (answer !== null) await reply(answer);
        else if (surface !== "text" && where.kind === "dm")
          await reply("Session list posted in this conversation.");
        return true;
      }
      case "new": {
        if (this.o.sessions.isBusy(key)) {
          await reply("A turn is still running: `!stop` it first, then `!new`.");
          return true;
        }
        // A fresh start here also ends any attachment: otherwise the next message would resume it.
        const released = await this.o.resume?.binder.release(this.location(message));
        if (released && !released.ok) {
          await reply(released.text);
          return true;
        }
        this.conversations.advance(this.routeName(message));
        await this.o.sessions.evict(key, { carryTo: this.sessionKeyFor(message) });
        const detached = released?.detached ? `${released.text}\n` : "";
        await reply(`${detached}🆕 Fresh conversation started.`);
        return true;
      }
      case "link":
        await reply(
          store
            ? await rebindConversationLocation(store, {
                key,
                location: this.location(message),
                unlinkCommand: "`!unlink`",
              })
            : "Linking is not available in this gateway.",
        );
        return true;
      case "unlink": {
        if (!store) {
          await reply("Linking is not available in this gateway.");
          return true;
        }
        // Detach a resumed session first (durably, record retired), then this chat's own opt-out.
        const released = await this.o.resume?.binder.release(this.location(message));
        if (released && !released.ok) {
          await reply(released.text);
          return true;
        }
        const own = await releaseConversationLocation(store, {
          key,
          location: this.location(message),
          channel: "discord",
          logger: this.o.logger,
        });
        await reply(released?.detached ? released.text : own.text);
        return true;
      }
    }
    return false;
  }

  private decider(key: string): ApprovalDecider {
    return {
      open: (request: ApprovalRequest, signal: AbortSignal): ApprovalTicket =>
        this.widget.open({ ...request, sessionKey: key }, signal),
    };
  }

  /** The approved upload root is the session provider's real cwd; unknown refuses every reference. */
  private uploadPolicy(key: string): UploadPolicy {
    const store = this.o.pipeline.store as { flag?: (key: string, flag: string) => boolean } | undefined;
    return {
      root: async () => {
        const provider = (await this.o.sessions.existingProvider(key)) as { cwd?: unknown } | undefined;
        return typeof provider?.cwd === "string" ? provider.cwd : undefined;
      },
      restricted: () =>
        typeof store?.flag === "function"
          ? uploadsRestricted(store as { flag: (k: string, f: string) => boolean }, key, "discord", {
              audit: this.o.audit,
            })
          : false,
    };
  }

  private async runTurn(key: string, text: string, release: () => void, items: QueuedItem[]): Promise<void> {
    const location = this.locationOf(key);
    const origin = (items[items.length - 1]?.payload ?? {}) as Origin;
    // Every combined item's files, in arrival order; fetched and deleted inside driveTurn's frame.
    const attachments = items.flatMap((i) => ((i.payload ?? {}) as Origin).attachments ?? []);
    const renderer = new DiscordRenderer({
      rest: this.o.rest,
      channelId: location.conversationId,
      ...(origin.messageId ? { userMessageId: origin.messageId } : {}),
      toggles: this.o.toggles(),
      audit: this.o.audit,
      logger: this.o.logger,
      clock: this.clock,
      ...(this.o.throttleMs !== undefined ? { throttleMs: this.o.throttleMs } : {}),
      uploads: this.uploadPolicy(key),
      contextUsage: async () => (await this.o.sessions.existingProvider(key))?.contextUsagePct,
    });
    this.active.set(key, renderer);
    try {
      await driveTurn(
        { ...this.o.pipeline, sessions: this.o.sessions, clock: this.clock },
        {
          sessionKey: key,
          channelType: "discord",
          text,
          renderer,
          release,
          // A resumed session's origin is its web chat tab: re-binding it here would move that link.
          ...(channelNamespaceOf(key) === "discord" ? { origin: location } : {}),
          policy: {
            approvalMode: this.o.approvalMode,
            decider: this.decider(key),
            autoApproveSession: () => this.o.autoApproveSession?.() ?? false,
          },
          ...(attachments.length > 0
            ? {
                attachments: attachments.map((a) => this.o.transport.attachmentSource(a)),
                notify: (line: string) => this.post(location.conversationId, line),
              }
            : {}),
        },
      );
    } finally {
      if (this.active.get(key) === renderer) this.active.delete(key);
      this.registry.denyAll(key);
    }
  }

  /** Shutdown: deny open prompts, stop live turns, and wait for in-flight work to settle. */
  async shutdown(): Promise<void> {
    for (const key of [...this.active.keys()]) {
      await stopRunningTurn(this.o.sessions, key, { router: this.router, approvals: this.registry });
    }
    await Promise.allSettled([...this.inflight]);
  }
}
