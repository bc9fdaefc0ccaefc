/**
 * TelegramTransport: Telegram as a MessagingTransport. Deny by default twice over: the sender must
 * be in telegram.allowedUserIds AND the chat must pass the chat gate (a DM, or an allow-listed forum
 * Topic). Every body goes out as Telegram-HTML through one path (display redaction at the sink, the
 * 4096 UTF-16 bound), with a plain-text retry if Telegram cannot parse the HTML.
 */

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
import type { OutboundFile } from "../messaging/files/outbound-files.js";
import { splitMarkdownSafe } from "../messaging/text/split.js";
import type { TelegramFileOptions } from "./attachments.js";
import { inboundFilesOf, telegramAttachment } from "./attachments.js";
import { isEntityParseError, isNotModified } from "./errors.js";
import type { BotIdentity, ChatGateOutcome, ForumPolicy } from "./gate.js";
import { addressesBot, forumGateOutcome } from "./gate.js";
import { fitTelegramHtml, htmlVisibleText } from "./html.js";
import {
  isReactionEmoji,
  normalizeReactionEmoji,
  TELEGRAM_MAX_BUTTONS,
  TELEGRAM_SOURCE_CAP,
} from "./limits.js";
import type { TelegramOps, TgCallbackQuery, TgInlineKeyboard, TgMessage, TgUpdate } from "./wire.js";

export const TELEGRAM_CAPABILITIES = defineCapabilities({
  streaming: true,
  edit: true,
  reactions: true,
  // Photos, documents, voice notes, ... reach the agent through the shared ingest (attachments.ts).
  filesInbound: true,
  // Local images the agent references are uploaded as photos after the text (renderer + gates).
  filesOutbound: true,
  richBlocks: true,
  threads: true,
  // Telegram-HTML has no table; a monospace grid (a <pre> block) is the form that reads on a phone.
  tableMode: "grid",
  nativeTables: false,
  supportsSessionResume: false,
  // A UTF-16 cap on the wire; bounding UTF-16 units also bounds code points.
  maxMessageChars: 4096,
  maxButtons: TELEGRAM_MAX_BUTTONS,
  // Telegram has no broadcast mention (@everyone); a defang would only mangle handles.
  mentionGrammars: false,
  supportsProactiveSend: true,
  returnsMessageId: true,
});

export interface TelegramTransportOptions extends TransportOptions {
  /** Absent: an unconfigured transport (authorizes nobody, sends nothing). */
  ops?: TelegramOps;
  allowedUserIds?: ReadonlySet<string>;
  /** The channel's owner (settings.ts ownerOf): where another channel's notice reaches the operator. */
  owner?: string | undefined;
  forum?: ForumPolicy;
  logger?: Logger;
  /** How files users send are downloaded (the token and apiRoot); absent = every file refused. */
  files?: TelegramFileOptions;
}

export interface PostOptions {
  threadId?: string | undefined;
  /** Awaited right before the request leaves (after pacing): the delivery ledger's "sending". */
  onWire?: () => Promise<void>;
  replyMarkup?: TgInlineKeyboard | undefined;
  disableNotification?: boolean;
  replyTo?: number | undefined;
}

export class TelegramTransport extends MessagingTransport<TgUpdate> {
  readonly channelType = "telegram";
  override readonly capabilities = TELEGRAM_CAPABILITIES;
  readonly ops: TelegramOps | undefined;
  private readonly allowed: ReadonlySet<string>;
  private readonly owner: string | undefined;
  private readonly forum: ForumPolicy;
  private readonly log: Logger;
  private readonly files: TelegramFileOptions | undefined;
  private readonly raws = new WeakMap<InboundMessage, TgMessage>();
  private bot: BotIdentity | null = null;

