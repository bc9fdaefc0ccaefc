/**
 * Layer 1: MessagingTransport, the per-channel inbound/outbound contract: the audited inbound gate
 * (ack, drop bots, normalize, authorize deny-by-default) and the outbound checks a proactive send
 * needs. A new channel implements this (plus a Renderer and a surface) and inherits the whole turn
 * core. Imports only messaging leaf modules.
 */
import type { OutboundFile } from "../files/outbound-files.js";
import type { AuditSink } from "../security/audit.js";
import type { TransportCapabilities } from "./capabilities.js";
import { DEFAULT_CAPABILITIES } from "./capabilities.js";
import type { InboundDrops } from "./inbound-drops.js";

/** A normalized inbound attachment reference (bytes are fetched by the ingest, not here). */
export interface InboundAttachment {
  name: string;
  mimeType?: string;
  size?: number;
  /** Channel-specific handle the transport can resolve to bytes. */
  ref: string;
}

/** Normalized, channel-agnostic inbound message. */
export interface InboundMessage {
  channelType: string;
  userId: string;
  conversationId: string;
  text: string;
  threadId?: string;
  attachments: InboundAttachment[];
  isMention: boolean;
  /** Platform message id, when the platform has one (reactions, quoting, dedupe). */
  messageId?: string;
}

export function inboundMessage(
  fields: Omit<InboundMessage, "attachments" | "isMention"> &
    Partial<Pick<InboundMessage, "attachments" | "isMention">>,
): InboundMessage {
  return { attachments: [], isMention: false, ...fields };
}

/**
 * A destination an operator configured, addressed by an OPAQUE id: a raw conversation id would let
 * a caller (possibly the model) name any destination, and a narrowed config must take effect.
 */
export interface ConfiguredChannelTarget {
  targetId: string;
  label: string;
  /** False with a reason when the target is listed but cannot receive right now. */
  available: boolean;
  reason?: string;
}

export interface ResolvedTarget {
  conversationId: string;
  threadId?: string;
}

/** What `receive` did with an envelope; every non-dispatch outcome has a reason for the audit. */
export type ReceiveOutcome =
  | { status: "dispatched"; message: InboundMessage }
  | { status: "dropped"; reason: "bot_authored" | "empty" | "unparseable" | "duplicate" }
  | { status: "denied"; message: InboundMessage };

export interface TransportOptions {
  audit: AuditSink;
  /** Where every frame that does not become a message is reported (ChannelContext.drops). */
  drops: InboundDrops;
}

/** How a message sent outside a turn is meant. */
export interface SendOptions {
  /** parley's own notice (an owner alert), not the agent's words: shown as a notice where the platform can. */
  notice?: boolean;
}

export abstract class MessagingTransport<Raw = unknown> {
  abstract readonly channelType: string;
  readonly capabilities: TransportCapabilities = DEFAULT_CAPABILITIES;
  protected readonly audit: AuditSink;
  protected readonly drops: InboundDrops;

  constructor(options: TransportOptions) {
    this.audit = options.audit;
    this.drops = options.drops;
  }

  /** Send on nobody's request (a proactive send); the platform message id ("" = refused, unless returnsMessageId is false). */
  abstract sendMessage(
    conversationId: string,
    content: string,
    threadId?: string,
    options?: SendOptions,
  ): Promise<string>;

  /**
   * Upload files (already read once through the outbound-file gates) on nobody's request; the
   * platform id of what landed. Absent where the platform takes no files from a bot.
   */
  sendFiles?(
    conversationId: string,
    threadId: string | undefined,
    files: readonly OutboundFile[],
  ): Promise<string>;

  // Inbound adapter.
  /** Acknowledge the envelope to the platform (before any slow work, so it is not redelivered). */
  protected async ack(_raw: Raw): Promise<void> {}
  /** True for messages authored by a bot (including ourselves): never a turn, avoids loops. */
  protected abstract isBotAuthored(raw: Raw): boolean;
  /** Platform envelope -> InboundMessage; null when there is nothing to act on. */
  protected abstract normalize(raw: Raw): InboundMessage | null;
  /** Deny-by-default: an unconfigured transport authorizes nobody. */
  abstract authorize(message: InboundMessage): boolean;

  /**
   * ack -> drop bot-authored -> normalize -> authorize. Every outcome but a dispatch is reported to
   * `drops` (counted and audited); the caller dispatches.
   */
  async receive(raw: Raw): Promise<ReceiveOutcome> {
    await this.ack(raw);
    if (this.isBotAuthored(raw)) {
      this.drops.record({ reason: "bot_echo" });
      return { status: "dropped", reason: "bot_authored" };
    }
    const message = this.normalize(raw);
    if (message === null) {
      this.drops.record({ reason: "unparseable" });
      return { status: "dropped", reason: "unparseable" };
    }
    // A media-only message is a message: drop only when the whole envelope is empty.
    if (message.text.trim() === "" && message.attachments.length === 0) {
      this.drops.record({ reason: "empty", user: message.userId, conversation: message.conversationId });
      return { status: "dropped", reason: "empty" };
    }
    if (!this.authorize(message)) {
      this.drops.record({ reason: "stranger", user: message.userId, conversation: message.conversationId });
      return { status: "denied", message };
    }
    return { status: "dispatched", message };
  }

  /**
   * Outbound authorization for a proactive send (nobody asked for it). Synchronous and in-memory:
   * it runs on every proactive send, and a check that can time out is a check that fails open.
   * `principal` is the peer's platform id when the session key names one; "" names no single person.
   * Default: deny (a transport must opt in).
   */
  maySendTo(_conversationId: string, _threadId: string | undefined, _opts: { principal: string }): boolean {
    return false;
  }

  /** Destinations an operator configured; none by default. */
  configuredTargets(): ConfiguredChannelTarget[] {
    return [];
  }

  /** Re-applies the allow-list at the side-effect boundary; null = not (or no longer) allowed. */
  resolveConfiguredTarget(_targetId: string): ResolvedTarget | null {
    return null;
  }

  /**
   * Where this channel's owner (the operator) can be told something nobody asked for right now (a
   * notice from another channel that went down), or null: none known, or the channel has no single
   * owner. The egress still re-checks `maySendTo` before sending.
   */
  ownerTarget(): ResolvedTarget | null {
    return null;
  }
}
