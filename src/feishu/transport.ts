/**
 * FeishuTransport: Feishu/Lark as a MessagingTransport. Inbound, deny by default at every gate, each
 * refusal audited with source `feishu`: a chat type parley serves (`p2p`, `group`), a group only when
 * `allowGroup` is on and the chat is listed, a sender in `allowedOpenIds` (fixed at start), and in a
 * group the bot's own open_id among the mentions. The journal's dedupe comes after all of these (in
 * the hub), so traffic the bot will never serve cannot occupy it. Outbound, every body takes one
 * path (format.ts) and goes out as a reply to the message it answers (`data.message_id` returned),
 * through the delivery ledger when it answers a journaled message, with the part's key as Feishu's
 * `uuid` so a repeated request cannot post twice.
 */
import { createHash } from "node:crypto";
import type { Logger } from "../messaging/base/logger.js";
import { silentLogger } from "../messaging/base/logger.js";
import { defineCapabilities } from "../messaging/channel/capabilities.js";
import type { TurnParts } from "../messaging/channel/delivery.js";
import type {
  ConfiguredChannelTarget,
  InboundMessage,
  ReceiveOutcome,
  TransportOptions,
} from "../messaging/channel/transport.js";
import { inboundMessage, MessagingTransport } from "../messaging/channel/transport.js";
import type { BotIdentity, FeishuRest, OutgoingMessage } from "./client.js";
import { FEISHU_MAX_CHARS, feishuBodies, postMessage } from "./format.js";
import type { ReadContent } from "./inbound.js";
import { readContent, readsMessageType } from "./inbound.js";
import type { FeishuMessageEvent } from "./wire.js";
import { parseMessageEvent } from "./wire.js";

export const FEISHU_CAPABILITIES = defineCapabilities({
  // As the spec declares: a buffered reply per turn, nothing edited, no reactions, files or widgets.
  streaming: false,
  edit: false,
  reactions: false,
  filesInbound: false,
  filesOutbound: false,
  richBlocks: false,
  threads: false,
  // A post's md element draws no table: each row becomes a card.
  tableMode: "cards",
  nativeTables: false,
  supportsSessionResume: false,
  maxMessageChars: FEISHU_MAX_CHARS,
  maxButtons: 0,
  // `<at user_id="all">` notifies a whole group.
  mentionGrammars: true,
  // Every message answers an inbound one: there is no send on nobody's request.
  supportsProactiveSend: false,
  // The spec's version dropped it; a reply answers data.message_id, so parley returns it.
  returnsMessageId: true,
});

/** Where a reply goes: the message it answers, or (for a message that came without an id) its chat. */
export interface ReplyTarget {
  replyTo?: string | undefined;
  chatId: string;
}

export interface GroupPolicy {
  allowGroup: boolean;
  allowedGroupIds: ReadonlySet<string>;
}

export interface FeishuTransportOptions extends TransportOptions {
  /** Absent: an unconfigured transport (authorizes nobody, sends nothing). */
  rest?: FeishuRest;
  allowedOpenIds?: ReadonlySet<string>;
  groups?: GroupPolicy;
  logger?: Logger;
}

/** What normalize read of an event, for the gates and the intake. */
export interface ReadEvent {
  event: FeishuMessageEvent;
  content: ReadContent;
}

/** Conversations whose latest message is remembered as the anchor a send replies to. */
const MAX_ANCHORS = 1000;

export class FeishuTransport extends MessagingTransport<unknown> {
  readonly channelType = "feishu";
  override readonly capabilities = FEISHU_CAPABILITIES;
  readonly rest: FeishuRest | undefined;
  private readonly allowed: ReadonlySet<string>;
  private readonly groups: GroupPolicy;
  private readonly log: Logger;
  private readonly reads = new WeakMap<InboundMessage, ReadEvent>();
  private readonly anchors = new Map<string, string>();
  private bot: BotIdentity | null = null;

  constructor(options: FeishuTransportOptions) {
    super({ audit: options.audit, drops: options.drops });
    this.rest = options.rest;
    // Frozen copies: a decision must not change under a concurrent config edit.
    this.allowed = new Set(options.allowedOpenIds ?? []);
    this.groups = {
      allowGroup: options.groups?.allowGroup ?? false,
      allowedGroupIds: new Set(options.groups?.allowedGroupIds ?? []),
    };
    this.log = options.logger ?? silentLogger;
  }

  /** bot/v3/info answered: mentions of the bot can now be recognised. */
  setIdentity(bot: BotIdentity): void {
    this.bot = bot;
  }

  get identity(): BotIdentity | null {
    return this.bot;
  }

  /** The event behind a normalized message. */
  readOf(message: InboundMessage): ReadEvent | undefined {
    return this.reads.get(message);
  }

  // ── inbound ───────────────────────────────────────────────────────────────────────────────

  /** A message type parley does not read is counted as that (warned once), not as unparseable. */
  override async receive(raw: unknown): Promise<ReceiveOutcome> {
    const event = parseMessageEvent(raw);
    const type = event?.message.message_type ?? "";
    if (!event || readsMessageType(type) || this.isBotAuthored(raw)) return super.receive(raw);
    this.drops.record({
      reason: "unknown_shape",
      shape: `message_type ${type.slice(0, 40)}`,
      ...(event.sender.sender_id?.open_id ? { user: event.sender.sender_id.open_id } : {}),
    });
    return { status: "dropped", reason: "unparseable" };
  }

  protected isBotAuthored(raw: unknown): boolean {
    const event = parseMessageEvent(raw);
    if (!event) return false;
    // Bots and apps are any sender type but a user; the bot's own id is refused either way.
    return event.sender.sender_type !== "user" || event.sender.sender_id?.open_id === this.bot?.openId;
  }