  constructor(options: TelegramTransportOptions) {
    super({ audit: options.audit, drops: options.drops });
    this.ops = options.ops;
    // Frozen copies: a decision must not change under a concurrent config edit.
    this.allowed = new Set(options.allowedUserIds ?? []);
    this.owner = options.owner;
    this.forum = {
      allowForum: options.forum?.allowForum ?? false,
      allowedForumChatIds: new Set(options.forum?.allowedForumChatIds ?? []),
    };
    this.log = options.logger ?? silentLogger;
    this.files = options.files;
  }

  /** getMe landed: mention gating can now resolve. */
  setIdentity(bot: BotIdentity): void {
    this.bot = bot;
  }

  get identity(): BotIdentity | null {
    return this.bot;
  }

  /** The Telegram message behind a normalized one (chat type, ids for reactions). */
  rawOf(message: InboundMessage): TgMessage | undefined {
    return this.raws.get(message);
  }

  // ── inbound ───────────────────────────────────────────────────────────────────────────────

  protected isBotAuthored(raw: TgUpdate): boolean {
    // Anonymous admins and linked-channel posts arrive "from" Telegram's own bot accounts too.
    return raw.message?.from?.is_bot === true || raw.callback_query?.from.is_bot === true;
  }

  protected normalize(raw: TgUpdate): InboundMessage | null {
    const m = raw.message;
    if (!m?.from) return null;
    const message = inboundMessage({
      channelType: this.channelType,
      userId: String(m.from.id),
      conversationId: String(m.chat.id),
      // A file's caption is its text; a media-only message is still a message.
      text: m.text ?? m.caption ?? "",
      ...(threadOf(m) === undefined ? {} : { threadId: threadOf(m) }),
      isMention: addressesBot(m, this.bot),
      messageId: String(m.message_id),
      // RAW descriptors (file_ids) only: the bytes are fetched by the turn that answers the message.
      attachments: inboundFilesOf(m),
    });
    this.raws.set(message, m);
    return message;
  }

  /**
   * The byte source for a file this transport normalized: getFile, then the download from the Bot
   * API's file server, only when the ingest reads it (attachments.ts).
   */
  attachmentSource(attachment: InboundAttachment): Attachment {
    return telegramAttachment(attachment, this.ops, this.files);
  }

  authorize(message: InboundMessage): boolean {
    const raw = this.raws.get(message);
    return this.admits(message.userId, raw?.chat.type ?? "", message.conversationId, message.threadId);
  }

  /** A button press passes the same two gates as a message (the presser, and where the button is). */
  authorizeCallback(query: TgCallbackQuery): query is TgCallbackQuery & { message: TgMessage } {
    const m = query.message;
    const ok =
      m !== undefined && this.admits(String(query.from.id), m.chat.type, String(m.chat.id), threadOf(m));
    if (ok) return true;
    // A press with no message carries no chat to gate (Telegram omits it for an old message).
    this.drops.record({
      reason: m === undefined ? "missing_id" : "stranger",
      user: String(query.from.id),
      ...(m === undefined ? {} : { conversation: String(m.chat.id) }),
      fields: { kind: "callback" },
    });
    return false;
  }

  chatGate(chatType: string, chatId: string, threadId: string | undefined): ChatGateOutcome {
    return forumGateOutcome(chatType, chatId, threadId, this.forum);
  }

  private admits(userId: string, chatType: string, chatId: string, threadId: string | undefined): boolean {
    if (!this.allowed.has(userId)) return false;
    const outcome = this.chatGate(chatType, chatId, threadId);
    if (outcome === "allowed_private") return chatId === userId;
    if (outcome === "allowed_forum") return true;
    this.audit.log("telegram.chat_gate", "denied", { user: userId, chat: chatId, reason: outcome });
    return false;
  }

  // ── outbound ──────────────────────────────────────────────────────────────────────────────

  override maySendTo(conversationId: string, threadId: string | undefined): boolean {
    // A private chat id IS the user id; a Topic goes through the same gate inbound does.
    if (threadId === undefined) return this.allowed.has(conversationId);
    return this.chatGate("supergroup", conversationId, threadId) === "allowed_forum";
  }

