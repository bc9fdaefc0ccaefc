/**
 * Weixin's surface for the hub. The address is the peer's iLink user id: iLink links a bot for 1:1
 * chats, so every conversation is direct and keyed on its one person. Replies and notices go through
 * the transport's one path (the peer's context token echoed); the answer is buffered (renderer.ts);
 * media is downloaded and decrypted only when the turn that answers it reads it. Nothing is held
 * with a receipt: a message mid-answer is steered in, or refused with a prompt to resend.
 */
import type { Clock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { TurnParts } from "../messaging/channel/delivery.js";
import type { ChannelSurface, Conversation, TurnStart } from "../messaging/channel/surface.js";
import type { InboundAttachment } from "../messaging/channel/transport.js";
import type { Attachment } from "../messaging/files/ingest.js";
import type { ReceiptSurface } from "../messaging/queue/receipt.js";
import type { AuditSink } from "../messaging/security/audit.js";
import { buildDmSessionKey } from "../messaging/session/keys.js";
import type { MediaSourceOptions } from "./attachments.js";
import { mediaSource, WEIXIN_INGEST_LIMITS } from "./attachments.js";
import { WeixinRenderer } from "./renderer.js";
import type { WeixinTransport } from "./transport.js";
import type { Typing } from "./typing.js";

/** The peer's iLink user id (`…@im.wechat`). */
export type WeixinAddress = string;
/** What a Weixin message carries through the hub besides its text and files: nothing. */
export type WeixinExtra = undefined;

/** The one-shot notice for a message folded into the running answer (WeChat has no reactions). */
export const STEER_NOTICE = "↪️ Added to the answer in progress.";

export interface WeixinSurfaceOptions {
  transport: WeixinTransport;
  typing?: Typing;
  agentName: string;
  clock: Clock;
  logger: Logger;
  audit: AuditSink;
  media: Omit<MediaSourceOptions, "audit" | "timers">;
  commands: { new: string; stop: string };
}

export class WeixinSurface implements ChannelSurface<WeixinAddress, WeixinExtra> {
  readonly ingestLimits = WEIXIN_INGEST_LIMITS;

  constructor(private readonly o: WeixinSurfaceOptions) {}

  conversation(peer: WeixinAddress): Conversation {
    return { route: peer, direct: true, link: { channelType: "weixin", conversationId: peer } };
  }

  sessionKey(peer: WeixinAddress, generation: number): string {
    return buildDmSessionKey("weixin", this.o.agentName, peer, { gen: generation });
  }

  async reply(peer: WeixinAddress, text: string, parts?: TurnParts): Promise<boolean> {
    try {
      await this.o.transport.postMarkdown(peer, text, parts);
      return true;
    } catch (error) {
      this.o.logger.warn("weixin: reply failed", { error: String(error) });
      return false;
    }
  }

  receipts(): ReceiptSurface {
    // Never held behind a live turn (holdsMidTurn false): a receipt would say nothing.
    return { post: async () => "", edit: async () => {} };
  }

  newRenderer(peer: WeixinAddress, turn: TurnStart<WeixinExtra>): WeixinRenderer {
    const typing = this.o.typing;
    return new WeixinRenderer({
      post: (markdown) => this.o.transport.postMarkdown(peer, markdown, turn.parts),
      ...(typing ? { typing: { start: () => typing.start(peer), stop: () => typing.stop(peer) } } : {}),
      now: () => this.o.clock.now(),
      logger: this.o.logger,
      commands: this.o.commands,
    });
  }

  attachments(files: { refs: readonly InboundAttachment[] }): Attachment[] {
    return files.refs.map((f) =>
      mediaSource(f, { ...this.o.media, audit: this.o.audit, timers: this.o.clock }),
    );
  }

  async acknowledgeSteer(peer: WeixinAddress): Promise<void> {
    await this.o.transport.postMarkdown(peer, STEER_NOTICE);
  }
}
