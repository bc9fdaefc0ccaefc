/**
 * The web chat on the kit: its address is the page's conversation id, its surface posts bubbles,
 * and every frame goes through the transport's audited gate into the shared ConversationHub. Files
 * arrive decoded in the message frame: they wait with the queued message as in-memory byte sources
 * (bounded per session) and only the turn that answers it writes, hands over and deletes them.
 */
import type { ChannelContext } from "../messaging/channel/contract.js";
import type { ConversationHub } from "../messaging/channel/hub.js";
import type { ChannelSurface, Conversation, TurnStart } from "../messaging/channel/surface.js";
import type { Attachment } from "../messaging/files/ingest.js";
import { bytesAttachment } from "../messaging/files/ingest.js";
import type { ReceiptSurface } from "../messaging/queue/receipt.js";
import { buildDmSessionKey } from "../messaging/session/keys.js";
import type { Connection } from "./client.js";
import type { ClientFrame, FrameRefusal, Upload } from "./protocol.js";
import { WebChatRenderer } from "./renderer.js";
import type { WebChatTransport } from "./transport.js";

/**
 * Bytes of files one session may hold in its mid-turn queue (they wait in memory until the turn
 * that answers them). A message whose files would pass it is refused, visibly.
 */
export const DEFAULT_MAX_HELD_UPLOAD_BYTES = 100 * 1024 * 1024;

/** What a queued web chat message carries: its files as byte sources, and their held share. */
export interface WebChatExtra {
  files: Attachment[];
  held: { key: string; bytes: number };
}

export interface WebChatSurfaceOptions {
  transport: WebChatTransport;
  agentName: string;
  throttleMs?: number;
  maxHeldUploadBytes?: number;
}

export class WebChatSurface implements ChannelSurface<string, WebChatExtra> {
  /** Per session, the bytes of files submitted and not yet taken by a turn. */
  private readonly held = new Map<string, number>();
  readonly capabilities;

  constructor(
    private readonly o: WebChatSurfaceOptions,
    private readonly ctx: Pick<ChannelContext, "clock">,
  ) {
    this.capabilities = o.transport.capabilities;
  }

  conversation(conversationId: string): Conversation {
    return { route: conversationId, direct: true, link: { channelType: "webchat", conversationId } };
  }

  sessionKey(conversationId: string, generation: number): string {
    return buildDmSessionKey("webchat", this.o.agentName, conversationId, { gen: generation });
  }

  async reply(conversationId: string, text: string): Promise<boolean> {
    this.o.transport.post(conversationId, { role: "system", text, final: true });
    return true;
  }

  receipts(conversationId: string): ReceiptSurface {
    const t = this.o.transport;
    return {
      post: async (text) => t.post(conversationId, { role: "receipt", text, final: false }),
      edit: async (id, text) => {
        t.edit(conversationId, id, { text, final: !text.startsWith("⏳") });
      },
    };
  }

  newRenderer(conversationId: string, _turn: TurnStart<WebChatExtra>): WebChatRenderer {
    return new WebChatRenderer(this.o.transport, conversationId, {
      timers: this.ctx.clock,
      now: () => this.ctx.clock.now(),
      ...(this.o.throttleMs !== undefined ? { throttleMs: this.o.throttleMs } : {}),
    });
  }

  attachments(files: { extras: readonly (WebChatExtra | undefined)[] }): Attachment[] {
    // Taken by the turn: they no longer count against the session's held bound.
    for (const extra of files.extras) if (extra) this.release(extra.held);
    return files.extras.flatMap((extra) => extra?.files ?? []);
  }

  /** Count a message's files against the session's held bound; null when they would pass it. */
  hold(key: string, uploads: readonly Upload[]): WebChatExtra | null {
    const bytes = uploads.reduce((n, u) => n + u.data.length, 0);
    const waiting = this.held.get(key) ?? 0;
    if (waiting + bytes > (this.o.maxHeldUploadBytes ?? DEFAULT_MAX_HELD_UPLOAD_BYTES)) return null;
    this.held.set(key, waiting + bytes);
    return {
      // The browser's type is kept as a claim only: the shared ingest classifies by the bytes.
      files: uploads.map((u) => bytesAttachment(u.name, u.data, u.mime || undefined)),
      held: { key, bytes },
    };
  }

  release(held: { key: string; bytes: number }): void {
    const left = (this.held.get(held.key) ?? 0) - held.bytes;
    if (left > 0) this.held.set(held.key, left);
    else this.held.delete(held.key);
  }

  /** /stop dropped the queue, and with it the files held for it. */
  dropHeld(key: string): void {
    this.held.delete(key);
  }
}

/** Frames from the page, through the transport's gate into the hub. */
export class WebChatFrames {
  constructor(
    private readonly transport: WebChatTransport,
    private readonly surface: WebChatSurface,
    private readonly hub: ConversationHub<string, WebChatExtra>,
    private readonly ctx: Pick<ChannelContext, "audit" | "logger">,
  ) {}

  /** Turns run in the background; the socket is never blocked on one. */
  handleFrame(conn: Connection, frame: ClientFrame): void {
    void this.hub.track(
      this.route(conn, frame).catch((error: unknown) => {
        this.ctx.logger.error("webchat dispatch failed", { error: String(error) });
        conn.send({ type: "error", message: "Something went wrong handling that message." });
      }),
    );
  }

  /** A refused frame: audited as a drop, and the page is told why. The connection stays up. */
  handleBadFrame(conn: Connection, refusal: FrameRefusal): void {
    this.ctx.audit.log("inbound", "dropped", {
      channel: "webchat",
      reason: refusal.kind,
      conversation: conn.conversationId,
    });
    const message =
      refusal.kind === "bad_frame" ? `Bad frame: ${refusal.reason}` : `Not sent: ${refusal.reason}.`;
    conn.send({ type: "error", message });
  }

  private async route(conn: Connection, frame: ClientFrame): Promise<void> {
    const t = this.transport;
    const id = conn.conversationId;
    if (frame.type === "press") {
      const outcome = await this.hub.press(id, frame);
      if (!outcome.ok) t.post(id, { role: "system", text: outcome.text, final: true });
      return;
    }
    const uploads: Upload[] = frame.type === "message" ? (frame.files ?? []) : [];
    const outcome = await t.receive({
      principal: conn.principal,
      conversationId: id,
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
    if (outcome.status !== "dispatched") return;
    const message = outcome.message;
    t.post(id, {
      role: "user",
      text: message.text,
      final: true,
      ...(uploads.length > 0 ? { files: uploads.map((u) => u.name) } : {}),
    });
    let extra: WebChatExtra | undefined;
    if (uploads.length > 0) {
      const key = this.hub.keyOf(id);
      extra = this.surface.hold(key, uploads) ?? undefined;
      if (!extra) {
        this.ctx.audit.log("inbound", "dropped", {
          channel: "webchat",
          reason: "uploads_held",
          conversation: id,
        });
        t.post(id, {
          role: "system",
          text: "⚠️ Not sent: too many files are already waiting for the running turn. Send this again when it has finished.",
          final: true,
        });
        return;
      }
    }
    try {
      await this.hub.handle({
        address: id,
        userId: message.userId,
        text: message.text,
        attachments: message.attachments,
        ...(extra ? { extra } : {}),
        // A pressed chip is the model's own label: content, never a command.
        interpretCommands: frame.type === "message",
      });
    } catch (error) {
      // Never taken by a turn: stop counting it.
      if (extra) this.surface.release(extra.held);
      throw error;
    }
  }
}
