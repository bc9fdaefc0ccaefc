/**
 * WeComTransport: WeCom as a MessagingTransport. Deny by default: a sender must be in
 * wecom.allowedUsers (userids), or wecom.allowAllUsers must be switched on explicitly, and even then
 * a frame with no userid is refused. One-to-one chats only: sessions are keyed on the userid, so a
 * group message would run inside that user's private session and publish its history to the room;
 * group traffic is refused and audited. Pushes go only to an admitted userid, and only a conversation
 * the user has written to can receive one (warmth is learned from AUTHORIZED inbound only, so a
 * stranger cannot make itself a push target).
 */
import type { Logger } from "../messaging/base/logger.js";
import { silentLogger } from "../messaging/base/logger.js";
import { defineCapabilities } from "../messaging/channel/capabilities.js";
import type {
  ConfiguredChannelTarget,
  InboundMessage,
  ResolvedTarget,
  TransportOptions,
} from "../messaging/channel/transport.js";
import { inboundMessage, MessagingTransport } from "../messaging/channel/transport.js";
import { displaySafeFor } from "../messaging/text/options.js";
import { splitMarkdownSafe } from "../messaging/text/split.js";
import { contentOf } from "./attachments.js";
import type { FrameVerdict } from "./client.js";
import { WECOM_ANSWER_CHARS, WECOM_MAX_REPLY_BYTES, WECOM_MAX_REPLY_CHARS } from "./limits.js";
import type { CallbackFrame } from "./wire.js";

export const WECOM_CAPABILITIES = defineCapabilities({
  // One bubble streamed by replacement: every frame carries the whole text so far.
  streaming: true,
  edit: true,
  reactions: false,
  filesInbound: true,
  // Outbound media needs a chunked upload this channel does not do: local paths stay visible.
  filesOutbound: false,
  // No widget is rendered (template cards need a callback URL, which long-connection mode has not).
  richBlocks: false,
  threads: false,
  // A streamed bubble has no continuation path that could keep a transformed table both whole and safe.
  tableMode: "off",
  nativeTables: false,
  supportsSessionResume: false,
  maxMessageChars: WECOM_MAX_REPLY_CHARS,
  maxMessageBytes: WECOM_MAX_REPLY_BYTES,
  maxButtons: 0,
  // WeCom markdown has @-mentions; the defang costs a zero-width space, a missed one a notification.
  mentionGrammars: true,
  supportsProactiveSend: true,
  // A push answers only an errcode: "" is success, a refusal raises.
  returnsMessageId: false,
});

/** A push that WeCom refused (or that never left): its position when it was part of a longer text. */
export class WeComSendError extends Error {
  constructor(
    message: string,
    readonly verdict: FrameVerdict["kind"],
    readonly part?: { index: number; total: number },
  ) {
    super(message);
    this.name = "WeComSendError";
  }
}

export interface WeComPusher {
  push(chatId: string, content: string): Promise<FrameVerdict>;
}

export interface WeComTransportOptions extends TransportOptions {
  /** The bot's own id: its messages are never a turn. */
  botId?: string;
  allowedUsers?: readonly string[];
  /** The explicit allow-everyone opt-in (never inferred from an empty list). */
  allowAllUsers?: boolean;
  /** Absent: an unconfigured transport (authorizes nobody, sends nothing). */
  pusher?: WeComPusher;
  logger?: Logger;
}

export class WeComTransport extends MessagingTransport<CallbackFrame> {
  readonly channelType = "wecom";
  override readonly capabilities = WECOM_CAPABILITIES;
  private readonly allowed: ReadonlySet<string>;
  private readonly allowAll: boolean;
  /** Userids that wrote to the bot and were admitted, since this process started. */
  private readonly warm = new Set<string>();
  private readonly raws = new WeakMap<InboundMessage, CallbackFrame>();
  private readonly log: Logger;

  constructor(private readonly o: WeComTransportOptions) {
    super({ audit: o.audit, drops: o.drops });
    // Frozen copies: a decision must not change under a concurrent config edit.
    this.allowed = new Set(o.allowedUsers ?? []);
    this.allowAll = o.allowAllUsers === true;
    this.log = o.logger ?? silentLogger;
  }