  /** The owner's private chat (its id IS the user id); the egress still re-checks maySendTo. */
  override ownerTarget(): ResolvedTarget | null {
    return this.owner !== undefined && this.allowed.has(this.owner) ? { conversationId: this.owner } : null;
  }

  override configuredTargets(): ConfiguredChannelTarget[] {
    return [...this.allowed].map((id) => ({
      targetId: `dm:${id}`,
      label: `Telegram DM ${id}`,
      available: true,
    }));
  }

  override resolveConfiguredTarget(targetId: string): ResolvedTarget | null {
    const id = targetId.startsWith("dm:") ? targetId.slice(3) : "";
    return this.allowed.has(id) ? { conversationId: id } : null;
  }

  /**
   * A proactive send: refused ("") unless maySendTo admits it, then split (fence-balanced) and sent
   * part by part; stops at the first part that did not land, since the rest would be an orphan.
   */
  async sendMessage(conversationId: string, content: string, threadId?: string): Promise<string> {
    if (!this.ops || !this.maySendTo(conversationId, threadId)) {
      this.audit.log("channel.proactive_send_authorize", "denied", {
        channel: this.channelType,
        conversation: conversationId,
      });
      return "";
    }
    let last = "";
    for (const source of splitMarkdownSafe(content, TELEGRAM_SOURCE_CAP)) {
      for (const html of fitTelegramHtml(source)) {
        try {
          last = String(await this.postHtml(conversationId, html, { threadId }));
        } catch (error) {
          this.log.warn("telegram: proactive send failed", { error: String(error) });
          return "";
        }
      }
    }
    return last;
  }

  /** Images nobody asked for (the agent's send_file): photos after any caption, as the renderer sends them. */
  override async sendFiles(
    conversationId: string,
    threadId: string | undefined,
    files: readonly OutboundFile[],
  ): Promise<string> {
    if (!this.ops || !this.maySendTo(conversationId, threadId)) return "";
    return String(await this.sendPhotos(conversationId, threadId, files));
  }

  /** Send one wire-ready HTML body; returns the message id. Throws when Telegram refused it. */
  async postHtml(chatId: string, html: string, opts: PostOptions = {}): Promise<number> {
    const ops = this.requireOps();
    const payload = {
      chat_id: chatId,
      ...(opts.threadId === undefined ? {} : { message_thread_id: Number(opts.threadId) }),
      ...(opts.replyMarkup ? { reply_markup: opts.replyMarkup } : {}),
      ...(opts.disableNotification ? { disable_notification: true } : {}),
      ...(opts.replyTo === undefined
        ? {}
        : { reply_parameters: { message_id: opts.replyTo, allow_sending_without_reply: true } }),
      link_preview_options: { is_disabled: true },
    };
    try {
      const sent = await ops.call<{ message_id: number }>(
        "sendMessage",
        { ...payload, text: html, parse_mode: "HTML" },
        undefined,
        opts.onWire,
      );
      return sent.message_id;
    } catch (error) {
      if (!isEntityParseError(error)) throw error;
      // Our converter only emits nesting tags; if Telegram still refuses, the words matter more.
      this.log.warn("telegram: HTML refused; resending as plain text");
      const sent = await ops.call<{ message_id: number }>(
        "sendMessage",
        { ...payload, text: htmlVisibleText(html) },
        undefined,
        opts.onWire,
      );
      return sent.message_id;
    }
  }

