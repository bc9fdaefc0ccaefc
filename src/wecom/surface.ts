/**
 * WeCom's surface for the hub: the address is the user (one-to-one only) plus the message's own
 * reply handles (its req_id, its response_url). Replies, notices and refusals are pushes first
 * (outbox.ts); the answer streams in a bubble (renderer.ts); files are decrypted only when the turn
 * that answers them reads them (attachments.ts). Nothing is held for later with a receipt: a message
 * waits only across the instant between two turns, so its receipt says nothing.
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
import { displaySafeFor } from "../messaging/text/options.js";
import { splitMarkdownSafe } from "../messaging/text/split.js";
import { distinctNames, mediaSource, WECOM_INGEST_LIMITS } from "./attachments.js";
import { WECOM_ANSWER_CHARS } from "./limits.js";
import type { OriginPolicy } from "./origins.js";
import type { WeComAddress, WeComWire } from "./outbox.js";
import { Outbox } from "./outbox.js";
import { WeComRenderer } from "./renderer.js";
import type { ResponseUrl } from "./response-url.js";
import { WECOM_CAPABILITIES } from "./transport.js";

/** What a queued WeCom message carries besides its text and files: nothing. */
export type WeComExtra = undefined;

/** The one-shot notice for a message folded into the running answer (WeCom has no reactions). */
export const STEER_NOTICE = "↪️ Added to the answer in progress.";

export interface WeComSurfaceOptions {
  wire: WeComWire;
  responseUrl: ResponseUrl;
  origins: OriginPolicy;
  agentName: string;
  clock: Clock;
  logger: Logger;
  audit: AuditSink;
  throttleMs?: number;
}

export class WeComSurface implements ChannelSurface<WeComAddress, WeComExtra> {
  readonly ingestLimits = WECOM_INGEST_LIMITS;

  constructor(private readonly o: WeComSurfaceOptions) {}

  conversation(a: WeComAddress): Conversation {
    return { route: a.userid, direct: true, link: { channelType: "wecom", conversationId: a.userid } };
  }

  sessionKey(a: WeComAddress, generation: number): string {
    return buildDmSessionKey("wecom", this.o.agentName, a.userid, { gen: generation });
  }

  private outbox(a: WeComAddress, parts?: TurnParts): Outbox {
    let n = 0;
    return new Outbox({
      wire: this.o.wire,
      responseUrl: this.o.responseUrl,
      address: a,
      logger: this.o.logger,
      ...(parts ? { parts } : {}),
      streamId: () => (parts ? parts.nextKey() : `reply-${this.o.clock.now().toString(36)}-${++n}`),
    });
  }

  /** Markdown as pushes (then a sealed bubble, then the response_url); false when a part did not land. */
  async reply(a: WeComAddress, text: string, parts?: TurnParts): Promise<boolean> {
    const outbox = this.outbox(a, parts);
    const safe = displaySafeFor(text, WECOM_CAPABILITIES);
    for (const piece of splitMarkdownSafe(safe, WECOM_ANSWER_CHARS))
      if (!(await outbox.say(piece))) return false;
    return true;
  }

  receipts(): ReceiptSurface {
    // Held only until the session frees (never behind a live turn): nothing worth a message.
    return { post: async () => "", edit: async () => {} };
  }

  newRenderer(a: WeComAddress, turn: TurnStart<WeComExtra>): WeComRenderer {
    return new WeComRenderer({
      wire: this.o.wire,
      outbox: this.outbox(a, turn.parts),
      address: a,
      clock: this.o.clock,
      logger: this.o.logger,
      audit: this.o.audit,
      parts: turn.parts,
      ...(this.o.throttleMs !== undefined ? { throttleMs: this.o.throttleMs } : {}),
    });
  }

  attachments(files: { refs: readonly InboundAttachment[] }): Attachment[] {
    return distinctNames(files.refs).map((f) =>
      mediaSource(f, { origins: this.o.origins, audit: this.o.audit, timers: this.o.clock }),
    );
  }

  async acknowledgeSteer(a: WeComAddress): Promise<void> {
    await this.outbox(a).say(STEER_NOTICE);
  }
}
