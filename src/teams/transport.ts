/**
 * TeamsTransport: Microsoft Teams as a MessagingTransport. It runs only after the SDK validated
 * the activity's token, and adds the gates the token cannot: the channel must be `msteams` (Web
 * Chat and Direct Line reach the same endpoint with a token that passes every check, and on Direct
 * Line the client composes `from`, so a negative test would hand a sender-chosen identity to the
 * allow-list); the serviceUrl must be an allowed Connector host and equal the token's claim (the
 * reply carries the bot's token there); the conversation must be personal (a group chat or a
 * channel would show tool output to people the allow-list never admitted). Each refusal is
 * audited before authorization; then the shared base drops the bot's own activities, normalizes
 * and authorizes against teams.allowedUsers (deny by default; the identity form was decided by
 * people.ts before this).
 */
import type { Logger } from "../messaging/base/logger.js";
import { defineCapabilities } from "../messaging/channel/capabilities.js";
import type {
  ConfiguredChannelTarget,
  InboundMessage,
  ResolvedTarget,
  TransportOptions,
} from "../messaging/channel/transport.js";
import { inboundMessage, MessagingTransport } from "../messaging/channel/transport.js";
import { inboundFilesOf } from "./attachments.js";
import { teamsSendErrorOf } from "./errors.js";
import { messageText } from "./quote.js";
import type { TeamsRoutes } from "./routes.js";
import type { TeamsActivity, TeamsEnvelope } from "./wire.js";

export const TEAMS_CAPABILITIES = defineCapabilities({
  streaming: true,
  edit: true,
  // A bot cannot react to a user's message on Teams.
  reactions: false,
  filesInbound: true,
  filesOutbound: true,
  richBlocks: true,
  threads: false,
  // Markdown without tables: grids or cards in the outgoing copy.
  tableMode: "auto",
  nativeTables: false,
  maxMessageChars: 16_000,
  maxMessageBytes: 24_000,
  // Card buttons are full-width on mobile: five is the most that reads as a choice.
  maxButtons: 5,
  // A Teams mention needs an entity beside the text; no text grammar pings anyone.
  mentionGrammars: false,
  supportsProactiveSend: true,
  supportsSessionResume: true,
  returnsMessageId: true,
});

/** Why an activity is refused before authorization. */
export type GateRefusal =
  | "channel_not_msteams"
  | "service_url_not_allowed"
  | "service_url_claim_mismatch"
  | "not_personal";

export interface TeamsGate {
  /** Whether a URL is on an allowed Connector host. */
  admits(url: URL): boolean;
}

/** The first gate an activity fails, or null: pure, so the order is pinned by tests. */
export function gateRefusal(
  a: TeamsActivity,
  claimedServiceUrl: string,
  gate: TeamsGate,
): GateRefusal | null {
  // Positive: "not some other channel" would fail open on the next channel Microsoft adds.
  if (a.channelId !== "msteams") return "channel_not_msteams";
  let url: URL;
  try {
    url = new URL(a.serviceUrl);
  } catch {
    return "service_url_not_allowed";
  }
  if (url.protocol !== "https:" || url.username || url.password || !gate.admits(url))
    return "service_url_not_allowed";
  if (a.serviceUrl !== claimedServiceUrl) return "service_url_claim_mismatch";
  if (a.conversation.conversationType !== "personal") return "not_personal";
  return null;
}

export interface TeamsTransportOptions extends TransportOptions {
  allowedUsers: ReadonlySet<string>;
  gate: TeamsGate;
  routes?: TeamsRoutes;
  /** Posts a whole message to a stored route; the first message id. Absent: no proactive sends. */
  post?: (conversationId: string, text: string) => Promise<string>;
  logger: Logger;
}

export class TeamsTransport extends MessagingTransport<TeamsEnvelope> {
  readonly channelType = "teams";
  override readonly capabilities = TEAMS_CAPABILITIES;
  private readonly o: TeamsTransportOptions;

  constructor(options: TeamsTransportOptions) {
    super(options);
    this.o = options;
  }

