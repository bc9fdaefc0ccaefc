/**
 * WeixinTransport: iLink as a MessagingTransport. Inbound: a bot item (`message_type` 2, parley's
 * own sends included) is dropped before anything else; a message with no sender is unparseable; the
 * DM policy decides (policy.ts), each refusal audited with its reason. Outbound: every body takes
 * one path (format.ts), each message a `sendmessage` echoing the peer's stored context token, with
 * the ledger's part key as `client_id`, paced per peer. A send iLink refuses in its 200 body throws
 * (never counted as delivered); one without a context token is refused locally and audited.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Timers } from "../messaging/base/clock.js";
import { sleep } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import { silentLogger } from "../messaging/base/logger.js";
import { defineCapabilities } from "../messaging/channel/capabilities.js";
import type { TurnParts } from "../messaging/channel/delivery.js";
import type {
  ConfiguredChannelTarget,
  InboundMessage,
  ReceiveOutcome,
  ResolvedTarget,
  TransportOptions,
} from "../messaging/channel/transport.js";
import { inboundMessage, MessagingTransport } from "../messaging/channel/transport.js";
import type { IlinkClient } from "./client.js";
import type { ReadContent } from "./content.js";
import { readContent } from "./content.js";
import { WeixinSendRefused } from "./errors.js";
import { WEIXIN_MAX_CHARS, weixinBodies } from "./format.js";
import type { PeerState } from "./peers.js";
import type { PeerPolicy } from "./policy.js";
import type { WireMessage } from "./wire.js";
import {
  asWireMessage,
  ITEM_TEXT,
  MESSAGE_STATE_FINISH,
  MESSAGE_TYPE_BOT,
  messageIdOf,
  unknownShapeOf,
} from "./wire.js";

export const WEIXIN_CAPABILITIES = defineCapabilities({
  // Buffered: one reply per turn, nothing edited, no reactions or widgets.
  streaming: false,
  edit: false,
  reactions: false,
  // Media in is CDN-indirect and decrypted; out needs the encrypted CDN upload, not built: paths stay visible.
  filesInbound: true,
  filesOutbound: false,
  richBlocks: false,
  threads: false,
  // iLink renders Markdown, pipe tables included.
  tableMode: "native",
  nativeTables: true,
  supportsSessionResume: false,
  maxMessageChars: WEIXIN_MAX_CHARS,
  maxButtons: 0,
  // A 1:1 chat has no @-broadcast grammar.
  mentionGrammars: false,
  // Only to a peer whose context token is stored (sendMessage refuses the rest).
  supportsProactiveSend: true,
  // The id is the client_id parley chose; a refusal throws.
  returnsMessageId: true,
});

/** Gap between two sends to one peer (iLink throttles bursts; a message a second reads naturally). */
export const SEND_GAP_MS = 300;

export interface WeixinTransportOptions extends TransportOptions {
  /** Absent: an unconfigured transport (authorizes nobody, sends nothing). */
  client?: IlinkClient;
  policy?: PeerPolicy;
  peers?: PeerState;
  timers?: Timers;
  logger?: Logger;
  sendGapMs?: number;
}

/**
 * The `client_id` of a part: the ledger's part key, scoped to the peer (keys restart with a new
 * store) and to the body, so a resend of the same part after a kill carries the same id while a
 * part a resumed turn rewrote (posted anew: iLink edits nothing) is never mistaken for the old one.
 */
export function clientIdOf(peer: string, key: string | undefined, body: string): string {
  if (key === undefined) return `parley-${randomBytes(12).toString("hex")}`;
  return `parley-${createHash("sha256").update(`${peer}\u0000${key}\u0000${body}`).digest("hex").slice(0, 32)}`;
}

export class WeixinTransport extends MessagingTransport<unknown> {
  readonly channelType = "weixin";
  override readonly capabilities = WEIXIN_CAPABILITIES;
  private readonly reads = new WeakMap<InboundMessage, { wire: WireMessage; content: ReadContent }>();
  /** Peers admitted since start under `open`: configured targets only (never maySendTo). */
  private readonly learned = new Set<string>();
  /** Per peer, the tail of its send chain (pacing). */
  private readonly lanes = new Map<string, Promise<void>>();
  private readonly log: Logger;

  constructor(private readonly o: WeixinTransportOptions) {
    super({ audit: o.audit, drops: o.drops });
    this.log = o.logger ?? silentLogger;
  }

  readOf(message: InboundMessage): { wire: WireMessage; content: ReadContent } | undefined {
    return this.reads.get(message);
  }

  // ── inbound ───────────────────────────────────────────────────────────────────────────────

  /** A message of a shape parley does not know is counted as that (warned once), not as empty. */
  override async receive(raw: unknown): Promise<ReceiveOutcome> {
    const wire = asWireMessage(raw);
    const shape = wire && !this.isBotAuthored(wire) ? unknownShapeOf(wire) : null;
    if (shape === null) return super.receive(raw);
    const from = typeof wire?.from_user_id === "string" ? wire.from_user_id : undefined;
    this.drops.record({ reason: "unknown_shape", shape, ...(from ? { user: from } : {}) });
    return { status: "dropped", reason: "unparseable" };
  }

  protected isBotAuthored(raw: unknown): boolean {
    return asWireMessage(raw)?.message_type === MESSAGE_TYPE_BOT;
  }

