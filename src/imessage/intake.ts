/**
 * iMessage's intake: each watched row through the transport's gates (is_from_me, group, allow-list;
 * see transport.ts), then the own-message ledger LAST, then into the hub, which journals it
 * (deduplicated by guid) before this resolves, so the feed moves its cursor only past what the
 * journal holds. The turn runs after; the row is marked read once it is journaled.
 */
import type { ChannelContext } from "../messaging/channel/contract.js";
import type { ConversationHub } from "../messaging/channel/hub.js";
import type { IncomingMessage } from "../messaging/channel/surface.js";
import type { Presence } from "./presence.js";
import type { IMessageAddress, IMessageExtra } from "./surface.js";
import type { IMessageTransport } from "./transport.js";
import type { ImsgMessage } from "./wire.js";

export class IMessageIntake {
  constructor(
    private readonly transport: IMessageTransport,
    private readonly hub: ConversationHub<IMessageAddress, IMessageExtra>,
    private readonly presence: Presence,
    private readonly ctx: Pick<ChannelContext, "logger" | "drops">,
  ) {}

  /** Settles once the row is journaled or needed no journal; rejects when the journal refused it. */
  async onRow(row: ImsgMessage): Promise<void> {
    const outcome = await this.transport.receive(row);
    if (outcome.status !== "dispatched") return;
    if (this.transport.isOwnEcho(row)) {
      this.ctx.drops.record({ reason: "own_echo", fields: { guid: row.guid } });
      return;
    }
    const message = outcome.message;
    const incoming: IncomingMessage<IMessageAddress, IMessageExtra> = {
      address: message.conversationId,
      userId: message.userId,
      text: message.text,
      messageId: row.guid,
    };
    await new Promise<void>((resolve, reject) => {
      let journaled = false;
      this.hub
        .receive(
          incoming,
          { platformId: `guid:${row.guid}` },
          {
            // A replay the window no longer knew is counted by the journal ("redelivered").
            onAccepted: () => {
              journaled = true;
              resolve();
            },
          },
        )
        .then(
          ({ turn }) => {
            // Settled already for anything journaled; a command or a refusal never reaches onAccepted.
            resolve();
            void this.hub.track(turn);
          },
          (error: unknown) => {
            if (!journaled) reject(error);
            else this.ctx.logger.error("imessage: routing a message failed", { error: String(error) });
          },
        );
    });
    void this.presence.read(message.conversationId);
  }
}
