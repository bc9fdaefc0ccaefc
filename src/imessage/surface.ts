/**
 * iMessage's surface for the hub. The address is the sender's normalized handle: the handle IS the
 * conversation (one person, one route, one session; groups never get this far). Every body takes one
 * path (`postTo`): flattened to plain text, screened on that flat form, split at 4,000 code points,
 * each part sent in order to the handle and, when it answers a journaled message, through the
 * delivery ledger. iMessage cannot edit, so the receipt for held messages is one message per burst
 * that is never updated, and a resumed turn's part that landed saying the same is not sent again.
 */
import type { ChannelContext } from "../messaging/channel/contract.js";
import type { TurnParts } from "../messaging/channel/delivery.js";
import type { ChannelSurface, Conversation, TurnStart } from "../messaging/channel/surface.js";
import type { ReceiptSurface } from "../messaging/queue/receipt.js";
import { buildDmSessionKey } from "../messaging/session/keys.js";
import { splitFlat } from "./chunks.js";
import { toPlainText } from "./plaintext.js";
import type { Presence } from "./presence.js";
import { IMessageRenderer } from "./renderer.js";
import type { IMessageTransport } from "./transport.js";

/** A normalized handle (an email in lowercase, or a phone number's digits with its `+`). */
export type IMessageAddress = string;
/** What an iMessage carries through the hub besides its text: nothing. */
export type IMessageExtra = undefined;

export interface IMessageSurfaceOptions {
  transport: IMessageTransport;
  presence: Presence;
  agentName: string;
  /** The commands as this channel spells them. */
  commands: { new: string; stop: string };
  typingEveryMs?: number;
}

export class IMessageSurface implements ChannelSurface<IMessageAddress, IMessageExtra> {
  constructor(
    private readonly o: IMessageSurfaceOptions,
    private readonly ctx: Pick<ChannelContext, "clock" | "logger">,
  ) {}

  conversation(handle: IMessageAddress): Conversation {
    return { route: handle, direct: true, link: { channelType: "imessage", conversationId: handle } };
  }

  sessionKey(handle: IMessageAddress, generation: number): string {
    return buildDmSessionKey("imessage", this.o.agentName, handle, { gen: generation });
  }

  async reply(handle: IMessageAddress, text: string, parts?: TurnParts): Promise<boolean> {
    try {
      await this.postTo(handle, text, parts);
      return true;
    } catch (error) {
      this.ctx.logger.warn("imessage: reply failed", { error: String(error) });
      return false;
    }
  }

  /** One message per burst, never edited (there is no edit): later messages of the burst add nothing. */
  receipts(handle: IMessageAddress): ReceiptSurface {
    return {
      post: async (text) => {
        await this.postTo(handle, text);
        return `receipt:${handle}`;
      },
      edit: async () => {},
    };
  }

  newRenderer(handle: IMessageAddress, turn: TurnStart<IMessageExtra>): IMessageRenderer {
    return new IMessageRenderer({
      post: (markdown) => this.postTo(handle, markdown, turn.parts),
      typing: () => this.o.presence.typing(handle),
      clock: this.ctx.clock,
      logger: this.ctx.logger,
      commands: this.o.commands,
      ...(this.o.typingEveryMs === undefined ? {} : { typingEveryMs: this.o.typingEveryMs }),
    });
  }

  /** Markdown to a handle, the one path (see the module note); throws when a part did not land. */
  async postTo(handle: IMessageAddress, markdown: string, parts?: TurnParts): Promise<void> {
    for (const piece of splitFlat(toPlainText(markdown))) {
      if (!parts) {
        await this.o.transport.sendText(handle, piece);
        continue;
      }
      const id = await parts.post(piece, {
        // imsg's ids are best-effort: a landed part without one is named by its stable key.
        create: async (key) => (await this.o.transport.sendText(handle, piece)) || key || "sent",
        // No edit exists: a part whose earlier run said something else is sent anew (never lost).
        replace: async () => false,
      });
      if (!id) throw new Error("imessage: a part did not land");
    }
  }
}
