/**
 * The web chat's dispatcher: its address (one conversation per page id) and its widgets only.
 * Commands come from the one COMMAND_SPEC; busy handling, the turn pipeline, approvals and /stop
 * are the shared messaging machinery. Files arrive decoded in the message frame and reach the agent
 * through the shared ingest (messaging/attachments.ts), exactly as Discord's do: they travel with
 * the queued message as in-memory byte sources, and only the turn that answers it writes, hands over
 * and deletes them.
 */

import type { GrantControl } from "../gateway/channel.js";
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
import type { InboundMessage } from "../messaging/channel/transport.js";
import type { Attachment } from "../messaging/files/ingest.js";
import { bytesAttachment } from "../messaging/files/ingest.js";
import type { QueueMode, RouteOutcome } from "../messaging/queue/mid-turn-router.js";
import { MidTurnRouter } from "../messaging/queue/mid-turn-router.js";
import type { QueuedItem } from "../messaging/queue/receipt.js";
import { stopRunningTurn } from "../messaging/queue/stop.js";
import type { AuditSink } from "../messaging/security/audit.js";
import { applyModelChoice, compactSession, loadModelMenu } from "../messaging/session/agent-controls.js";
import { ConversationState } from "../messaging/session/generations.js";
import { buildDmSessionKey } from "../messaging/session/keys.js";
import type { SessionManager } from "../messaging/session/session-manager.js";
import type { ApprovalMode } from "../messaging/turn/driver.js";
import type { PipelineDeps, PipelineProvider } from "../messaging/turn/pipeline.js";
import { driveTurn } from "../messaging/turn/pipeline.js";
import type { Connection } from "./client.js";
import { helpText, parseCommand, usageOf } from "./commands.js";
import { modelListText, resolveModelArg } from "./model.js";
import type { ClientFrame, FrameRefusal, Upload } from "./protocol.js";
import { WebChatRenderer } from "./renderer.js";
import type { WebChatTransport } from "./transport.js";

export interface WebChatDispatcherOptions {
  transport: WebChatTransport;
  sessions: SessionManager<PipelineProvider>;
  pipeline: Omit<PipelineDeps, "sessions">;
  audit: AuditSink;
  logger: Logger;
  approvalMode: ApprovalMode;
  queueMode: QueueMode;
  grant?: GrantControl;
  clock?: Clock;
  approvalTimeoutMs?: number;
  agentName?: string;
  /**
   * Bytes of files one session may hold in its mid-turn queue (they wait in memory until the turn
   * that answers them). A message whose files would pass it is refused, visibly. Default 100 MiB.
   */
  maxHeldUploadBytes?: number;
}

export const DEFAULT_MAX_HELD_UPLOAD_BYTES = 100 * 1024 * 1024;

/** One message's files while it waits: counted against maxHeldUploadBytes until a turn takes it. */
interface HeldFiles {
  bytes: number;
}

/** What a queued item carries besides its text: the files as byte sources, never temp paths. */
interface Payload {
  files: Attachment[];
  held: HeldFiles;
}

const payloadOf = (item: QueuedItem): Payload | undefined => item.payload as Payload | undefined;

export class WebChatDispatcher {
  private readonly registry: PendingApprovals;
  private readonly widget: WidgetApprovalDecider;
  private readonly typed: TextReplyApprovalDecider;
  private readonly router: MidTurnRouter;
  private readonly conversations: ConversationState;
  private readonly active = new Map<string, WebChatRenderer>();
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly clock: Clock;

