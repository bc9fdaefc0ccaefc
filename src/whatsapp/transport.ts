/**
 * WhatsAppTransport: the operator's own account as a MessagingTransport. Inbound, an envelope is a
 * message already folded by the intake (the sender's phone JID, whether the operator wrote it,
 * which chat kind); our own sends are "bot-authored" (dropped before authorization, echo.ts), and
 * authorization is policy.ts, deny by default, every refusal audited. Outbound, every message parley
 * sends is named first and remembered (echo.ts), built by parley from plain fields (so no caption
 * or text ever carries `mentionedJid`, and no link preview makes the host fetch a model's URL), and
 * bounded at 4,096 code points.
 */
import type { AnyMessageContent, WAMessageKey } from "@whiskeysockets/baileys";
import { isLidUser, jidNormalizedUser } from "@whiskeysockets/baileys";
import type { Logger } from "../messaging/base/logger.js";
import { silentLogger } from "../messaging/base/logger.js";
import { defineCapabilities } from "../messaging/channel/capabilities.js";
import type {
  ConfiguredChannelTarget,
  InboundAttachment,
  InboundMessage,
  ResolvedTarget,
  TransportOptions,
} from "../messaging/channel/transport.js";
import { inboundMessage, MessagingTransport } from "../messaging/channel/transport.js";
import type { Attachment } from "../messaging/files/ingest.js";
import type { WhatsAppFileOptions } from "./attachments.js";
import { whatsappAttachment } from "./attachments.js";
import type { SentIds } from "./echo.js";
import { outgoingMessageId } from "./echo.js";
import { displaySafeText, renderChunks, WHATSAPP_MAX_CHARS } from "./format.js";
import type { Operator, Sender } from "./identity.js";
import type { Extracted } from "./media.js";
import type { Admission, ChatKind } from "./policy.js";
import { admitsDirect, admitsGroup } from "./policy.js";
import type { RecentSends } from "./recent-sends.js";
import type { WAMessage, WaSocket } from "./wire.js";

export const WHATSAPP_CAPABILITIES = defineCapabilities({
  streaming: true,
  edit: true,
  reactions: true,
  filesInbound: true,
  // Local images the agent references are sent as image messages after the text.
  filesOutbound: true,
  richBlocks: false,
  threads: false,
  // A grid needs a monospace font and a wide screen; the reduction flattens tables to bullets.
  tableMode: "off",
  nativeTables: false,
  supportsSessionResume: false,
  maxMessageChars: WHATSAPP_MAX_CHARS,
  // A choice, not a platform ceiling: a personal account's client may not render interactive
  // messages, so choices are a numbered list answered by typing.
  maxButtons: 0,
  // No broadcast grammar: a mention needs `mentionedJid`, which parley never sends.
  mentionGrammars: false,
  // No 24-hour window on a personal account.
  supportsProactiveSend: true,
  returnsMessageId: true,
});

/** A message the intake read and folded, ready for the gate. */
export interface WaEnvelope {
  message: WAMessage;
  /** The chat as it arrived (normalized): where an answer goes. */
  chat: string;
  kind: ChatKind;
  sender: Sender;
  /** The linked account wrote it. */
  operator: boolean;
  content: Extracted;
  /** It mentions the account or replies to one of parley's messages. */
  addressed: boolean;
}

/** The platform id a reaction or quote needs, as one string: the message's key. */
export function encodeKey(key: WAMessageKey): string {
  return JSON.stringify({
    id: key.id ?? "",
    fromMe: key.fromMe === true,
    participant: key.participant ?? null,
  });
}

export function decodeKey(chat: string, messageId: string): WAMessageKey {
  const k = JSON.parse(messageId) as { id: string; fromMe: boolean; participant: string | null };
  return {
    remoteJid: chat,
    id: k.id,
    fromMe: k.fromMe,
    ...(k.participant ? { participant: k.participant } : {}),
  };
}

export interface WhatsAppTransportOptions extends TransportOptions {
  /** The open socket, waited for briefly (absent: an unconfigured transport, sends nothing). */
  socket?: () => Promise<WaSocket>;
  operator?: () => Operator | null;
  admission?: Admission;
  sent?: SentIds;
  files?: WhatsAppFileOptions;
  logger?: Logger;
  /** What was sent lately, for a recipient's retry (baileys' getMessage). */
  recent?: RecentSends;
  /** The phone JID a LID stands for, as far as baileys' mapping told us (sync: the egress asks sync). */
  phoneOf?: (lid: string) => string | undefined;
}