  protected normalize(raw: unknown): InboundMessage | null {
    const wire = asWireMessage(raw);
    const from = typeof wire?.from_user_id === "string" ? wire.from_user_id.trim() : "";
    if (!wire || !from) return null;
    const content = readContent(wire);
    const id = messageIdOf(wire);
    const message = inboundMessage({
      channelType: this.channelType,
      userId: from,
      conversationId: from,
      text: content.text,
      attachments: content.attachments,
      // A 1:1 chat with the bot: everything in it is addressed to the bot.
      isMention: true,
      ...(id ? { messageId: id } : {}),
    });
    this.reads.set(message, { wire, content });
    return message;
  }

  authorize(message: InboundMessage): boolean {
    if (!this.o.policy || !this.reads.has(message)) return false;
    const refusal = this.o.policy.refusal(message.userId);
    if (refusal) {
      this.audit.log("weixin.dm_gate", "denied", { user: message.userId, reason: refusal });
      return false;
    }
    if (this.o.policy.policy === "open") this.learned.add(message.userId);
    return true;
  }

  // ── outbound authorization ────────────────────────────────────────────────────────────────

  /** The policy alone decides (learned peers are ignored), so a peer removed from the list stays removed. */
  override maySendTo(
    conversationId: string,
    threadId: string | undefined,
    opts: { principal: string },
  ): boolean {
    if (threadId !== undefined || !this.o.policy) return false;
    if (opts.principal !== "" && opts.principal !== conversationId) return false;
    return this.o.policy.refusal(conversationId) === null;
  }

  override configuredTargets(): ConfiguredChannelTarget[] {
    // Under open, everyone who wrote (this run, or with a token kept from an earlier one) is offered.
    const learned =
      this.o.policy?.policy === "open" ? [...this.learned, ...(this.o.peers?.reachable() ?? [])] : [];
    const ids = new Set([...(this.o.policy?.listed() ?? []), ...learned]);
    return [...ids].map((id) => {
      const reachable = this.o.peers?.contextToken(id) !== undefined;
      return {
        targetId: `dm:${id}`,
        label: `WeChat ${id}`,
        available: reachable,
        ...(reachable
          ? {}
          : { reason: "has not written to the bot yet: iLink needs a context token from their message" }),
      };
    });
  }

  override resolveConfiguredTarget(targetId: string): ResolvedTarget | null {
    const id = targetId.startsWith("dm:") ? targetId.slice(3) : "";
    return id && this.maySendTo(id, undefined, { principal: "" }) ? { conversationId: id } : null;
  }

  /** A proactive send: refused (and audited) unless the policy admits the peer and a token is stored. */
  async sendMessage(conversationId: string, content: string, threadId?: string): Promise<string> {
    if (!this.o.client || !this.maySendTo(conversationId, threadId, { principal: "" })) {
      this.audit.log("channel.proactive_send_authorize", "denied", {
        channel: this.channelType,
        conversation: conversationId,
        reason: this.o.client ? "not_admitted" : "not_connected",
      });
      throw new WeixinSendRefused(
        this.o.client ? "not_admitted" : "not_connected",
        "not an admitted WeChat peer",
      );
    }
    return (await this.postMarkdown(conversationId, content)).at(-1) ?? "";
  }

  // ── outbound ──────────────────────────────────────────────────────────────────────────────

  /**
   * Markdown to a peer, one path for every body: split and display-safe; with `parts`, each body
   * through the delivery ledger. The client_ids, in order; throws when a part did not land.
   */
  async postMarkdown(peer: string, markdown: string, parts?: TurnParts): Promise<string[]> {
    const token = this.o.peers?.contextToken(peer);
    if (!this.o.client || !token) {
      const reason = this.o.client ? "no_context_token" : "not_connected";
      this.audit.log("weixin.send", "refused", { user: peer, reason });
      throw new WeixinSendRefused(
        reason,
        reason === "no_context_token"
          ? "no context token is stored for this peer: iLink accepts a message only after they wrote"
          : "the Weixin transport is not connected",
      );
    }
    const ids: string[] = [];
    for (const body of weixinBodies(markdown)) {
      if (!parts) {
        ids.push(await this.sendText(peer, token, body, undefined));
        continue;
      }
      const id = await parts.post(body, {
        marksSending: true,
        create: (key, sending) => this.sendText(peer, token, body, key, sending),
        // iLink edits nothing: a changed part is posted anew.
        replace: async () => false,
      });
      if (!id) throw new Error("weixin: a part did not land");
      ids.push(id);
    }
    return ids;
  }

  /** One message, in the peer's lane (paced); its client_id once iLink accepted it. */
  private sendText(
    peer: string,
    token: string,
    text: string,
    key: string | undefined,
    sending?: () => Promise<void>,
  ): Promise<string> {
    const client = this.o.client as IlinkClient;
    const clientId = clientIdOf(peer, key, text);
    const run = async (): Promise<string> => {
      await sending?.();
      try {
        await client.sendMessage({
          from_user_id: "",
          to_user_id: peer,
          client_id: clientId,
          message_type: MESSAGE_TYPE_BOT,
          message_state: MESSAGE_STATE_FINISH,
          item_list: [{ type: ITEM_TEXT, text_item: { text } }],
          context_token: token,
        });
      } catch (error) {
        this.audit.log("weixin.send", "failed", { user: peer, reason: (error as Error).name });
        this.log.warn("weixin: a message was not delivered", { error: String(error) });
        throw error;
      }
      return clientId;
    };
    const before = this.lanes.get(peer) ?? Promise.resolve();
    const result = before.then(run);
    const gap = this.o.sendGapMs ?? SEND_GAP_MS;
    const tail = result.then(
      () => (this.o.timers && gap > 0 ? sleep(this.o.timers, gap) : undefined),
      () => undefined,
    );
    this.lanes.set(peer, tail);
    void tail.then(() => {
      if (this.lanes.get(peer) === tail) this.lanes.delete(peer);
    });
    return result;
  }
}