  /** The callback behind a normalized message (its req_id, response_url). */
  rawOf(message: InboundMessage): CallbackFrame | undefined {
    return this.raws.get(message);
  }

  // ── inbound ───────────────────────────────────────────────────────────────────────────────

  protected isBotAuthored(raw: CallbackFrame): boolean {
    const from = raw.body.from?.userid;
    return typeof from === "string" && from !== "" && (from === raw.body.aibotid || from === this.o.botId);
  }

  protected normalize(raw: CallbackFrame): InboundMessage | null {
    const userid = typeof raw.body.from?.userid === "string" ? raw.body.from.userid : "";
    const { text, attachments } = contentOf(raw.body);
    const message = inboundMessage({
      channelType: this.channelType,
      userId: userid,
      conversationId: userid,
      text,
      attachments,
      // A one-to-one chat with the bot: everything in it is addressed to the bot.
      isMention: true,
      ...(typeof raw.body.msgid === "string" && raw.body.msgid ? { messageId: raw.body.msgid } : {}),
    });
    this.raws.set(message, raw);
    return message;
  }

  authorize(message: InboundMessage): boolean {
    const raw = this.raws.get(message);
    // No sender is nobody, even to allow-all.
    if (!raw || message.userId === "") return false;
    if (raw.body.chattype !== "single") {
      this.audit.log("wecom.chat_gate", "denied", {
        user: message.userId,
        reason: "denied_group_chat",
      });
      return false;
    }
    const ok = this.allowAll || this.allowed.has(message.userId);
    if (ok) this.warm.add(message.userId);
    return ok;
  }

  // ── outbound ──────────────────────────────────────────────────────────────────────────────

  private admitted(userid: string): boolean {
    return this.allowed.has(userid) || (this.allowAll && this.warm.has(userid));
  }

  override maySendTo(
    conversationId: string,
    threadId: string | undefined,
    opts: { principal: string },
  ): boolean {
    // A conversation IS its userid; a session naming someone else is not this conversation's.
    if (threadId !== undefined) return false;
    if (opts.principal !== "" && opts.principal !== conversationId) return false;
    return this.admitted(conversationId);
  }

  override configuredTargets(): ConfiguredChannelTarget[] {
    const ids = new Set([...this.allowed, ...(this.allowAll ? this.warm : [])]);
    return [...ids].map((id) => ({
      targetId: `user:${id}`,
      label: `WeCom user ${id}`,
      available: this.warm.has(id),
      ...(this.warm.has(id)
        ? {}
        : {
            reason:
              "has not written to the bot since the gateway started: WeCom delivers only into a conversation the user opened",
          }),
    }));
  }

  override resolveConfiguredTarget(targetId: string): ResolvedTarget | null {
    // Membership is rechecked; warmth is not (a restart forgets it, and WeCom's refusal says it).
    const id = targetId.startsWith("user:") ? targetId.slice(5) : "";
    return id && this.admitted(id) ? { conversationId: id } : null;
  }

  /**
   * A push, split and made display-safe here (no renderer sits on this path). "" when every part
   * landed; WeComSendError naming the part that did not (the rest is not sent: it would be a
   * fragment with its beginning missing).
   */
  async sendMessage(conversationId: string, content: string, threadId?: string): Promise<string> {
    if (!this.o.pusher || !this.maySendTo(conversationId, threadId, { principal: "" })) {
      this.audit.log("channel.proactive_send_authorize", "denied", {
        channel: this.channelType,
        conversation: conversationId,
      });
      throw new WeComSendError("not an admitted WeCom conversation", "unsent");
    }
    const parts = splitMarkdownSafe(displaySafeFor(content, this.capabilities), WECOM_ANSWER_CHARS);
    for (const [i, part] of parts.entries()) {
      const verdict = await this.o.pusher.push(conversationId, part);
      if (verdict.kind !== "accepted") {
        this.log.warn("wecom: a push was not accepted", {
          verdict: verdict.kind,
          part: i + 1,
          of: parts.length,
        });
        throw new WeComSendError(`part ${i + 1} of ${parts.length} was not delivered`, verdict.kind, {
          index: i + 1,
          total: parts.length,
        });
      }
    }
    return "";
  }
}
