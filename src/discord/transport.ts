/**
 * DiscordTransport: Discord as a MessagingTransport. Deny by default against discord.allowedUserIds
 * (snowflake strings), with two audiences: a DM route (the user roster) and a thread route (the
 * allow-listed threads plus the threads autoThread created). The shared base runs
 * ack -> drop bots -> normalize -> authorize -> dispatch and audits every refusal.
 *
 * Discord's guild intents deliver every message the bot can see, so `screen` sets unrelated guild
 * chatter aside BEFORE receive (counted as not addressed); an approved user in an unapproved thread
 * still reaches receive, because that attempt is audit-worthy.
 */

import type { Logger } from "../messaging/base/logger.js";
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
import { oneLine } from "../messaging/text/clip.js";
import type { AttachmentFetchOptions } from "./attachments.js";
import { discordAttachment } from "./attachments.js";
import type { DiscordClient } from "./client.js";
import { discordSafe, splitForDelivery } from "./format.js";
import { CALLBACK_DEFERRED_UPDATE, deferredUpdate } from "./payload.js";
import type { DiscordEnvelope, DiscordMessage } from "./wire.js";
import { INTERACTION_MESSAGE_COMPONENT, interactionUser, THREAD_TYPES } from "./wire.js";

export const DISCORD_CAPABILITIES = defineCapabilities({
  streaming: true,
  edit: true,
  reactions: true,
  // Files users send are downloaded from Discord's CDN by the turn that answers them (attachments.ts).
  filesInbound: true,
  filesOutbound: true,
  richBlocks: true,
  threads: true,
  // Markdown but no table rendering: tables become grids/cards in the outgoing copy.
  tableMode: "auto",
  nativeTables: false,
  maxMessageChars: 2000,
  // One action row of choices: a second row under an answer reads as a form.
  maxButtons: 5,
  mentionGrammars: true,
  supportsProactiveSend: true,
  // Inbound resolves the mirror binding first (SessionBinder): `!sessions` continues a web chat here.
  supportsSessionResume: true,
  returnsMessageId: true,
});

/** The REST calls the transport and renderer make; DiscordClient satisfies it, so does a test double. */
export type DiscordRest = Pick<
  DiscordClient,
  | "createMessage"
  | "editMessage"
  | "addReaction"
  | "removeReaction"
  | "typing"
  | "interactionCallback"
  | "followup"
  | "editOriginal"
  | "getChannel"
  | "startThread"
>;

type Route = "dm" | "thread" | "channel" | "unrelated";

export interface DiscordTransportOptions extends TransportOptions {
  rest: DiscordRest;
  /** Our own user id (READY); messages by it are dropped even if Discord omitted the bot flag. */
  botUserId: () => string;
  allowedUserIds: ReadonlySet<string>;
  allowedThreadIds?: ReadonlySet<string>;
  allowedChannelIds?: ReadonlySet<string>;
  autoThread?: boolean;
  logger: Logger;
  /** How inbound files are fetched (the admitted apiBase origin, timeout); CDN-only by default. */
  attachments?: AttachmentFetchOptions;
  /**
   * Threads parley held a conversation in before this process started (from the session store).
   * autoThread ones are re-admitted only after a lookup shows they still hang off an allowed channel.
   */
  earlierThreads?: ReadonlySet<string>;
}

export class DiscordTransport extends MessagingTransport<DiscordEnvelope> {
  readonly channelType = "discord";
  override readonly capabilities = DISCORD_CAPABILITIES;
  private readonly routes = new WeakMap<InboundMessage, Route>();
  /** Threads that may drive a turn: configured ids Discord confirmed are threads, plus auto-created. */
  private readonly threads = new Set<string>();
  /** Configured ids that turned out not to be threads (looked up once). */
  private readonly notThreads = new Set<string>();
  /** user id -> DM channel id, learned from authorized DMs (proactive targets). */
  private readonly dmChannels = new Map<string, string>();
  private readonly o: DiscordTransportOptions;

  constructor(options: DiscordTransportOptions) {
    super(options);
    this.o = options;
  }

  /**
   * Pre-screen: false for guild traffic that concerns parley in no way (counted as not addressed,
   * before any gate: a stranger's chatter in a channel nobody configured is not a refusal).
   * Confirms a configured thread id with one REST lookup (Discord type 10/11/12) the first time it
   * speaks, so a channel id pasted into allowedThreadIds does not open a whole channel.
   */
  async screen(envelope: DiscordEnvelope): Promise<boolean> {
    if (await this.concerns(envelope)) return true;
    const m = envelope.kind === "message" ? envelope.message : undefined;
    // Counted, not audited one by one: the audit window folds a busy channel's chatter.
    this.drops.record({
      reason: "not_addressed",
      ...(m ? { user: m.author.id, conversation: m.channel_id } : {}),
    });
    return false;
  }

