/**
 * IMessageTransport: the operator's Messages account as a MessagingTransport. Inbound gates, in an
 * order that is load-bearing (it is what keeps a self-chat from answering itself without end):
 *   1. `is_from_me` rows are dropped without an audit (the all-chat watch sees every reply parley
 *      sends; auditing them would log one entry per outbound message);
 *   2. a group chat is refused (`denied_group_chat`: a reply there reaches members nobody allowed),
 *      then a sender not in `allowedHandles` (normalized both sides), each audited, never answered;
 *   3. LAST, the own-message ledger (`isOwnEcho`, called by the intake after these gates): consuming
 *      a record is a side effect a row dropped anyway must not spend, and a copy already attributed
 *      to us (gate 1) must not spend the record its unattributed twin needs.
 * Outbound, every send to one handle is serialized (Messages dispatches them in order only if they
 * are issued in order) and recorded in the ledger as it leaves; a failed send is audited, backs off
 * (capped, per handle) and is tried again a bounded number of times before it is reported.
 */
import type { Clock } from "../messaging/base/clock.js";
import { sleep } from "../messaging/base/clock.js";
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
import { IMESSAGE_MAX_CHARS, splitFlat } from "./chunks.js";
import { normalizeHandle } from "./handles.js";
import type { OwnMessageLedger } from "./ledger.js";
import { toPlainText } from "./plaintext.js";
import { type ImsgMessage, parseSendResult } from "./wire.js";

export const IMESSAGE_CAPABILITIES = defineCapabilities({
  // Nothing sent can be changed afterwards: one final answer, no placeholder, no widgets.
  streaming: false,
  edit: false,
  reactions: false,
  filesInbound: false,
  filesOutbound: false,
  richBlocks: false,
  threads: false,
  // Tables are flattened to labelled lines (plaintext.ts): a bubble has no grid.
  tableMode: "cards",
  nativeTables: false,
  supportsSessionResume: false,
  // Declared conservatively: iMessage publishes no maximum, and over-declaring risks a silent refusal.
  maxMessageChars: IMESSAGE_MAX_CHARS,
  maxButtons: 0,
  mentionGrammars: false,
  // A Mac may message a handle at any time.
  supportsProactiveSend: true,
  // imsg's send result carries ids only best-effort; success is "", failure throws.
  returnsMessageId: false,
});

/** What the transport asks of the imsg child. */
export interface ImsgCalls {
  request(method: string, params?: Record<string, unknown>): Promise<unknown>;
}

export interface SendPolicy {
  /** Tries of one message before its failure is reported. */
  attempts: number;
  firstBackoffMs: number;
  maxBackoffMs: number;
}

export const DEFAULT_SEND_POLICY: SendPolicy = { attempts: 3, firstBackoffMs: 1_000, maxBackoffMs: 30_000 };

export interface IMessageTransportOptions extends TransportOptions {
  /** Absent: an unconfigured transport (authorizes nobody, sends nothing). */
  imsg?: ImsgCalls;
  allowedHandles?: readonly string[];
  ledger?: OwnMessageLedger;
  service?: "imessage" | "sms" | "auto";
  clock?: Clock;
  logger?: Logger;
  sendPolicy?: Partial<SendPolicy>;
}