export class WhatsAppTransport extends MessagingTransport<WaEnvelope> {
  readonly channelType = "whatsapp";
  override readonly capabilities = WHATSAPP_CAPABILITIES;
  private readonly envelopes = new WeakMap<InboundMessage, WaEnvelope>();
  private readonly log: Logger;

  constructor(private readonly o: WhatsAppTransportOptions) {
    super({ audit: o.audit, drops: o.drops });
    this.log = o.logger ?? silentLogger;
  }

  get operator(): Operator | null {
    return this.o.operator?.() ?? null;
  }

  /** Is this one of the messages parley sent (so its echo is never the operator typing)? */
  isOwnSend(message: WAMessage): boolean {
    return message.key.fromMe === true && (this.o.sent?.has(message.key.id) ?? false);
  }

  envelopeOf(message: InboundMessage): WaEnvelope | undefined {
    return this.envelopes.get(message);
  }

  // ── inbound ───────────────────────────────────────────────────────────────────────────────

  protected isBotAuthored(raw: WaEnvelope): boolean {
    // Our own sends, redelivered or not: dropped before authorization, whatever they say.
    return this.isOwnSend(raw.message);
  }

  protected normalize(raw: WaEnvelope): InboundMessage | null {
    const key = raw.message.key;
    if (!key.id) return null;
    const message = inboundMessage({
      channelType: this.channelType,
      userId: raw.sender.userId,
      conversationId: raw.chat,
      text: raw.content.text,
      attachments: raw.content.files,
      isMention: raw.addressed,
      messageId: encodeKey(key),
    });
    this.envelopes.set(message, raw);
    return message;
  }

  authorize(message: InboundMessage): boolean {
    const raw = this.envelopes.get(message);
    return raw !== undefined && this.admits(raw);
  }

  /** The same gate for an envelope with nothing to normalize (a location, a poll): audited alike. */
  authorizeEnvelope(raw: WaEnvelope): boolean {
    if (this.admits(raw)) return true;
    this.drops.record({ reason: "stranger", user: raw.sender.userId, conversation: raw.chat });
    return false;
  }

  private admits(raw: WaEnvelope): boolean {
    const admission = this.o.admission;
    if (!admission || !this.operator) return false;
    if (raw.kind === "group") return admitsGroup(admission, raw.chat);
    return admitsDirect(admission, raw.kind, raw.sender.userId, raw.operator);
  }

  attachmentSource(attachment: InboundAttachment): Attachment {
    if (!this.o.files) throw new Error("whatsapp: this transport fetches no files");
    return whatsappAttachment(attachment, this.o.files);
  }

  // ── outbound ──────────────────────────────────────────────────────────────────────────────

  /** Send one message parley built; named and remembered before it leaves. Throws when refused. */
  async send(chat: string, content: AnyMessageContent, partKey?: string): Promise<WAMessageKey> {
    const sock = await this.requireSocket();
    const operator = this.operator;
    const id = outgoingMessageId(operator?.pn ?? "", partKey);
    this.o.sent?.remember(id);
    const sent = await sock.sendMessage(chat, content, { messageId: id });
    this.o.recent?.remember(id, sent?.message);
    return { remoteJid: chat, fromMe: true, id };
  }

  /** One bubble of text, already in the dialect and within the cap. */
  sendText(chat: string, text: string, partKey?: string): Promise<WAMessageKey> {
    return this.send(chat, { text: bounded(text), linkPreview: null }, partKey);
  }

  /** Replace what one of our bubbles says (WhatsApp keeps an edit window; the renderer tracks it). */
  async editText(chat: string, key: WAMessageKey, text: string): Promise<void> {
    await this.send(chat, { text: bounded(text), edit: { ...key, remoteJid: chat }, linkPreview: null });
  }

  /** A reaction on a message ("" removes ours); false when it did not land. */
  async react(chat: string, key: WAMessageKey, emoji: string): Promise<boolean> {
    try {
      await this.send(chat, { react: { text: emoji, key: { ...key, remoteJid: chat } } });
      return true;
    } catch (error) {
      this.log.debug("whatsapp: reaction refused", { error: String(error) });
      return false;
    }
  }

  /** An image from validated bytes, its caption screened (never a mention: no `mentions` field). */
  sendImage(chat: string, bytes: Uint8Array, mimetype: string, caption: string, partKey?: string) {
    const safe = displaySafeText(caption).trim();
    return this.send(
      chat,
      { image: Buffer.from(bytes), mimetype, ...(safe ? { caption: bounded(safe) } : {}) },
      partKey,
    );
  }

  /** Chats showing "typing" now: the account is "available" while any does, and only then. */
  private readonly typingIn = new Set<string>();