  constructor(private readonly o: WebChatDispatcherOptions) {
    this.clock = o.clock ?? realClock;
    const approvals = new ChannelApprovals({
      channel: "webchat",
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
        const conversationId = this.conversationOf(key);
        return {
          post: async (text) => o.transport.post(conversationId, { role: "receipt", text, final: false }),
          edit: async (id, text) => {
            o.transport.edit(conversationId, id, { text, final: !text.startsWith("⏳") });
          },
        };
      },
      runTurn: (key, text, release, opts) => this.runTurn(key, text, release, opts.items),
    });
  }

  /** Per session, the files of messages submitted and not yet taken by a turn. */
  private readonly held = new Map<string, Set<HeldFiles>>();

  private readonly keyToConversation = new Map<string, string>();

  private conversationOf(key: string): string {
    return this.keyToConversation.get(key) ?? key;
  }

  sessionKeyFor(conversationId: string): string {
    const gen = this.conversations.generation(conversationId);
    const key = buildDmSessionKey("webchat", this.o.agentName ?? "default", conversationId, { gen });
    this.keyToConversation.set(key, conversationId);
    return key;
  }

  /** Frames from the server. Turns run in the background; the socket is never blocked on one. */
  handleFrame(conn: Connection, frame: ClientFrame): void {
    const task = this.route(conn, frame).catch((error) => {
      this.o.logger.error("webchat dispatch failed", { error: String(error) });
      conn.send({ type: "error", message: "Something went wrong handling that message." });
    });
    this.inflight.add(task);
    void task.finally(() => this.inflight.delete(task));
  }

  /** A refused frame: audited as a drop, and the page is told why. The connection stays up. */
  handleBadFrame(conn: Connection, refusal: FrameRefusal): void {
    this.o.audit.log("inbound", "dropped", {
      channel: "webchat",
      reason: refusal.kind,
      conversation: conn.conversationId,
    });
    const message =
      refusal.kind === "bad_frame" ? `Bad frame: ${refusal.reason}` : `Not sent: ${refusal.reason}.`;
    conn.send({ type: "error", message });
  }

  private async route(conn: Connection, frame: ClientFrame): Promise<void> {
    const t = this.o.transport;
    if (frame.type === "press") {
      const key = this.sessionKeyFor(conn.conversationId);
      const reply = this.widget.press(key, frame.requestId, frame.nonce, frame.verdict);
      if (reply === RECEIPT_EXPIRED)
        t.post(conn.conversationId, { role: "system", text: reply, final: true });
      else
        this.active
          .get(key)
          ?.markApproval(frame.requestId, frame.verdict === "deny" ? "❌ Denied" : "✅ Approved");
      return;
    }
    const uploads: Upload[] = frame.type === "message" ? (frame.files ?? []) : [];
    // A file's caption is content for the agent, never a command or a typed approval answer.
    const interpretCommands = frame.type === "message" && uploads.length === 0;
    // The transport pipeline: ack -> drop bots -> normalize -> authorize (audited) -> dispatch.
    const outcome = await t.receive({
      principal: conn.principal,
      conversationId: conn.conversationId,
      text: frame.text,
      author: "user",
      ...(uploads.length > 0
        ? {
            attachments: uploads.map((u, i) => ({
              name: u.name,
              ...(u.mime ? { mimeType: u.mime } : {}),
              size: u.data.length,
              ref: `inline:${i}`,
            })),
          }
        : {}),
    });
    if (outcome.status === "denied") conn.send({ type: "error", message: "Not authorized." });
    if (outcome.status === "dispatched")
      await this.onMessage(outcome.message, { interpretCommands, uploads });
  }

  private async onMessage(
    message: InboundMessage,
    opts: { interpretCommands: boolean; uploads: Upload[] },
  ): Promise<void> {
    const t = this.o.transport;
    const conversationId = message.conversationId;
    const uploads = opts.uploads;
    t.post(conversationId, {
      role: "user",
      text: message.text,
      final: true,
      ...(uploads.length > 0 ? { files: uploads.map((u) => u.name) } : {}),
    });
    const reply = (text: string) => void t.post(conversationId, { role: "system", text, final: true });
    let key = this.sessionKeyFor(conversationId);
    let text = message.text;
    let override: QueueMode | undefined;

    // A message that is entirely 1/2/3 answers the open prompt (typed replies are the floor).
    if (opts.interpretCommands && this.registry.hasOpen(key)) {
      const answer = this.typed.handleReply(key, text);
      if (answer !== null) {
        if (answer) reply(answer);
        return;
      }
    }
    if (opts.interpretCommands) {
      const cmd = parseCommand(text);
      if (cmd) {
        if (cmd.spec.override) {
          if (!cmd.arg) return reply(usageOf(cmd.spec));
          override = cmd.spec.override;
          text = cmd.arg; // the payload is content: "/queue /new" queues the literal "/new"
        } else {
          switch (cmd.spec.name) {
            case "help":
              return reply(helpText());
            case "stop": {
              const answer = await stopRunningTurn(this.o.sessions, key, {
                router: this.router,
                approvals: this.registry,
              });
              // The queue was dropped, and with it the files held for it. (A message still between
              // its count and its enqueue escapes the count: the error is a lenient bound, never a leak.)
              this.held.delete(key);
              return reply(answer);
            }
            case "yolo":
              return reply(
                this.o.grant
                  ? this.o.grant.command(cmd.arg, { source: "webchat", caller: message.userId })
                  : "Auto-approve is not available here.",
              );
            case "compact":
              await reply(await compactSession(this.o.sessions, key, { newCommand: "/new" }));
              // Both held the session: what was queued meanwhile runs now, not at the next turn.
              return this.router.drain(key);
            case "model":
              await reply(await this.model(key, cmd.arg));
              return this.router.drain(key);
            case "new": {
              if (this.o.sessions.isBusy(key))
                return reply("A turn is still running: /stop it first, then /new.");
              const old = key;
              this.conversations.advance(conversationId);
              key = this.sessionKeyFor(conversationId);
              await this.o.sessions.evict(old, { carryTo: key });
              return reply("🆕 Fresh conversation started.");
            }
          }
        }
      }
    }
    let item: QueuedItem = { text };
    let payload: Payload | null = null;
    if (uploads.length > 0) {
      payload = this.hold(key, uploads);
      if (!payload) {
        this.o.audit.log("inbound", "dropped", {
          channel: "webchat",
          reason: "uploads_held",
          conversation: conversationId,
        });
        return reply(
          "⚠️ Not sent: too many files are already waiting for the running turn. Send this again when it has finished.",
        );
      }
      item = { text, payload, files: uploads.map((u) => u.name) };
    }
    // With files the router never steers (a steer carries text only): it runs now or queues, and the
    // queue carries the byte sources to the turn that answers them.
    let outcome: RouteOutcome;
    try {
      outcome = await this.router.submit(key, item, {
        interpretCommands: opts.interpretCommands,
        ...(override ? { override } : {}),
        hasAttachments: uploads.length > 0,
      });
    } catch (error) {
      // Never taken by a turn: stop counting it (a turn that did take it already has).
      if (payload) this.held.get(key)?.delete(payload.held);
      throw error;
    }
    if (outcome === "steered") this.active.get(key)?.noteSteer(text);
  }

  /** Count a message's files against the session's held bound; null when they would pass it. */
  private hold(key: string, uploads: Upload[]): Payload | null {
    let set = this.held.get(key);
    if (!set) {
      set = new Set();
      this.held.set(key, set);
    }
    const bytes = uploads.reduce((n, u) => n + u.data.length, 0);
    const waiting = [...set].reduce((n, h) => n + h.bytes, 0);
    if (waiting + bytes > (this.o.maxHeldUploadBytes ?? DEFAULT_MAX_HELD_UPLOAD_BYTES)) return null;
    const held: HeldFiles = { bytes };
    set.add(held);
    return {
      // The browser's type is kept as a claim only: the shared ingest classifies by the bytes.
      files: uploads.map((u) => bytesAttachment(u.name, u.data, u.mime || undefined)),
      held,
    };
  }

  /** `/model`: the list, or a switch resolved against the menu the agent advertises right now. */
  private async model(key: string, arg: string): Promise<string> {
    const loaded = await loadModelMenu(this.o.sessions, key);
    if (!("menu" in loaded)) return loaded.reply;
    if (!arg) return modelListText(loaded.menu);
    const choice = resolveModelArg(loaded.menu, arg);
    if (!("option" in choice)) return choice.reply;
    return applyModelChoice(this.o.sessions, key, choice.option.id);
  }

  private decider(key: string): ApprovalDecider {
    return {
      open: (request: ApprovalRequest, signal: AbortSignal): ApprovalTicket =>
        this.widget.open({ ...request, sessionKey: key }, signal),
    };
  }

  private async runTurn(key: string, text: string, release: () => void, items: QueuedItem[]): Promise<void> {
    const conversationId = this.conversationOf(key);
    const payloads = items.flatMap((i) => payloadOf(i) ?? []);
    const held = this.held.get(key);
    for (const p of payloads) held?.delete(p.held);
    if (held?.size === 0) this.held.delete(key);
    // Every combined message's files, in arrival order: written, handed over and deleted by driveTurn.
    const attachments = payloads.flatMap((p) => p.files);
    const renderer = new WebChatRenderer(this.o.transport, conversationId, {
      timers: this.clock,
      now: () => this.clock.now(),
    });
    this.active.set(key, renderer);
    try {
      await driveTurn(
        { ...this.o.pipeline, sessions: this.o.sessions, clock: this.clock },
        {
          sessionKey: key,
          channelType: "webchat",
          text,
          renderer,
          release,
          origin: { channelType: "webchat", conversationId },
          policy: {
            approvalMode: this.o.approvalMode,
            decider: this.decider(key),
            autoApproveSession: () => this.o.grant?.isActive() ?? false,
          },
          ...(attachments.length > 0
            ? {
                attachments,
                notify: async (line: string) => {
                  this.o.transport.post(conversationId, { role: "system", text: line, final: true });
                },
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
    for (const key of this.active.keys()) {
      await stopRunningTurn(this.o.sessions, key, { router: this.router, approvals: this.registry });
    }
    this.held.clear();
    await Promise.allSettled([...this.inflight]);
  }
}