/** A send that failed every try; its cause is imsg's last answer. */
export class IMessageSendError extends Error {
  constructor(
    readonly handle: string,
    cause: unknown,
  ) {
    super(
      `imessage: sending to ${handle} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
    this.name = "IMessageSendError";
  }
}

export class IMessageTransport extends MessagingTransport<ImsgMessage> {
  readonly channelType = "imessage";
  override readonly capabilities = IMESSAGE_CAPABILITIES;
  private readonly allowed: ReadonlySet<string>;
  private readonly policy: SendPolicy;
  private readonly log: Logger;
  /** Per handle: the tail of its send chain, and how long its next send waits after a failure. */
  private readonly chains = new Map<string, Promise<unknown>>();
  private readonly backoff = new Map<string, number>();
  /** The row behind a normalized message (the group flag is the gate's, not the message's). */
  private readonly rows = new WeakMap<InboundMessage, ImsgMessage>();

  constructor(private readonly o: IMessageTransportOptions) {
    super({ audit: o.audit, drops: o.drops });
    // Normalized once and frozen: a decision must not change under a concurrent config edit.
    this.allowed = new Set((o.allowedHandles ?? []).flatMap((h) => normalizeHandle(h) ?? []));
    this.policy = { ...DEFAULT_SEND_POLICY, ...o.sendPolicy };
    this.log = o.logger ?? silentLogger;
  }

  // ── inbound ───────────────────────────────────────────────────────────────────────────────

  protected isBotAuthored(raw: ImsgMessage): boolean {
    return raw.isFromMe;
  }

  protected normalize(raw: ImsgMessage): InboundMessage | null {
    // A sender that is no handle keeps its raw form: no allow-list entry can match it, so it is
    // refused and audited like any stranger rather than dropped as unreadable.
    const handle = normalizeHandle(raw.sender) ?? raw.sender.trim().toLowerCase();
    if (handle === "") return null;
    // The handle IS the conversation: one person, one route, one session.
    const message = inboundMessage({
      channelType: this.channelType,
      userId: handle,
      conversationId: handle,
      text: raw.text,
      messageId: raw.guid,
    });
    this.rows.set(message, raw);
    return message;
  }

  authorize(message: InboundMessage): boolean {
    const raw = this.rows.get(message);
    if (raw?.isGroup) {
      this.audit.log("imessage.chat_gate", "denied", {
        source: "imessage",
        user: message.userId,
        reason: "denied_group_chat",
      });
      return false;
    }
    if (raw === undefined || !this.o.imsg) return false;
    return this.allowed.has(message.userId);
  }

  /** Gate 3 (see the module note): an echo of what we sent, consumed; only after gates 1 and 2. */
  isOwnEcho(row: ImsgMessage): boolean {
    return this.o.ledger?.consume({ guid: row.guid, text: row.text }) ?? false;
  }

  // ── outbound ──────────────────────────────────────────────────────────────────────────────

  override maySendTo(conversationId: string): boolean {
    const handle = normalizeHandle(conversationId);
    return handle !== null && this.allowed.has(handle);
  }

  override configuredTargets(): ConfiguredChannelTarget[] {
    return [...this.allowed].map((h) => ({ targetId: `dm:${h}`, label: `iMessage ${h}`, available: true }));
  }

  override resolveConfiguredTarget(targetId: string): ResolvedTarget | null {
    const handle = targetId.startsWith("dm:") ? normalizeHandle(targetId.slice(3)) : null;
    return handle !== null && this.allowed.has(handle) ? { conversationId: handle } : null;
  }

  /** A proactive send: refused unless allow-listed; flattened, screened and split. "" on success. */
  async sendMessage(conversationId: string, content: string): Promise<string> {
    if (!this.o.imsg || !this.maySendTo(conversationId)) {
      this.audit.log("channel.proactive_send_authorize", "denied", {
        channel: this.channelType,
        conversation: conversationId,
      });
      return "";
    }
    for (const part of splitFlat(toPlainText(content))) await this.sendText(conversationId, part);
    return "";
  }

  /**
   * One flat, screened message to a handle, after every earlier send to it. Resolves the guid (or
   * id) imsg reported, "" when it reported none; throws IMessageSendError once every try failed.
   */
  sendText(handle: string, text: string): Promise<string> {
    const to = normalizeHandle(handle) ?? handle;
    const previous = this.chains.get(to) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.sendWithRetry(to, text));
    const tail = next.catch(() => undefined);
    this.chains.set(to, tail);
    void tail.then(() => {
      if (this.chains.get(to) === tail) this.chains.delete(to);
    });
    return next;
  }

  private async sendWithRetry(to: string, text: string): Promise<string> {
    const imsg = this.o.imsg;
    if (!imsg) throw new IMessageSendError(to, "not connected");
    let lastError: unknown;
    for (let attempt = 1; attempt <= this.policy.attempts; attempt += 1) {
      const wait = this.backoff.get(to) ?? 0;
      if (wait > 0 && this.o.clock) await sleep(this.o.clock, wait);
      const record = this.o.ledger?.sending(text);
      try {
        const result = parseSendResult(
          await imsg.request("send", { to, text, ...(this.o.service ? { service: this.o.service } : {}) }),
        );
        record?.landed(result.guid);
        this.backoff.delete(to);
        return result.guid ?? result.id ?? "";
      } catch (error) {
        record?.failed();
        lastError = error;
        const next = Math.min(Math.max(wait * 2, this.policy.firstBackoffMs), this.policy.maxBackoffMs);
        this.backoff.set(to, next);
        this.audit.log("imessage.send", "failed", { source: "imessage", to, attempt, error: String(error) });
        this.log.warn(
          `imessage: a send failed (try ${attempt} of ${this.policy.attempts}); backing off ${next} ms`,
          {
            error: String(error),
          },
        );
      }
    }
    throw new IMessageSendError(to, lastError);
  }
}
