/**
 * The ONE egress for messages nobody asked for right now: what the agent sends on its own
 * (`send_message`, `send_file`), a turn mirrored into a linked conversation, a scheduled prompt's
 * result, and an agent host's replies in channel-server mode. Every path re-authorizes the
 * recipient at the moment of sending (`maySendTo`: a link remembers a conversation, not who
 * authorized it), renders tables for the target, applies the display-form redaction, splits
 * fence-safe under the target's caps, confirms each part, and audits the outcome. It fails CLOSED
 * at every gate, and every refusal is audited AND returned as a typed result, never absorbed: a
 * notice that silently went nowhere looks exactly like an idle agent. A destination is named by the
 * store (a session's own conversation, a stored link) or by an operator-configured target name,
 * never by a raw conversation id from the caller. Layer: messaging.
 */
import type { Logger } from "../base/logger.js";
import { silentLogger } from "../base/logger.js";
import type { OutboundFile } from "../files/outbound-files.js";
import type { AuditSink } from "../security/audit.js";
import type { ChannelLink } from "../session/keys.js";
import { CHAT_TYPE_DIRECT, parseSessionKey } from "../session/keys.js";
import type { SessionStore } from "../session/session-store.js";
import { displaySafeFor } from "../text/options.js";
import { splitMarkdownBytes, splitMarkdownSafe } from "../text/split.js";
import { renderTables } from "../text/tables/index.js";
import type { TransportCapabilities } from "./capabilities.js";
import { deliveryConfirmed } from "./capabilities.js";
import type { TurnParts } from "./delivery.js";
import type { MessagingTransport } from "./transport.js";

/** Why a message leaves: audited with every outcome, so an operator can tell the paths apart. */
export type EgressPurpose = "agent" | "mirror" | "schedule" | "host" | "notice";

/**
 * Where it goes. `session`: the conversation the session belongs to (its origin link). `link`: a
 * stored link (a mirror binding, a scheduled job's conversation) on behalf of `sessionKey`, whose
 * key names the principal re-checked. `target`: an operator-configured destination by its name.
 * `owner`: the operator, on the first other running channel that knows where they are (a channel
 * telling the operator it went down cannot tell them on itself); with `on`, only on that channel
 * (an alert goes to the owner of every other connected channel, one send each).
 */
export type EgressDestination =
  | { kind: "session"; sessionKey: string }
  | {
      kind: "link";
      link: ChannelLink;
      sessionKey: string;
      /** The person at the link when the session key names someone else (a mirror). */
      principal?: string;
    }
  | { kind: "target"; name: string }
  | { kind: "owner"; except: string; on?: string };

export type EgressRefusal =
  | "empty"
  | "no_link"
  | "unknown_target"
  | "no_transport"
  | "not_proactive"
  | "not_allowed"
  | "allow_check_failed"
  | "files_unsupported"
  | "send_failed"
  | "unconfirmed";

export type EgressResult =
  | { status: "sent"; parts: number; channel: string }
  | { status: "refused"; reason: EgressRefusal }
  | { status: "partial"; sent: number; total: number };

/** One line a caller (the agent, a user) can read for a refusal: what happened, never an address. */
export function describeEgress(result: EgressResult): string {
  if (result.status === "sent") return `delivered (${result.parts} message${result.parts === 1 ? "" : "s"})`;
  if (result.status === "partial")
    return `only ${result.sent} of ${result.total} parts were delivered; the rest failed`;
  return `refused: ${REFUSAL_TEXT[result.reason]} (${result.reason})`;
}

const REFUSAL_TEXT: Readonly<Record<EgressRefusal, string>> = {
  empty: "there is nothing to send",
  no_link: "this conversation has no chat to deliver to yet",
  unknown_target: "no configured target has that name (or it is no longer allowed)",
  no_transport: "that chat's channel is not running",
  not_proactive: "that channel cannot send a message nobody asked for",
  not_allowed: "the recipient is not (or no longer) allowed",
  allow_check_failed: "the recipient could not be checked, so nothing was sent",
  files_unsupported: "that channel does not take files",
  send_failed: "the channel failed to send it",
  unconfirmed: "the channel did not confirm delivery",
};

/**
 * The peer a session key names, or "". Derived from the KEY alone: it must describe the conversation
 * the link points at, and only a 1:1 DM's scope is exactly one person. A room route, a unified bucket
 * or a legacy key names nobody, which means "no single principal", not "nobody is authorized".
 */
export function sessionPrincipal(sessionKey: string): string {
  const parsed = parseSessionKey(sessionKey);
  if (!parsed || parsed.chatType !== CHAT_TYPE_DIRECT || parsed.scope.length !== 1) return "";
  return parsed.scope[0] ?? "";
}

/**
 * The parts a target takes: tables rendered for it, fence-safe under its code-point cap, then (for a
 * byte-capped platform) under its UTF-8 budget.
 */
