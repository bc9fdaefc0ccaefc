/**
 * SlackTransport: Slack as a MessagingTransport. Owner-only, deny by default: a sender must be in
 * slack.allowedUserIds AND belong to an admitted workspace (slack.allowedTeamIds, else the bot's
 * own), so a Slack Connect user of another workspace is a stranger whatever id they have. A missing
 * user id is refused. Where: DMs always; a channel only when it is in slack.allowedChannelIds, and
 * there only when the bot is mentioned, or in a thread the bot already answers. The shared base
 * runs ack -> drop bots -> normalize -> authorize and audits every refusal.
 *
 * Slack delivers every message the bot can see, so `screen` sets aside (counted, with the reason)
 * what concerns parley in no way (edits and joins, channel chatter outside the bot's threads, and
 * the `message` twin of an `app_mention`, which is handled once, as the mention) BEFORE receive; a
 * mention in a channel that is not allowed still reaches receive, because that attempt is
 * audit-worthy.
 */
import { defineCapabilities } from "../messaging/channel/capabilities.js";
import type { InboundDrop } from "../messaging/channel/inbound-drops.js";
import type {
  ConfiguredChannelTarget,
  InboundMessage,
  ResolvedTarget,
  TransportOptions,
} from "../messaging/channel/transport.js";
import { inboundMessage, MessagingTransport } from "../messaging/channel/transport.js";
import { splitMarkdownSafe } from "../messaging/text/split.js";
import type { SlackClient } from "./client.js";
import { fitCap, mrkdwnSafe, plainFromMrkdwn, SLACK_MAX_TEXT } from "./format.js";
import type { SlackEnvelope, SlackMessageEvent } from "./wire.js";
import { isDirectChannel, SPOKEN_SUBTYPES } from "./wire.js";

export const SLACK_CAPABILITIES = defineCapabilities({
  streaming: true,
  edit: true,
  reactions: true,
  filesInbound: true,
  filesOutbound: true,
  richBlocks: true,
  threads: true,
  // Slack renders no table: the shared reduction flattens pipe tables on the render path.
  tableMode: "off",
  nativeTables: false,
  maxMessageChars: SLACK_MAX_TEXT,
  maxButtons: 5,
  mentionGrammars: true,
  supportsProactiveSend: true,
  returnsMessageId: true,
});

/** The Web API calls the transport, surface and renderer make; SlackClient satisfies it. */
export type SlackApi = Pick<
  SlackClient,
  | "postMessage"
  | "update"
  | "deleteMessage"
  | "postEphemeral"
  | "startStream"
  | "appendStream"
  | "stopStream"
  | "addReaction"
  | "removeReaction"
  | "setStatus"
  | "setTitle"
  | "uploadFile"
>;

type Route = "dm" | "channel" | "other";

/** What normalize learned that authorize needs (kept beside the message, never in it). */
interface Facts {
  route: Route;
  team: string | undefined;
  mention: boolean;
}

export interface SlackTransportOptions extends TransportOptions {
  api: SlackApi;
  /** Our own user and bot ids (auth.test): messages by either are dropped before anything else. */
  botUserId: string;
  botId: string;
  allowedUserIds: ReadonlySet<string>;
  /** Admitted workspaces (the configured list, or the bot's own). */
  allowedTeamIds: ReadonlySet<string>;
  allowedChannelIds: ReadonlySet<string>;
  /** Threads parley answered before this start (their origin links), `channel:thread_ts`. */
  earlierThreads?: Iterable<string>;
}

const threadKey = (channel: string, threadTs: string) => `${channel}:${threadTs}`;

export class SlackTransport extends MessagingTransport<SlackEnvelope> {
  readonly channelType = "slack";
  override readonly capabilities = SLACK_CAPABILITIES;
  private readonly facts = new WeakMap<InboundMessage, Facts>();
  /** Channel threads the bot answers: a reply there needs no mention (allowed users only). */
  private readonly threads: Set<string>;
  /** user id -> their DM channel, learned from authorized DMs (proactive targets). */
  private readonly dms = new Map<string, string>();
  private readonly o: SlackTransportOptions;

  constructor(options: SlackTransportOptions) {
    super(options);
    this.o = options;
    this.threads = new Set(options.earlierThreads ?? []);
  }