  /** The pre-authorization gates, counted and audited; false refuses the activity. */
  screen(a: TeamsActivity, claimedServiceUrl: string): boolean {
    const refusal = gateRefusal(a, claimedServiceUrl, this.o.gate);
    if (refusal === null) return true;
    this.drops.record({
      reason: refusal,
      outcome: "denied",
      fields: { conversation_type: a.conversation.conversationType ?? "", activity_channel: a.channelId },
    });
    return false;
  }

  protected isBotAuthored(raw: TeamsEnvelope): boolean {
    const a = raw.activity;
    return a.from.role === "bot" || a.from.id.startsWith("28:") || a.from.id === a.recipient?.id;
  }

  protected normalize(raw: TeamsEnvelope): InboundMessage | null {
    const a = raw.activity;
    return inboundMessage({
      channelType: this.channelType,
      userId: raw.identity,
      conversationId: a.conversation.id,
      text: messageText(a).trim(),
      ...(a.id ? { messageId: a.id } : {}),
      // Descriptors only: nothing is fetched until the turn that answers the message reads them.
      attachments: inboundFilesOf(a),
    });
  }

  authorize(message: InboundMessage): boolean {
    return this.o.allowedUsers.has(message.userId);
  }

  /** Whether the identity may be let in (install events, card clicks: no message to normalize). */
  admitsIdentity(identity: string, activityType: string): boolean {
    if (this.o.allowedUsers.has(identity)) return true;
    this.drops.record({ reason: "stranger", user: identity, fields: { activity: activityType } });
    return false;
  }

  /**
   * Outbound on nobody's request: only to a stored route, owned by the principal the session key
   * names, who is still allow-listed. A route Teams refused for good is forgotten by the sender.
   */
  override maySendTo(
    conversationId: string,
    _threadId: string | undefined,
    opts: { principal: string },
  ): boolean {
    const route = this.o.routes?.get(conversationId);
    const reason = !route
      ? "no_route"
      : !opts.principal || route.identity !== opts.principal
        ? "principal_mismatch"
        : !this.o.allowedUsers.has(route.identity)
          ? "principal_not_allowed"
          : null;
    if (reason) this.audit.log("proactive_send", "refused", { channel: this.channelType, reason });
    return reason === null;
  }

  override configuredTargets(): ConfiguredChannelTarget[] {
    return [...this.o.allowedUsers].map((identity) => {
      const known = this.o.routes?.ownedBy(identity) !== undefined;
      return {
        targetId: `dm:${identity}`,
        label: `Teams chat with ${identity}`,
        available: known,
        ...(known ? {} : { reason: "the user has not messaged or installed the bot yet" }),
      };
    });
  }

  override resolveConfiguredTarget(targetId: string): ResolvedTarget | null {
    if (!targetId.startsWith("dm:")) return null;
    const identity = targetId.slice(3);
    if (!this.o.allowedUsers.has(identity)) return null;
    const route = this.o.routes?.ownedBy(identity);
    return route ? { conversationId: route.conversationId } : null;
  }

  /** A whole message, nobody asked for it; its first id, "" when refused or not delivered. */
  async sendMessage(conversationId: string, content: string): Promise<string> {
    const route = this.o.routes?.get(conversationId);
    if (!route || !this.o.post || !this.maySendTo(conversationId, undefined, { principal: route.identity }))
      return "";
    try {
      return await this.o.post(conversationId, content);
    } catch (error) {
      this.o.logger.warn("teams: a proactive send failed", { status: teamsSendErrorOf(error)?.status ?? 0 });
      return "";
    }
  }
}

/**
 * The Connector host rule: an entry `host` admits that host on the default https port, an entry
 * `host:port` exactly that port. Compared on the parsed URL (lowercased, no userinfo), never on text.
 */
export function connectorHostGate(hosts: readonly string[]): TeamsGate {
  const allowed = new Set(hosts.map((h) => h.toLowerCase()));
  return {
    admits: (url) =>
      url.protocol === "https:" && !url.username && !url.password && allowed.has(url.host.toLowerCase()),
  };
}