export function splitForTarget(text: string, caps: TransportCapabilities): string[] {
  const rendered = renderTables(text, { policy: caps.tableMode, nativeTables: caps.nativeTables });
  const byChars = splitMarkdownSafe(rendered, caps.maxMessageChars);
  const parts =
    caps.maxMessageBytes > 0 ? byChars.flatMap((c) => splitMarkdownBytes(c, caps.maxMessageBytes)) : byChars;
  return parts.filter((p) => p.trim() !== "");
}

/** `<channel>:<the transport's target id>`, e.g. "telegram:dm:42": how the configuration names one. */
export interface TargetSpec {
  channel: string;
  targetId: string;
}

export function parseTargetSpec(spec: string): TargetSpec | null {
  const at = spec.indexOf(":");
  if (at <= 0 || at === spec.length - 1) return null;
  return { channel: spec.slice(0, at), targetId: spec.slice(at + 1) };
}

export interface EgressOptions {
  audit: AuditSink;
  store: Pick<SessionStore, "getOriginLink">;
  /** Operator-configured destinations: name -> `<channel>:<targetId>` (trusted configuration only). */
  targets?: Readonly<Record<string, string>>;
  logger?: Logger;
}

/** A destination resolved and authorized for this one send. */
export interface Resolved {
  link: ChannelLink;
  transport: MessagingTransport;
}

export class Egress {
  private readonly transports = new Map<string, MessagingTransport>();
  private readonly log: Logger;

  constructor(private readonly o: EgressOptions) {
    this.log = o.logger ?? silentLogger;
  }

  /** A started channel's transport; its channel type is what links and targets name. */
  register(transport: MessagingTransport): void {
    this.transports.set(transport.channelType, transport);
  }

  transportFor(channel: string): MessagingTransport | undefined {
    return this.transports.get(channel);
  }

  /** The target names the configuration gives (what an agent may name). */
  targetNames(): string[] {
    return Object.keys(this.o.targets ?? {}).sort();
  }

  /**
   * Resolve a destination and authorize it NOW, or refuse (audited). Callers that deliver by another
   * path (a channel-server reply through the renderer) still pass through here first.
   */
  resolve(
    destination: EgressDestination,
    purpose: EgressPurpose,
  ): { ok: true; resolved: Resolved } | { ok: false; result: EgressResult } {
    const found = this.locate(destination);
    if ("reason" in found) return { ok: false, result: this.refuse(purpose, destination, found.reason) };
    const { link, principal } = found;
    const transport = this.transports.get(link.channelType);
    if (!transport)
      return { ok: false, result: this.refuse(purpose, destination, "no_transport", link.channelType) };
    if (!transport.capabilities.supportsProactiveSend)
      return { ok: false, result: this.refuse(purpose, destination, "not_proactive", link.channelType) };
    let allowed: boolean;
    try {
      allowed = transport.maySendTo(link.conversationId, link.threadId, { principal });
    } catch (error) {
      // An allow-list check that errored has authorized nobody.
      this.o.audit.log("channel.proactive_send_authorize", "denied", {
        channel: link.channelType,
        purpose,
        reason: "check_failed",
        error: error instanceof Error ? error.name : typeof error,
      });
      return { ok: false, result: this.refuse(purpose, destination, "allow_check_failed", link.channelType) };
    }
    if (!allowed) {
      this.o.audit.log("channel.proactive_send_authorize", "denied", { channel: link.channelType, purpose });
      return { ok: false, result: this.refuse(purpose, destination, "not_allowed", link.channelType) };
    }
    return { ok: true, resolved: { link, transport } };
  }

  /** Text to a destination: resolved, re-authorized, tables rendered, display-safe, split, confirmed. */
  async send(request: {
    purpose: EgressPurpose;
    destination: EgressDestination;
    text: string;
    /**
     * The delivery ledger's parts of the work this message ends (a scheduled run): a second attempt
     * after a crash leaves alone the parts the first one landed. Only for a transport that answers
     * real ids (an id-less one cannot be told landed from refused).
     */
    parts?: TurnParts;
  }): Promise<EgressResult> {
    const { purpose, destination } = request;
    if (request.text.trim() === "") return this.refuse(purpose, destination, "empty");
    const found = this.resolve(destination, purpose);
    if (!found.ok) return found.result;
    const { link, transport } = found.resolved;
    const caps = transport.capabilities;
    // The display-form floor: no renderer sits on this path, so the egress applies it itself, on the
    // whole text (a key cut in two by the split would read clean in each half) and again per part
    // (the split may join what the first pass saw apart; the screen is idempotent).
    const parts = splitForTarget(displaySafeFor(request.text, caps), caps).map((p) =>
      displaySafeFor(p, caps),
    );
    if (parts.length === 0) return this.refuse(purpose, destination, "empty", link.channelType);
    let sent = 0;
    for (const part of parts) {
      let id: string;
      try {
        const notice = { notice: purpose === "notice" };
        const create = () => transport.sendMessage(link.conversationId, part, link.threadId, notice);
        id =
          request.parts && caps.returnsMessageId
            ? ((await request.parts.post(part, { create, replace: async () => false })) ?? "")
            : await create();
      } catch (error) {
        this.log.warn("egress: a send failed", { channel: link.channelType, error: String(error) });
        return this.stopAt(purpose, destination, sent, parts.length, "send_failed", link.channelType);
      }
      // Stop at the first unconfirmed part: the rest would arrive as an orphaned fragment.
      if (!deliveryConfirmed(caps, id))
        return this.stopAt(purpose, destination, sent, parts.length, "unconfirmed", link.channelType);
      sent += 1;
    }
    this.o.audit.log("channel.proactive_send", "sent", {
      channel: link.channelType,
      purpose,
      destination: destination.kind,
      parts: sent,
    });
    return { status: "sent", parts: sent, channel: link.channelType };
  }

