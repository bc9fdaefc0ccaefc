/**
 * The web chat's intake: frames from the page through the transport's audited gate into the hub.
 * A bad frame is refused visibly, counted and audited (so is a redelivered one); files wait with the queued message as bytes. A
 * message is journaled (files included) before the page is told "accepted": until then the page
 * keeps it and sends it again after a reconnect, and the journal drops the copy it already has.
 */
import type { ChannelContext } from "../messaging/channel/contract.js";
import type { ConversationHub } from "../messaging/channel/hub.js";
import type { Connection } from "./client.js";
import type { ClientFrame, FrameRefusal, Upload } from "./protocol.js";
import type { WebChatExtra, WebChatSurface } from "./surface.js";
import type { WebChatTransport } from "./transport.js";
/** Frames from the page, through the transport's gate into the hub. */
export class WebChatFrames {
  constructor(
    private readonly transport: WebChatTransport,
    private readonly surface: WebChatSurface,
    private readonly hub: ConversationHub<string, WebChatExtra>,
    private readonly ctx: Pick<ChannelContext, "logger" | "drops">,
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

  /** A refused frame: counted and audited as a drop, and the page is told why. The connection stays up. */
  handleBadFrame(conn: Connection, refusal: FrameRefusal): void {
    const unknown = refusal.kind === "unknown_type";
    this.ctx.drops.record({
      reason: unknown ? "unknown_shape" : refusal.kind,
      conversation: conn.conversationId,
      ...(refusal.shape !== undefined ? { shape: refusal.shape } : {}),
    });
    const malformed = unknown || refusal.kind === "bad_frame";
    const message = malformed ? `Bad frame: ${refusal.reason}` : `Not sent: ${refusal.reason}.`;
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
    const clientId = frame.id;
    const showUser = (turn: string | undefined) =>
      t.post(
        id,
        {
          role: "user",
          text: message.text,
          final: true,
          ...(uploads.length > 0 ? { files: uploads.map((u) => u.name) } : {}),
        },
        turn ? { id: `${turn}:user`, turn } : {},
      );
    let extra: WebChatExtra | undefined;
    if (uploads.length > 0) {
      const key = this.hub.keyOf(id);
      extra = this.surface.hold(key, uploads) ?? undefined;
      if (!extra) {
        this.ctx.drops.record({ reason: "uploads_held", conversation: id });
        showUser(undefined);
        t.post(id, {
          role: "system",
          text: "⚠️ Not sent: too many files are already waiting for the running turn. Send this again when it has finished.",
          final: true,
        });
        // Refused visibly: the page must not keep sending it.
        if (clientId) conn.send({ type: "accepted", id: clientId });
        return;
      }
    }
    try {
      await this.hub.receive(
        {
          address: id,
          userId: message.userId,
          text: message.text,
          attachments: message.attachments,
          ...(extra ? { extra } : {}),
          // A pressed chip is the model's own label: content, never a command.
          interpretCommands: frame.type === "message",
        },
        // Scoped by conversation: the page chooses its ids.
        { platformId: clientId ? `${id}:${clientId}` : null },
        {
          onAccepted: (ticket) => {
            // A redelivery was shown (and answered) already; it only needs its acknowledgement again
            // (the journal counted it as "redelivered").
            if (ticket === null && extra) this.surface.release(extra.held);
            if (ticket !== null) showUser(ticket?.turnId);
            if (clientId) conn.send({ type: "accepted", id: clientId });
          },
        },
      );
    } catch (error) {
      // Never taken by a turn: stop counting it.
      if (extra) this.surface.release(extra.held);
      throw error;
    }
  }
}