  private async concerns(envelope: DiscordEnvelope): Promise<boolean> {
    if (envelope.kind === "interaction") {
      // A slash command can be the first thing said in a thread after a restart.
      // (`/sessions` is the only way to list in a thread, so it must not need a message first.)
      const cid = envelope.interaction.channel_id;
      if (cid && envelope.interaction.guild_id && this.isUnconfirmedConfiguredThread(cid))
        await this.confirmConfiguredThread(cid);
      else if (cid && this.isUnconfirmedEarlierThread(cid)) await this.restoreAutoThread(cid);
      return true;
    }
    const m = envelope.message;
    if (!m.guild_id) return true;
    const cid = m.channel_id;
    if (this.threads.has(cid) || this.o.allowedChannelIds?.has(cid)) return true;
    if (this.isUnconfirmedConfiguredThread(cid)) {
      await this.confirmConfiguredThread(cid);
      return true;
    }
    if (this.isUnconfirmedEarlierThread(cid)) {
      await this.restoreAutoThread(cid);
      return true;
    }
    return this.o.allowedUserIds.has(m.author.id) && !m.author.bot;
  }

  private isUnconfirmedConfiguredThread(channelId: string): boolean {
    return (
      this.o.allowedThreadIds?.has(channelId) === true &&
      !this.threads.has(channelId) &&
      !this.notThreads.has(channelId)
    );
  }

  private async confirmConfiguredThread(channelId: string): Promise<void> {
    const channel = await this.o.rest.getChannel(channelId);
    if (channel.ok && THREAD_TYPES.has(channel.data.type)) this.threads.add(channelId);
    else if (channel.ok || channel.kind === "permanent") this.notThreads.add(channelId);
  }

  private isUnconfirmedEarlierThread(channelId: string): boolean {
    return (
      this.o.autoThread === true &&
      this.o.earlierThreads?.has(channelId) === true &&
      !this.threads.has(channelId) &&
      !this.notThreads.has(channelId)
    );
  }

  /**
   * An autoThread thread from before a restart. Re-admitted against TODAY's configuration: it must
   * still be a thread whose parent is an allowed channel (an operator who removed the channel closed
   * its threads too). Audited as a grant, like the creation it restores.
   */
  private async restoreAutoThread(threadId: string): Promise<void> {
    const channel = await this.o.rest.getChannel(threadId);
    if (!channel.ok) {
      if (channel.kind === "permanent") this.notThreads.add(threadId);
      return;
    }
    const parent = channel.data.parent_id ?? "";
    if (THREAD_TYPES.has(channel.data.type) && this.o.allowedChannelIds?.has(parent)) {
      this.threads.add(threadId);
      this.audit.log("discord_transport.auto_thread", "granted", {
        reason: "restored",
        parent,
        thread: threadId,
      });
    } else this.notThreads.add(threadId);
  }

  /** Component presses are acknowledged before any work: Discord's window is ~3 s. */
  protected override async ack(raw: DiscordEnvelope): Promise<void> {
    if (raw.kind !== "interaction" || raw.interaction.type !== INTERACTION_MESSAGE_COMPONENT) return;
    const i = raw.interaction;
    const res = await this.o.rest.interactionCallback(i.id, i.token, deferredUpdate());
    if (!res.ok)
      this.o.logger.warn("discord component ack failed", {
        status: res.status,
        callback: CALLBACK_DEFERRED_UPDATE,
      });
  }

  protected isBotAuthored(raw: DiscordEnvelope): boolean {
    if (raw.kind === "interaction") return interactionUser(raw.interaction)?.bot === true;
    const a = raw.message.author;
    return (
      a.bot === true ||
      a.system === true ||
      raw.message.webhook_id !== undefined ||
      a.id === this.o.botUserId()
    );
  }

  private routeOf(channelId: string, guild: boolean): Route {
    if (!guild) return "dm";
    if (this.threads.has(channelId)) return "thread";
    if (this.o.allowedChannelIds?.has(channelId)) return "channel";
    return "unrelated";
  }

  protected normalize(raw: DiscordEnvelope): InboundMessage | null {
    if (raw.kind === "message") return this.normalizeMessage(raw.message);
    const i = raw.interaction;
    const user = interactionUser(i);
    if (!user || !i.channel_id) return null;
    const text =
      i.type === INTERACTION_MESSAGE_COMPONENT
        ? (i.data?.custom_id ?? "")
        : `/${i.data?.name ?? ""} ${(i.data?.options ?? []).map((o) => String(o.value)).join(" ")}`.trim();
    const route = this.routeOf(i.channel_id, i.guild_id !== undefined);
    const message = inboundMessage({
      channelType: this.channelType,
      userId: user.id,
      conversationId: i.channel_id,
      text,
      ...(route === "thread" ? { threadId: i.channel_id } : {}),
      messageId: i.message?.id ?? i.id,
    });
    this.routes.set(message, route);
    return message;
  }

  private normalizeMessage(m: DiscordMessage): InboundMessage {
    const route = this.routeOf(m.channel_id, m.guild_id !== undefined);
    const message = inboundMessage({
      channelType: this.channelType,
      userId: m.author.id,
      conversationId: m.channel_id,
      text: m.content,
      ...(route === "thread" ? { threadId: m.channel_id } : {}),
      messageId: m.id,
      isMention: m.mentions.some((u) => u.id === this.o.botUserId()),
      // RAW descriptors only: the bytes are fetched later, by the turn that answers this message.
      attachments: m.attachments.map((a) => ({
        name: a.filename,
        ref: a.url ?? a.proxy_url ?? "",
        ...(a.content_type ? { mimeType: a.content_type } : {}),
        ...(a.size !== undefined ? { size: a.size } : {}),
      })),
    });
    this.routes.set(message, route);
    return message;
  }