  /**
   * Files (already read once through the outbound-file gates) to a destination, with an optional
   * caption sent first through `send`'s path. A channel without file uploads refuses.
   */
  async sendFiles(request: {
    purpose: EgressPurpose;
    destination: EgressDestination;
    files: readonly OutboundFile[];
  }): Promise<EgressResult> {
    const { purpose, destination, files } = request;
    if (files.length === 0) return this.refuse(purpose, destination, "empty");
    const found = this.resolve(destination, purpose);
    if (!found.ok) return found.result;
    const { link, transport } = found.resolved;
    if (!transport.capabilities.filesOutbound || !transport.sendFiles)
      return this.refuse(purpose, destination, "files_unsupported", link.channelType);
    let id: string;
    try {
      id = await transport.sendFiles(link.conversationId, link.threadId, files);
    } catch (error) {
      this.log.warn("egress: a file upload failed", { channel: link.channelType, error: String(error) });
      return this.refuse(purpose, destination, "send_failed", link.channelType);
    }
    if (!deliveryConfirmed(transport.capabilities, id))
      return this.refuse(purpose, destination, "unconfirmed", link.channelType);
    this.o.audit.log("channel.proactive_send", "sent", {
      channel: link.channelType,
      purpose,
      destination: destination.kind,
      files: files.length,
    });
    return { status: "sent", parts: 1, channel: link.channelType };
  }

  /** A destination's link and the principal its roster is asked about, or why there is none. */
  private locate(
    destination: EgressDestination,
  ): { link: ChannelLink; principal: string } | { reason: EgressRefusal } {
    if (destination.kind === "target") {
      const spec = this.o.targets?.[destination.name];
      const parsed = spec === undefined ? null : parseTargetSpec(spec);
      const transport = parsed ? this.transports.get(parsed.channel) : undefined;
      if (!parsed) return { reason: "unknown_target" };
      if (!transport) return { reason: "no_transport" };
      // The transport re-applies its allow-list at the side-effect boundary.
      const resolved = transport.resolveConfiguredTarget(parsed.targetId);
      if (!resolved) return { reason: "unknown_target" };
      const link: ChannelLink = { channelType: parsed.channel, conversationId: resolved.conversationId };
      if (resolved.threadId !== undefined) link.threadId = resolved.threadId;
      // A DM target names its person; a room target names nobody (its roster is the room's).
      const principal = parsed.targetId.startsWith("dm:") ? parsed.targetId.slice(3) : "";
      return { link, principal };
    }
    if (destination.kind === "owner") {
      for (const [channel, transport] of this.transports) {
        if (channel === destination.except || (destination.on !== undefined && channel !== destination.on))
          continue;
        const resolved = transport.ownerTarget();
        if (!resolved) continue;
        const link: ChannelLink = { channelType: channel, conversationId: resolved.conversationId };
        if (resolved.threadId !== undefined) link.threadId = resolved.threadId;
        return { link, principal: "" };
      }
      return { reason: "no_link" };
    }
    if (destination.kind === "link")
      return {
        link: destination.link,
        principal: destination.principal ?? sessionPrincipal(destination.sessionKey),
      };
    const link = this.o.store.getOriginLink(destination.sessionKey);
    if (!link) return { reason: "no_link" };
    return { link, principal: sessionPrincipal(destination.sessionKey) };
  }

  private refuse(
    purpose: EgressPurpose,
    destination: EgressDestination,
    reason: EgressRefusal,
    channel?: string,
  ): EgressResult {
    this.o.audit.log("channel.proactive_send", "refused", {
      purpose,
      destination: destination.kind,
      reason,
      ...(channel ? { channel } : {}),
      ...(destination.kind === "target"
        ? { target: destination.name }
        : destination.kind === "owner"
          ? { except: destination.except }
          : { session: destination.sessionKey }),
    });
    return { status: "refused", reason };
  }

  private stopAt(
    purpose: EgressPurpose,
    destination: EgressDestination,
    done: number,
    total: number,
    reason: EgressRefusal,
    channel: string,
  ): EgressResult {
    if (done === 0) return this.refuse(purpose, destination, reason, channel);
    this.o.audit.log("channel.proactive_send", "failed", {
      purpose,
      destination: destination.kind,
      channel,
      reason,
      sent: done,
      total,
    });
    return { status: "partial", sent: done, total };
  }
}