  protected normalize(raw: unknown): InboundMessage | null {
    const event = parseMessageEvent(raw);
    const sender = event?.sender.sender_id?.open_id;
    if (!event || !sender) return null;
    const m = event.message;
    const content = readContent(m.message_type, m.content, m.mentions ?? [], this.bot?.openId ?? null);
    if (!content) return null;
    const message = inboundMessage({
      channelType: this.channelType,
      userId: sender,
      // A DM is its person; a group is its chat.
      conversationId: m.chat_type === "p2p" ? sender : m.chat_id,
      text: content.text,
      attachments: content.files,
      isMention: content.mentionsBot,
      ...(m.message_id ? { messageId: m.message_id } : {}),
    });
    this.reads.set(message, { event, content });
    return message;
  }

  authorize(message: InboundMessage): boolean {
    const read = this.reads.get(message);
    if (!read) return false;
    const { chat_type: chatType, chat_id: chatId } = read.event.message;
    const refuse = (reason: string) => {
      this.audit.log("feishu.chat_gate", "denied", {
        source: "feishu",
        user: message.userId,
        chat: chatId,
        reason,
      });
      return false;
    };
    // A positive list of chat types: anything new Feishu adds is refused until parley knows it.
    if (chatType !== "p2p" && chatType !== "group") return refuse("denied_chat_type");
    if (chatType === "group" && !(this.groups.allowGroup && this.groups.allowedGroupIds.has(chatId)))
      return refuse("denied_group_not_allowed");
    if (!this.allowed.has(message.userId)) return false;
    if (chatType === "group") {
      // Until bot/v3/info answered nobody can be told to have mentioned the bot: answer no one.
      if (!this.bot) return refuse("denied_identity_unknown");
      if (!message.isMention) return refuse("denied_not_mentioned");
    }
    return true;
  }

  /** The latest message of a conversation this transport admitted: what a send can reply to. */
  noteAnchor(conversationId: string, messageId: string): void {
    this.anchors.delete(conversationId);
    this.anchors.set(conversationId, messageId);
    if (this.anchors.size > MAX_ANCHORS) {
      const oldest = this.anchors.keys().next().value;
      if (oldest !== undefined) this.anchors.delete(oldest);
    }
  }

  // ── outbound ──────────────────────────────────────────────────────────────────────────────

  /** Listed so an operator sees them, and unavailable: Feishu replies only to a message it received. */
  override configuredTargets(): ConfiguredChannelTarget[] {
    const reason = "Feishu replies are anchored to a message the user sent; parley sends nothing unasked";
    return [
      ...[...this.allowed].map((id) => ({
        targetId: `dm:${id}`,
        label: `Feishu DM ${id}`,
        available: false,
        reason,
      })),
      ...(this.groups.allowGroup
        ? [...this.groups.allowedGroupIds].map((id) => ({
            targetId: `group:${id}`,
            label: `Feishu group ${id}`,
            available: false,
            reason,
          }))
        : []),
    ];
  }

  /**
   * A message into a conversation: on Feishu, a reply to its latest message this process admitted
   * (`threadId`, when given, names the message to answer instead). "" when there is none to answer
   * or Feishu refused; the id of the last part otherwise.
   */
  async sendMessage(conversationId: string, content: string, threadId?: string): Promise<string> {
    const anchor = threadId ?? this.anchors.get(conversationId);
    if (!this.rest || !anchor) {
      this.audit.log("channel.proactive_send_authorize", "denied", {
        channel: this.channelType,
        conversation: conversationId,
        reason: this.rest ? "no_message_to_answer" : "not_connected",
      });
      return "";
    }
    try {
      return (await this.postMarkdown({ replyTo: anchor, chatId: "" }, content)).at(-1) ?? "";
    } catch (error) {
      this.log.warn("feishu: send failed", { error: String(error) });
      return "";
    }
  }

  /**
   * Markdown as replies, one path for every body: split, display-safe, each a `post`; with `parts`,
   * each goes through the delivery ledger. The ids, in order; throws when a part did not land.
   */
  async postMarkdown(to: ReplyTarget, markdown: string, parts?: TurnParts): Promise<string[]> {
    const ids: string[] = [];
    for (const body of feishuBodies(markdown)) {
      const message = postMessage(body);
      if (!parts) {
        ids.push(await this.send(to, message));
        continue;
      }
      const id = await parts.post(message.content, {
        create: (key) => this.send(to, message, key === undefined ? undefined : uuidOf(key, to)),
        // A resumed turn rewrites the part its first run posted (Feishu edits a bot's own post).
        replace: async (earlier) => {
          await this.requireRest().update(earlier, message);
          return true;
        },
      });
      if (!id) throw new Error("feishu: a part did not land");
      ids.push(id);
    }
    return ids;
  }

  private send(to: ReplyTarget, message: OutgoingMessage, uuid?: string): Promise<string> {
    const rest = this.requireRest();
    return to.replyTo ? rest.reply(to.replyTo, message, uuid) : rest.create(to.chatId, message, uuid);
  }

  private requireRest(): FeishuRest {
    if (!this.rest) throw new Error("feishu transport is not connected");
    return this.rest;
  }
}

/**
 * A part key as Feishu's request uuid (at most 50 characters): the same part of the same answer, the
 * same uuid. The message it answers is part of it: part keys restart with a new store (a data home
 * started empty), and a repeated uuid would make Feishu hand back an hour-old message instead.
 */
export function uuidOf(key: string, to: ReplyTarget): string {
  return createHash("sha256")
    .update(`${to.replyTo ?? to.chatId}\u0000${key}`)
    .digest("hex")
    .slice(0, 40);
}