  /** Replace a message's body (and keyboard). An unchanged body is a success, not an error. */
  async editHtml(
    chatId: string,
    messageId: number,
    html: string,
    replyMarkup?: TgInlineKeyboard,
  ): Promise<void> {
    const ops = this.requireOps();
    const payload = {
      chat_id: chatId,
      message_id: messageId,
      link_preview_options: { is_disabled: true },
      ...(replyMarkup ? { reply_markup: replyMarkup } : {}),
    };
    try {
      await ops.call("editMessageText", { ...payload, text: html, parse_mode: "HTML" });
    } catch (error) {
      if (isNotModified(error)) return;
      if (!isEntityParseError(error)) throw error;
      this.log.warn("telegram: HTML refused on edit; retrying as plain text");
      try {
        await ops.call("editMessageText", { ...payload, text: htmlVisibleText(html) });
      } catch (retry) {
        if (!isNotModified(retry)) throw retry;
      }
    }
  }

  /** Drop a message's buttons (an answered prompt, a used keyboard). */
  async clearKeyboard(chatId: string, messageId: number): Promise<void> {
    try {
      await this.requireOps().call("editMessageReplyMarkup", {
        chat_id: chatId,
        message_id: messageId,
        reply_markup: { inline_keyboard: [] },
      });
    } catch (error) {
      if (!isNotModified(error)) throw error;
    }
  }

  /**
   * React to a message; false when refused. An emoji outside the validated set is refused locally
   * (a guaranteed 400 is not worth a round trip); passing the set is necessary, not sufficient,
   * because a chat can narrow its own reactions.
   */
  async react(chatId: string, messageId: number, emoji: string): Promise<boolean> {
    if (!isReactionEmoji(emoji)) {
      this.log.warn("telegram: reaction outside the accepted set refused locally", { emoji });
      return false;
    }
    try {
      await this.requireOps().call("setMessageReaction", {
        chat_id: chatId,
        message_id: messageId,
        reaction: [{ type: "emoji", emoji: normalizeReactionEmoji(emoji) }],
      });
      return true;
    } catch (error) {
      this.log.debug("telegram: reaction refused", { error: String(error) });
      return false;
    }
  }

  /**
   * Photos as their own message(s) after the text, never as a caption (1024 characters, and no
   * keyboard on an album); silent, because the answer already notified. One call per album of up
   * to ten. Throws when Telegram refused it.
   */
  async sendPhotos(
    chatId: string,
    threadId: string | undefined,
    files: readonly OutboundFile[],
  ): Promise<number> {
    const ops = this.requireOps();
    if (!ops.file) throw new Error("telegram: this client cannot upload files");
    const file = ops.file.bind(ops);
    const common = {
      chat_id: chatId,
      disable_notification: true,
      ...(threadId === undefined ? {} : { message_thread_id: Number(threadId) }),
    };
    if (files.length === 1) {
      const [only] = files as [OutboundFile];
      const sent = await ops.call<{ message_id: number }>("sendPhoto", {
        ...common,
        photo: file(only.bytes, only.filename),
      });
      return sent.message_id;
    }
    const sent = await ops.call<{ message_id: number }[]>("sendMediaGroup", {
      ...common,
      media: files.map((f) => ({ type: "photo", media: file(f.bytes, f.filename) })),
    });
    // The album's first message stands for it (what the delivery ledger records).
    return sent[0]?.message_id ?? 0;
  }

  async typing(chatId: string, threadId: string | undefined): Promise<void> {
    await this.requireOps().call("sendChatAction", {
      chat_id: chatId,
      action: "typing",
      ...(threadId === undefined ? {} : { message_thread_id: Number(threadId) }),
    });
  }

  async answerCallback(queryId: string, text?: string): Promise<void> {
    await this.requireOps().call("answerCallbackQuery", {
      callback_query_id: queryId,
      ...(text ? { text } : {}),
    });
  }

  private requireOps(): TelegramOps {
    if (!this.ops) throw new Error("telegram transport is not connected");
    return this.ops;
  }
}

/** A Topic id, only for a real forum Topic message (a reply thread in a plain group is not one). */
export function threadOf(m: TgMessage): string | undefined {
  return m.chat.type === "supergroup" && m.message_thread_id !== undefined
    ? String(m.message_thread_id)
    : undefined;
}