  /**
   * Pre-screen: false for traffic that concerns parley in no way, counted with why (before any
   * gate: chatter in a channel is not a refusal).
   */
  screen(envelope: SlackEnvelope): boolean {
    if (envelope.kind !== "event") return true;
    const drop = this.setAside(envelope.event);
    if (drop === null) return true;
    this.drops.record({
      ...drop,
      ...(envelope.event.user ? { user: envelope.event.user } : {}),
      conversation: envelope.event.channel,
      fields: { ...drop.fields, event: envelope.eventId },
    });
    return false;
  }

  private setAside(e: SlackMessageEvent): InboundDrop | null {
    if (!SPOKEN_SUBTYPES.has(e.subtype)) return subtypeDrop(e.subtype);
    if (e.type === "app_mention" || isDirectChannel(e.channel, e.channel_type)) return null;
    // A channel message that mentions the bot arrives again as app_mention: handled once, there.
    if (this.mentions(e.text)) return { reason: "duplicate", fields: { twin: "app_mention" } };
    if (e.thread_ts !== undefined && this.threads.has(threadKey(e.channel, e.thread_ts))) return null;
    return { reason: "not_addressed" };
  }

  /** The bot will answer in this thread: later replies there continue without a mention. */
  answering(channel: string, threadTs: string): void {
    this.threads.add(threadKey(channel, threadTs));
  }

  private mentions(text: string): boolean {
    return this.o.botUserId !== "" && text.includes(`<@${this.o.botUserId}>`);
  }

  private routeOf(channel: string, channelType?: string): Route {
    if (isDirectChannel(channel, channelType)) return "dm";
    return this.o.allowedChannelIds.has(channel) ? "channel" : "other";
  }

  protected isBotAuthored(raw: SlackEnvelope): boolean {
    if (raw.kind !== "event") return false;
    const e = raw.event;
    return (
      e.bot_id !== undefined ||
      e.subtype === "bot_message" ||
      (e.user !== undefined && e.user === this.o.botUserId)
    );
  }

  protected normalize(raw: SlackEnvelope): InboundMessage | null {
    if (raw.kind === "event") return this.normalizeEvent(raw.event);
    if (raw.kind === "action") {
      const a = raw.action;
      const channel = a.channel?.id ?? "";
      // container.thread_ts is read only defensively: the documented place is message.thread_ts.
      const threadTs = a.message?.thread_ts ?? a.container?.thread_ts ?? a.message?.ts;
      if (!channel) return null;
      return this.remember(
        inboundMessage({
          channelType: this.channelType,
          userId: a.user.id,
          conversationId: channel,
          text: a.actions[0]?.action_id ?? "",
          ...(threadTs ? { threadId: threadTs } : {}),
          ...(a.message?.ts ? { messageId: a.message.ts } : {}),
        }),
        // A press is on a message the bot posted, in a conversation it answers: no mention needed.
        { route: this.routeOf(channel), team: a.user.team_id ?? a.team?.id, mention: true },
      );
    }
    const c = raw.command;
    return this.remember(
      inboundMessage({
        channelType: this.channelType,
        userId: c.user_id,
        conversationId: c.channel_id,
        text: `${c.command} ${c.text}`.trim(),
      }),
      {
        route: this.routeOf(c.channel_id, c.channel_name === "directmessage" ? "im" : undefined),
        team: c.team_id,
        mention: true,
      },
    );
  }

  private normalizeEvent(e: SlackMessageEvent): InboundMessage {
    const mention = e.type === "app_mention" || this.mentions(e.text);
    const text = plainFromMrkdwn(
      this.o.botUserId ? e.text.split(`<@${this.o.botUserId}>`).join("").trim() : e.text,
    );
    return this.remember(
      inboundMessage({
        channelType: this.channelType,
        userId: e.user ?? "",
        conversationId: e.channel,
        text,
        // A top-level message opens its own thread: the answer (and the session) live there.
        threadId: e.thread_ts ?? e.ts,
        messageId: e.ts,
        isMention: mention,
        // RAW descriptors only: the bytes are fetched later, by the turn that answers this message.
        attachments: e.files.flatMap((f) => {
          const ref = f.url_private_download ?? f.url_private;
          if (!ref) return [];
          return [
            {
              name: f.name ?? f.title ?? f.id,
              ref,
              ...(f.mimetype ? { mimeType: f.mimetype } : {}),
              ...(f.size !== undefined ? { size: f.size } : {}),
            },
          ];
        }),
      }),
      { route: this.routeOf(e.channel, e.channel_type), team: e.user_team ?? e.team, mention },
    );
  }