  /**
   * "typing" in a chat. WhatsApp shows a chat state only from an account that is available, and
   * parley connects unavailable (markOnlineOnConnect false, so the phone keeps notifying): so the
   * account goes available while a turn types and unavailable again when the last one stops
   * (baileys' sendPresenceUpdate, lib/Socket/chats.js: `available`/`unavailable` are presence
   * stanzas, `composing`/`paused` chat states; WhiskeySockets/Baileys README "Presence").
   */
  async typing(chat: string, on: boolean): Promise<void> {
    const sock = await this.requireSocket();
    if (on) {
      // The renderer repeats "composing" (a chat state fades): only the first makes the account available.
      if (this.typingIn.size === 0) await sock.sendPresenceUpdate("available");
      this.typingIn.add(chat);
      await sock.sendPresenceUpdate("composing", chat);
      return;
    }
    if (!this.typingIn.delete(chat)) return;
    await sock.sendPresenceUpdate("paused", chat);
    if (this.typingIn.size === 0) await sock.sendPresenceUpdate("unavailable");
  }

  // ── proactive sends ───────────────────────────────────────────────────────────────────────

  /**
   * May a message nobody asked for go to this chat? The self-chat (by the account's phone JID or its
   * own LID: baileys 7 delivers the self-chat as the LID), or under `allowlist` a listed number,
   * whichever form its chat has: a LID chat is matched through the mapping baileys shared. A LID
   * nobody mapped is refused, and the refusal says why (the egress audits the denial itself).
   */
  override maySendTo(conversationId: string): boolean {
    const operator = this.operator;
    if (!operator || !this.o.admission) return false;
    const jid = jidNormalizedUser(conversationId);
    if (jid === operator.pn || (operator.lid !== undefined && jid === operator.lid))
      return this.o.admission.dmPolicy !== "disabled";
    if (this.o.admission.dmPolicy !== "allowlist") return false;
    const pn = isLidUser(jid) ? this.o.phoneOf?.(jid) : jid;
    if (pn === undefined) {
      this.audit.log("channel.proactive_send_authorize", "denied", {
        channel: this.channelType,
        reason: "unmapped_lid",
      });
      return false;
    }
    return this.o.admission.allowFrom.has(`+${pn.split("@")[0] ?? ""}`);
  }

  /** The operator is reached in their self-chat (another channel's notice lands there). */
  override ownerTarget(): ResolvedTarget | null {
    const operator = this.operator;
    return operator ? { conversationId: operator.pn } : null;
  }

  override configuredTargets(): ConfiguredChannelTarget[] {
    const operator = this.operator;
    const self = operator ? [{ targetId: "self", label: "WhatsApp: message yourself", available: true }] : [];
    const peers =
      this.o.admission?.dmPolicy === "allowlist"
        ? [...this.o.admission.allowFrom].map((n) => ({
            targetId: `dm:${n}`,
            label: `WhatsApp ${n}`,
            available: true,
          }))
        : [];
    return [...self, ...peers];
  }

  override resolveConfiguredTarget(targetId: string): ResolvedTarget | null {
    const operator = this.operator;
    if (targetId === "self") return operator ? { conversationId: operator.pn } : null;
    const number = targetId.startsWith("dm:") ? targetId.slice(3) : "";
    const jid = `${number.slice(1)}@s.whatsapp.net`;
    return number && this.maySendTo(jid) ? { conversationId: jid } : null;
  }

  /** A proactive send: refused ("") unless allowed; split and converted; the last bubble's id. */
  async sendMessage(conversationId: string, content: string): Promise<string> {
    if (!this.o.socket || !this.maySendTo(conversationId)) {
      this.audit.log("channel.proactive_send_authorize", "denied", {
        channel: this.channelType,
        conversation: conversationId,
      });
      return "";
    }
    let last = "";
    for (const chunk of renderChunks(content)) {
      try {
        last = (await this.sendText(conversationId, chunk)).id ?? "";
      } catch (error) {
        this.log.warn("whatsapp: proactive send failed", { error: String(error) });
        return "";
      }
    }
    return last;
  }

  private requireSocket(): Promise<WaSocket> {
    if (!this.o.socket) return Promise.reject(new Error("this WhatsApp transport is not connected"));
    return this.o.socket();
  }
}

/** Every body is checked at the wire too: an oversized one is a bug to report, never cut silently. */
function bounded(text: string): string {
  const length = Array.from(text).length;
  if (length > WHATSAPP_MAX_CHARS)
    throw new Error(`a ${length}-character body reached the wire (WhatsApp takes ${WHATSAPP_MAX_CHARS})`);
  return text;
}
