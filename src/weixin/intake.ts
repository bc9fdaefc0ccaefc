/**
 * Weixin's intake: each message of a getupdates batch through the transport's audited gates (bot
 * items dropped first, then the DM policy), the peer's context token kept (durable) once the sender
 * is authorized, then into the hub, which journals it, deduplicated by `message:<message_id>` (the
 * last gate, so strangers never occupy the window; no id, no suppression). `onMessage` resolves
 * once the message is journaled or needed no journal; it rejects only when the journal (or the
 * token's write) failed, and then the poller keeps its cursor so iLink delivers the batch again.
 * A redelivery the journal drops is counted (`duplicate`); the transport counts every other drop.
 */

import type { ConversationHub } from "../messaging/channel/hub.js";
import type { InboundDrops } from "../messaging/channel/inbound-drops.js";
import type { IncomingMessage } from "../messaging/channel/surface.js";
import type { PeerState } from "./peers.js";
import type { WeixinAddress, WeixinExtra } from "./surface.js";
import type { WeixinTransport } from "./transport.js";

export class WeixinIntake {
  constructor(
    private readonly transport: WeixinTransport,
    private readonly hub: ConversationHub<WeixinAddress, WeixinExtra>,
    private readonly peers: PeerState,
    private readonly drops: InboundDrops,
  ) {}

  async onMessage(raw: unknown): Promise<void> {
    const outcome = await this.transport.receive(raw);
    if (outcome.status !== "dispatched") return;
    const message = outcome.message;
    // Always there for a dispatched message (normalize stored it); counted all the same, because
    // no early return of an intake path may drop a message uncounted.
    const read = this.transport.readOf(message);
    if (!read) {
      this.drops.record({
        reason: "unparseable",
        user: message.userId,
        conversation: message.conversationId,
      });
      return;
    }
    const token = typeof read.wire.context_token === "string" ? read.wire.context_token : "";
    // The latest message's token answers it (and anything after): kept before it is journaled.
    if (token) await this.peers.rememberToken(message.userId, token);
    const incoming: IncomingMessage<WeixinAddress, WeixinExtra> = {
      address: message.userId,
      userId: message.userId,
      text: message.text,
      attachments: message.attachments,
      isMention: true,
      ...(message.messageId ? { messageId: message.messageId } : {}),
    };
    const source = { platformId: message.messageId ? `message:${message.messageId}` : null };
    // A redelivery the journal already holds is counted there ("redelivered"), not again here.
    await this.hub.receiveJournaled(incoming, source);
  }
}