  private remember(message: InboundMessage, facts: Facts): InboundMessage {
    this.facts.set(message, facts);
    return message;
  }

  /**
   * An allow-listed sender of an admitted workspace; in a DM always, in an allowed channel when the
   * bot is addressed (a mention, a press) or in a thread it answers. A message this transport did
   * not normalize has no known facts and is denied.
   */
  authorize(message: InboundMessage): boolean {
    const facts = this.facts.get(message);
    if (!facts || !message.userId || !this.o.allowedUserIds.has(message.userId)) return false;
    if (!facts.team || !this.o.allowedTeamIds.has(facts.team)) return false;
    if (facts.route === "dm") {
      this.dms.set(message.userId, message.conversationId);
      return true;
    }
    if (facts.route !== "channel") return false;
    const known =
      message.threadId !== undefined && this.threads.has(threadKey(message.conversationId, message.threadId));
    return facts.mention || known;
  }

  /** Whether a normalized message came from a DM (the hub's `direct`). */
  isDirect(message: InboundMessage): boolean {
    return this.facts.get(message)?.route === "dm";
  }

  /** The sender's workspace, as normalize read it. */
  teamOf(message: InboundMessage): string {
    return this.facts.get(message)?.team ?? "";
  }

  /**
   * Outbound, per route: a channel thread only while its channel is allowed and the bot answers
   * there; a DM against the roster via the principal. A DM naming no principal is refused: an
   * unidentifiable recipient at an egress boundary must not be posted to.
   */
  override maySendTo(
    conversationId: string,
    threadId: string | undefined,
    opts: { principal: string },
  ): boolean {
    const refuse = (reason: string) => {
      this.audit.log("proactive_send", "refused", { channel: "slack", reason });
      return false;
    };
    if (!isDirectChannel(conversationId)) {
      if (!this.o.allowedChannelIds.has(conversationId)) return refuse("channel_not_allowed");
      if (threadId === undefined || !this.threads.has(threadKey(conversationId, threadId)))
        return refuse("thread_not_answered");
      return true;
    }
    if (!opts.principal) return refuse("no_principal");
    if (!this.o.allowedUserIds.has(opts.principal) || this.dms.get(opts.principal) !== conversationId)
      return refuse("principal_not_allowed");
    return true;
  }

  override configuredTargets(): ConfiguredChannelTarget[] {
    return [...this.o.allowedUserIds].map((id) => {
      const known = this.dms.has(id);
      return {
        targetId: `dm:${id}`,
        label: `Slack DM ${id}`,
        available: known,
        ...(known ? {} : { reason: "the user has not messaged the bot since it started" }),
      };
    });
  }

  override resolveConfiguredTarget(targetId: string): ResolvedTarget | null {
    if (!targetId.startsWith("dm:")) return null;
    const user = targetId.slice(3);
    const channel = this.dms.get(user);
    return this.o.allowedUserIds.has(user) && channel ? { conversationId: channel } : null;
  }

  /**
   * A whole message nobody asked for: display-safe mrkdwn, split fence-safe under the cap, every
   * part sent (into `threadId` when given). The first part's ts, or "" when any part did not land.
   */
  async sendMessage(conversationId: string, content: string, threadId?: string): Promise<string> {
    let first = "";
    for (const chunk of splitMarkdownSafe(content, SLACK_MAX_TEXT - 400)) {
      for (const part of fitCap(mrkdwnSafe(chunk))) {
        const res = await this.o.api.postMessage({
          channel: conversationId,
          text: part,
          ...(threadId ? { thread_ts: threadId } : {}),
          unfurl_links: false,
          unfurl_media: false,
        });
        if (!res.ok) return "";
        first ||= res.data.ts;
      }
    }
    return first;
  }
}

/**
 * A message event that is not a person saying something: an edit (parley answers what was sent),
 * a deletion, a bot's post, or a subtype parley does not read (joins, topics…).
 */
function subtypeDrop(subtype: string | undefined): InboundDrop {
  if (subtype === "message_changed") return { reason: "edited" };
  if (subtype === "message_deleted") return { reason: "deleted" };
  if (subtype === "bot_message") return { reason: "bot_echo" };
  return { reason: "unknown_shape", shape: `message/${subtype}` };
}
