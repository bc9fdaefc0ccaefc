/**
 * WhatsApp's surface for the hub. An address is a chat and what kind it is: the operator's
 * self-chat (their command surface), a one-to-one chat with an admitted person, or a listed group.
 * Keys: the self-chat may join the operator's unified session (`dmScope: unified`); anyone else
 * always gets their own (the unified bucket carries the operator's history); a group is one session
 * for all its members. Replies are converted, screened and split like every answer.
 */
import type { ChannelContext } from "../messaging/channel/contract.js";
import type { TurnParts } from "../messaging/channel/delivery.js";
import type {
  ChannelSurface,
  Conversation,
  IncomingMessage,
  TurnStart,
} from "../messaging/channel/surface.js";
import type { InboundAttachment } from "../messaging/channel/transport.js";
import type { Attachment } from "../messaging/files/ingest.js";
import type { ReceiptSurface } from "../messaging/queue/receipt.js";
import { buildDmSessionKey, CHAT_TYPE_FORUM } from "../messaging/session/keys.js";
import type { JsonValue } from "../messaging/store/port.js";
import { WHATSAPP_INGEST_LIMITS } from "./attachments.js";
import { renderChunks } from "./format.js";
import type { WhatsAppSettings } from "./index.js";
import type { ChatKind } from "./policy.js";
import type { WhatsAppRendererOptions } from "./renderer.js";
import { WhatsAppRenderer } from "./renderer.js";
import type { WhatsAppTransport } from "./transport.js";
import { decodeKey } from "./transport.js";

export interface WaAddress {
  kind: ChatKind;
  /** The chat's JID, as messages arrive in it: where answers go. */
  chat: string;
  /** One to one: the person's userId (`+4917…`), whichever JID form the chat used. */
  peer?: string;
}

/** What a queued WhatsApp message carries besides its text and files. */
export interface WhatsAppExtra {
  /** Rules mode, nobody addressed the agent: the turn may stay silent. */
  unprompted?: boolean;
}

/** The steer receipt: a reaction on the folded message. */
export const STEER_REACTION = "👌";

export interface WhatsAppSurfaceOptions {
  transport: WhatsAppTransport;
  agentName: string;
  dmScope: WhatsAppSettings["dmScope"];
  renderer?: Partial<WhatsAppRendererOptions>;
  /** A group's unprompted answer was delivered (its cooldown starts). */
  onUnpromptedDelivered?: (group: string) => void;
  /** Whether a group may hear an unprompted answer now (its cooldown has passed). */
  unpromptedMaySpeak?: (group: string) => boolean;
  resumedAgeMs?: number;
}

/** One spelling of "this conversation": the generation bucket and the key scope at once. */
export function routeOf(a: WaAddress): string {
  if (a.kind === "self") return "self";
  if (a.kind === "group") return `group:${a.chat}`;
  return `dm:${a.peer ?? a.chat}`;
}

export class WhatsAppSurface implements ChannelSurface<WaAddress, WhatsAppExtra> {
  readonly ingestLimits = WHATSAPP_INGEST_LIMITS;

  constructor(
    private readonly o: WhatsAppSurfaceOptions,
    private readonly ctx: Pick<ChannelContext, "clock" | "logger">,
  ) {}

  conversation(a: WaAddress): Conversation {
    return {
      route: routeOf(a),
      direct: a.kind !== "group",
      link: { channelType: "whatsapp", conversationId: a.chat },
    };
  }

  sessionKey(a: WaAddress, generation: number): string {
    const agent = this.o.agentName;
    if (a.kind === "group")
      return buildDmSessionKey("whatsapp", agent, a.chat, { gen: generation, chatType: CHAT_TYPE_FORUM });
    if (a.kind === "self") {
      const self = (this.o.transport.operator?.userId ?? "self").replace(/:/g, "-");
      return buildDmSessionKey("whatsapp", agent, self, {
        gen: generation,
        dmScope: this.o.dmScope,
        operator: true,
      });
    }
    // Never the unified bucket: it carries the operator's own conversation.
    return buildDmSessionKey("whatsapp", agent, (a.peer ?? a.chat).replace(/:/g, "-"), { gen: generation });
  }

  async reply(a: WaAddress, text: string, parts?: TurnParts): Promise<boolean> {
    const t = this.o.transport;
    for (const chunk of renderChunks(text)) {
      try {
        if (!parts) await t.sendText(a.chat, chunk);
        else
          await parts.post(chunk, {
            create: async (key) => (await t.sendText(a.chat, chunk, key)).id ?? null,
            replace: async (earlier) => {
              await t.editText(a.chat, { remoteJid: a.chat, fromMe: true, id: earlier }, chunk);
              return true;
            },
          });
      } catch (error) {
        this.ctx.logger.warn("whatsapp: reply failed", { error: String(error) });
        return false;
      }
    }
    return true;
  }

  receipts(a: WaAddress): ReceiptSurface {
    const t = this.o.transport;
    return {
      post: async (text) => (await t.sendText(a.chat, renderChunks(text)[0] ?? "…")).id ?? "",
      // Edited, never deleted: the receipt is the record that a held message was accepted.
      edit: async (id, text) =>
        t.editText(a.chat, { remoteJid: a.chat, fromMe: true, id }, renderChunks(text)[0] ?? "…"),
    };
  }

  newRenderer(a: WaAddress, turn: TurnStart<WhatsAppExtra>): WhatsAppRenderer {
    // A burst is unprompted only when every message in it was.
    const unprompted = turn.extras.length > 0 && turn.extras.every((e) => e?.unprompted === true);
    return new WhatsAppRenderer(this.o.transport, {
      chat: a.chat,
      timers: this.ctx.clock,
      now: () => this.ctx.clock.now(),
      logger: this.ctx.logger,
      messageId: turn.messageId,
      unprompted,
      ...(unprompted
        ? {
            onDelivered: () => this.o.onUnpromptedDelivered?.(a.chat),
            maySpeak: () => this.o.unpromptedMaySpeak?.(a.chat) ?? true,
          }
        : {}),
      parts: turn.parts,
      uploads: turn.files,
      ...(this.o.resumedAgeMs !== undefined ? { resumedAgeMs: this.o.resumedAgeMs } : {}),
      ...this.o.renderer,
    });
  }

  attachments(files: { refs: readonly InboundAttachment[] }): Attachment[] {
    return files.refs.map((f) => this.o.transport.attachmentSource(f));
  }

  async acknowledgeSteer(a: WaAddress, messageId: string): Promise<void> {
    await this.o.transport.react(a.chat, decodeKey(a.chat, messageId), STEER_REACTION);
  }

  journalExtra(extra: WhatsAppExtra): JsonValue | undefined {
    return extra.unprompted ? { unprompted: true } : undefined;
  }

  reviveExtra(data: JsonValue): WhatsAppExtra | undefined {
    return typeof data === "object" && data !== null && !Array.isArray(data) && data.unprompted === true
      ? { unprompted: true }
      : undefined;
  }
}

export type WhatsAppIncoming = IncomingMessage<WaAddress, WhatsAppExtra>;