  /**
   * An approved sender, and for guild traffic an exact allowed thread, or an allowed channel with
   * autoThread on (a channel message is never answered in the shared channel itself). A message
   * this transport did not normalize has no known route and is denied.
   */
  authorize(message: InboundMessage): boolean {
    if (!this.o.allowedUserIds.has(message.userId)) return false;
    const route = this.routes.get(message) ?? "unrelated";
    if (route === "dm") {
      this.dmChannels.set(message.userId, message.conversationId);
      return true;
    }
    if (route === "thread") return true;
    return route === "channel" && this.o.autoThread === true;
  }

  /**
   * The byte source for an attachment this transport normalized: its `ref` (the envelope's URL) is
   * fetched host-bound and without the bot token, only when the ingest reads it.
   */
  attachmentSource(attachment: InboundAttachment): Attachment {
    return discordAttachment(attachment, this.o.attachments ?? {});
  }

  /** The route receive recorded for a normalized message (the dispatcher keys sessions on it). */
  routeFor(message: InboundMessage): Route {
    return this.routes.get(message) ?? "unrelated";
  }

  /**
   * autoThread: answer an allowed channel's message in a new public thread made from it. The
   * widening is audited as a GRANT: a new disclosure boundary appears at runtime, and without the
   * record the log would show the turns in the thread but never the decision that admitted it.
   */
  async openThreadFor(message: InboundMessage): Promise<InboundMessage | null> {
    if (this.routes.get(message) !== "channel" || !message.messageId) return null;
    const name = oneLine(message.text, 90) || "parley";
    const res = await this.o.rest.startThread(message.conversationId, message.messageId, name);
    if (!res.ok) {
      this.audit.log("discord_transport.auto_thread", "failed", {
        channel: message.conversationId,
        status: res.status,
      });
      return null;
    }
    const threadId = res.data.id;
    this.threads.add(threadId);
    this.audit.log("discord_transport.auto_thread", "granted", {
      reason: "thread_authorized",
      parent: message.conversationId,
      thread: threadId,
      user: message.userId,
    });
    const routed: InboundMessage = { ...message, conversationId: threadId, threadId };
    this.routes.set(routed, "thread");
    return routed;
  }

  /**
   * Outbound, per route: a thread against the same set inbound is gated on (an auto-created thread
   * from before a restart counts once its first inbound message re-admitted it), a DM against the
   * roster via the principal. A DM route naming no principal (a unified bucket) is refused: an
   * unidentifiable recipient at an egress boundary must not be posted to.
   */
  override maySendTo(
    conversationId: string,
    threadId: string | undefined,
    opts: { principal: string },
  ): boolean {
    if (threadId !== undefined) {
      const ok = this.threads.has(threadId) && threadId === conversationId;
      if (!ok)
        this.audit.log("proactive_send", "refused", { channel: "discord", reason: "thread_not_allowed" });
      return ok;
    }
    if (!opts.principal) {
      this.audit.log("proactive_send", "refused", { channel: "discord", reason: "no_principal" });
      return false;
    }
    const ok = this.o.allowedUserIds.has(opts.principal);
    if (!ok)
      this.audit.log("proactive_send", "refused", { channel: "discord", reason: "principal_not_allowed" });
    return ok;
  }

  override configuredTargets(): ConfiguredChannelTarget[] {
    const users = [...this.o.allowedUserIds].map((id) => {
      const known = this.dmChannels.has(id);
      return {
        targetId: `dm:${id}`,
        label: `Discord DM ${id}`,
        available: known,
        ...(known ? {} : { reason: "the user has not messaged the bot since it started" }),
      };
    });
    const threads = [...this.threads].map((id) => ({
      targetId: `thread:${id}`,
      label: `Discord thread ${id}`,
      available: true,
    }));
    return [...users, ...threads];
  }

  override resolveConfiguredTarget(targetId: string): ResolvedTarget | null {
    if (targetId.startsWith("thread:")) {
      const id = targetId.slice(7);
      return this.threads.has(id) ? { conversationId: id, threadId: id } : null;
    }
    if (targetId.startsWith("dm:")) {
      const user = targetId.slice(3);
      const channel = this.dmChannels.get(user);
      return this.o.allowedUserIds.has(user) && channel ? { conversationId: channel } : null;
    }
    return null;
  }

  /**
   * A whole message, nobody asked for it: display-safe, split fence-safe under the cap, every part
   * sent. Returns the first part's id, or "" when any part did not land.
   */
  async sendMessage(conversationId: string, content: string): Promise<string> {
    let first = "";
    for (const part of splitForDelivery(discordSafe(content))) {
      const res = await this.o.rest.createMessage(conversationId, { content: part });
      if (!res.ok) return "";
      first ||= res.data.id;
    }
    return first;
  }
}
