/**
 * Discord's surface for the hub: its address is where a message was said (a DM, an allow-listed
 * thread, an autoThread-created one) and who said it; everything posts through the REST client,
 * with the mention guard on every body.
 */
import type { ChannelContext } from "../messaging/channel/contract.js";
import type { TurnParts } from "../messaging/channel/delivery.js";
import type { ChannelSurface, Conversation, PickerSurface, TurnStart } from "../messaging/channel/surface.js";
import type { InboundAttachment, InboundMessage } from "../messaging/channel/transport.js";
import type { Attachment } from "../messaging/files/ingest.js";
import type { ReceiptSurface } from "../messaging/queue/receipt.js";
import { buildDmSessionKey } from "../messaging/session/keys.js";
import { DISCORD_SOFT_LIMIT, discordSafe, fitPlatformCap } from "./format.js";
import type { DiscordSettings } from "./index.js";
import { createPart } from "./parts.js";
import { DiscordRenderer } from "./renderer.js";
import type { DiscordRest, DiscordTransport } from "./transport.js";
import { modelRows } from "./widgets.js";
import type { DiscordInteraction } from "./wire.js";

/**
 * A command in an allowed channel (not a thread) would otherwise act on the sender's DM session,
 * which is not the conversation they are looking at.
 */
export const CHANNEL_COMMAND_REFUSAL =
  "Commands act on a conversation: use them inside a thread here (send a message to start one) or in a DM.";

/** The reaction that tells a user their mid-turn message was folded into the running turn. */
export const STEER_RECEIPT_EMOJI = "📥";

/** Where a Discord message was said: the channel (a DM channel or a thread) and the sender. */
export interface DiscordAddress {
  channelId: string;
  /** Set for a guild thread (it is its own channel, so equal to channelId). */
  threadId?: string;
  userId: string;
}

/** What a Discord message carries into the hub: the slash command a reply belongs to. */
export interface DiscordExtra {
  slash?: DiscordInteraction;
}

export function addressOf(message: InboundMessage): DiscordAddress {
  return {
    channelId: message.conversationId,
    ...(message.threadId ? { threadId: message.threadId } : {}),
    userId: message.userId,
  };
}

export interface DiscordSurfaceOptions {
  transport: DiscordTransport;
  rest: DiscordRest;
  settings: DiscordSettings;
  agentName: string;
  throttleMs?: number;
}

export class DiscordSurface implements ChannelSurface<DiscordAddress, DiscordExtra> {
  constructor(
    private readonly o: DiscordSurfaceOptions,
    private readonly ctx: Pick<ChannelContext, "clock" | "logger" | "audit" | "sessions">,
  ) {}

  conversation(a: DiscordAddress): Conversation {
    return {
      // A DM is keyed by its peer (so a proactive send can name its principal); a thread by itself.
      route: a.threadId ? `thread:${a.threadId}` : `dm:${a.userId}`,
      direct: !a.threadId,
      link: {
        channelType: "discord",
        conversationId: a.channelId,
        ...(a.threadId ? { threadId: a.threadId } : {}),
      },
    };
  }

  sessionKey(a: DiscordAddress, generation: number): string {
    return a.threadId
      ? buildDmSessionKey("discord", this.o.agentName, a.threadId, { gen: generation, chatType: "thread" })
      : buildDmSessionKey("discord", this.o.agentName, a.userId, { gen: generation });
  }

  /** True only when every part landed: a resume notice counts as delivered on confirmation alone. */
  async reply(a: DiscordAddress, text: string, parts?: TurnParts): Promise<boolean> {
    return this.post(a.channelId, text, parts);
  }

  async post(channelId: string, text: string, parts?: TurnParts): Promise<boolean> {
    for (const part of fitPlatformCap(discordSafe(text))) {
      const id = parts
        ? await createPart(this.o.rest, channelId, parts, { content: part })
        : await this.o.rest
            .createMessage(channelId, { content: part })
            .then((res) => (res.ok ? res.data.id : ""));
      if (!id) {
        this.ctx.logger.warn("discord reply failed");
        return false;
      }
    }
    return true;
  }

  receipts(a: DiscordAddress): ReceiptSurface {
    const rest = this.o.rest;
    return {
      post: async (text) => {
        const res = await rest.createMessage(a.channelId, { content: discordSafe(text) });
        return res.ok ? res.data.id : "";
      },
      edit: async (id, text) => {
        if (id) await rest.editMessage(a.channelId, id, { content: discordSafe(text) });
      },
    };
  }

  newRenderer(a: DiscordAddress, turn: TurnStart<DiscordExtra>): DiscordRenderer {
    const s = this.o.settings;
    return new DiscordRenderer({
      rest: this.o.rest,
      channelId: a.channelId,
      ...(turn.messageId ? { userMessageId: turn.messageId } : {}),
      toggles: { reactionsEnabled: s.reactionsEnabled, showThinking: s.showThinking },
      audit: this.ctx.audit,
      logger: this.ctx.logger,
      clock: this.ctx.clock,
      ...(this.o.throttleMs !== undefined ? { throttleMs: this.o.throttleMs } : {}),
      uploads: turn.files,
      parts: turn.parts,
      contextUsage: async () => (await this.ctx.sessions.existingProvider(turn.sessionKey))?.contextUsagePct,
    });
  }

  attachments(files: { refs: readonly InboundAttachment[] }): Attachment[] {
    return files.refs.map((ref) => this.o.transport.attachmentSource(ref));
  }

  /** An agent host's reaction (channel-server mode); false when Discord refused it. */
  async react(a: DiscordAddress, messageId: string, emoji: string): Promise<boolean> {
    return (await this.o.rest.addReaction(a.channelId, messageId, emoji)).ok;
  }

  async acknowledgeSteer(a: DiscordAddress, messageId: string): Promise<void> {
    await this.o.rest.addReaction(a.channelId, messageId, STEER_RECEIPT_EMOJI);
  }

  /** Model lists as buttons on an ordinary channel message (an ephemeral reply cannot be edited later). */
  pickers(a: DiscordAddress): PickerSurface {
    const rest = this.o.rest;
    return {
      maxChars: DISCORD_SOFT_LIMIT,
      post: async (text, labels) => {
        const [content] = fitPlatformCap(discordSafe(text));
        const res = await rest.createMessage(a.channelId, {
          content: content ?? "",
          components: modelRows(labels),
        });
        return res.ok ? res.data.id : null;
      },
      settle: async (handle, text) => {
        const [content] = fitPlatformCap(discordSafe(text));
        const res = await rest.editMessage(a.channelId, handle, { content: content ?? "", components: [] });
        if (!res.ok) await this.post(a.channelId, text);
      },
    };
  }
}
