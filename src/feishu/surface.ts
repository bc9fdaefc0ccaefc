/**
 * Feishu's surface for the hub. Its address names the conversation (a DM keyed on the person's
 * open_id, a group on its chat_id, never one for the other, whatever `dmScope` says about DMs) and
 * the message the exchange answers: every reply, notice and answer part is a reply to it. No
 * receipts (the hub never holds a message here), no files, no buttons: lists are numbered text.
 */
import type { ChannelContext } from "../messaging/channel/contract.js";
import type { TurnParts } from "../messaging/channel/delivery.js";
import type { ChannelSurface, Conversation, TurnStart } from "../messaging/channel/surface.js";
import { buildDmSessionKey, CHAT_TYPE_DIRECT, CHAT_TYPE_FORUM } from "../messaging/session/keys.js";
import type { FeishuDmScope } from "./index.js";
import type { PromptLedger } from "./prompts.js";
import { FeishuRenderer } from "./renderer.js";
import type { FeishuTransport, ReplyTarget } from "./transport.js";

export interface FeishuAddress {
  chatType: "p2p" | "group";
  /** A DM: the person's open_id. A group: its chat_id. One conversation, one route. */
  route: string;
  chatId: string;
  /** The message this exchange answers; absent only for a message that came without an id. */
  replyTo?: string;
}

/** What a Feishu message carries through the hub besides its text: nothing. */
export type FeishuExtra = undefined;

export interface FeishuSurfaceOptions {
  transport: FeishuTransport;
  agentName: string;
  dmScope: FeishuDmScope;
  /** Only a sender known to BE the operator may share the unified bucket: one allow-listed id. */
  soleOperator: boolean;
  prompts: PromptLedger;
  /** The commands as this channel spells them. */
  commands: { new: string; stop: string };
}

export function targetOf(a: FeishuAddress): ReplyTarget {
  return { replyTo: a.replyTo, chatId: a.chatId };
}

export class FeishuSurface implements ChannelSurface<FeishuAddress, FeishuExtra> {
  constructor(
    private readonly o: FeishuSurfaceOptions,
    private readonly ctx: Pick<ChannelContext, "clock" | "logger">,
  ) {}

  conversation(a: FeishuAddress): Conversation {
    return {
      route: a.route,
      direct: a.chatType === "p2p",
      link: { channelType: "feishu", conversationId: a.chatId },
    };
  }

  /** A DM keys on the person (direct); a group on the chat (forum), so it never shares a DM's session. */
  sessionKey(a: FeishuAddress, generation: number): string {
    return buildDmSessionKey("feishu", this.o.agentName, a.route, {
      gen: generation,
      chatType: a.chatType === "p2p" ? CHAT_TYPE_DIRECT : CHAT_TYPE_FORUM,
      dmScope: this.o.dmScope,
      operator: this.o.soleOperator,
    });
  }

  async reply(a: FeishuAddress, text: string, parts?: TurnParts): Promise<boolean> {
    try {
      await this.o.transport.postMarkdown(targetOf(a), text, parts);
      return true;
    } catch (error) {
      this.ctx.logger.warn("feishu: reply failed", { error: String(error) });
      return false;
    }
  }

  newRenderer(a: FeishuAddress, turn: TurnStart<FeishuExtra>): FeishuRenderer {
    return new FeishuRenderer({
      post: (markdown) => this.o.transport.postMarkdown(targetOf(a), markdown, turn.parts),
      prompts: this.o.prompts,
      now: () => this.ctx.clock.now(),
      logger: this.ctx.logger,
      commands: this.o.commands,
    });
  }
}
