/**
 * A proactive send: a message nobody asked for (a cron result, a background report) delivered to the
 * conversation a session belongs to. It fails CLOSED at every gate, and every refusal is audited AND
 * returned as a typed result, never absorbed: a notice that silently went nowhere looks exactly like
 * an idle agent. The destination comes from the store, never from the caller. Layer: messaging.
 *
 * Kept ahead of its producer on purpose: issue 20 (agent-initiated messages, mirror delivery,
 * scheduled prompts) wires it; today only its tests run it.
 */
import type { AuditSink } from "../security/audit.js";
import { CHAT_TYPE_DIRECT, parseSessionKey } from "../session/keys.js";
import type { SessionStore } from "../session/session-store.js";
import { chunkText, displaySafeFor } from "../text/options.js";
import type { TransportCapabilities } from "./capabilities.js";
import { deliveryConfirmed } from "./capabilities.js";
import type { MessagingTransport } from "./transport.js";

export type ProactiveRefusal =
  | "empty"
  | "no_link"
  | "no_transport"
  | "not_proactive"
  | "not_allowed"
  | "allow_check_failed"
  | "send_failed"
  | "unconfirmed";

export type ProactiveResult =
  | { status: "sent"; parts: number }
  | { status: "refused"; reason: ProactiveRefusal }
  | { status: "partial"; sent: number; total: number };

export interface ProactiveSendArgs {
  store: Pick<SessionStore, "getOriginLink">;
  /** Registered transports by channel type; membership is the first gate. */
  transports: ReadonlyMap<string, MessagingTransport>;
  audit: AuditSink;
  sessionKey: string;
  text: string;
  /** Override the splitter; the default honours the transport's character and byte caps. */
  chunk?: (text: string, caps: TransportCapabilities) => string[];
}

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

const encoder = new TextEncoder();

/** Re-split each chunk so none exceeds `maxBytes` of UTF-8, cutting only between code points. */
function boundBytes(chunks: string[], maxBytes: number): string[] {
  const out: string[] = [];
  for (const chunk of chunks) {
    if (encoder.encode(chunk).length <= maxBytes) {
      out.push(chunk);
      continue;
    }
    let current = "";
    let size = 0;
    for (const point of chunk) {
      const n = encoder.encode(point).length;
      if (size + n > maxBytes && current !== "") {
        out.push(current);
        current = "";
        size = 0;
      }
      current += point;
      size += n;
    }
    if (current !== "") out.push(current);
  }
  return out;
}

/** The default splitter: the code-point cap, then (for a byte-capped platform) the real byte budget. */
export function chunkForTransport(text: string, caps: TransportCapabilities): string[] {
  const byChars = chunkText(text, caps.maxMessageChars);
  return caps.maxMessageBytes > 0 ? boundBytes(byChars, caps.maxMessageBytes) : byChars;
}

export async function sendProactive(args: ProactiveSendArgs): Promise<ProactiveResult> {
  const { audit, sessionKey } = args;
  const refuse = (
    reason: ProactiveRefusal,
    fields: Record<string, string | number> = {},
  ): ProactiveResult => {
    audit.log("channel.proactive_send", "refused", { session: sessionKey, reason, ...fields });
    return { status: "refused", reason };
  };
  if (args.text.trim() === "") return refuse("empty");
  const link = args.store.getOriginLink(sessionKey);
  if (!link) return refuse("no_link");
  const channel = link.channelType;
  const transport = args.transports.get(channel);
  if (!transport) return refuse("no_transport", { channel });
  const caps = transport.capabilities;
  if (!caps.supportsProactiveSend) return refuse("not_proactive", { channel });

  // Revocation is re-decided at egress: the link remembers a conversation, not who authorized it.
  let allowed: boolean;
  try {
    allowed = transport.maySendTo(link.conversationId, link.threadId, {
      principal: sessionPrincipal(sessionKey),
    });
  } catch (error) {
    // An allow-list check that errored has authorized nobody.
    audit.log("channel.proactive_send_authorize", "denied", {
      channel,
      session: sessionKey,
      reason: "check_failed",
      error: error instanceof Error ? error.name : typeof error,
    });
    return refuse("allow_check_failed", { channel });
  }
  if (!allowed) {
    audit.log("channel.proactive_send_authorize", "denied", { channel, session: sessionKey });
    return refuse("not_allowed", { channel });
  }

  // The display-form floor: no renderer sits on this path, so the egress applies it itself.
  const safe = displaySafeFor(args.text, caps);
  const parts = (args.chunk ?? chunkForTransport)(safe, caps).filter((p) => p !== "");
  if (parts.length === 0) return refuse("empty", { channel });

  let sent = 0;
  for (const part of parts) {
    let id: string;
    try {
      id = await transport.sendMessage(link.conversationId, part, link.threadId);
    } catch (error) {
      const name = error instanceof Error ? error.name : typeof error;
      return stopAt(sent, parts.length, "send_failed", { channel, error: name });
    }
    // Stop at the first unconfirmed part: the rest would arrive as an orphaned fragment.
    if (!deliveryConfirmed(caps, id)) return stopAt(sent, parts.length, "unconfirmed", { channel });
    sent += 1;
  }
  audit.log("channel.proactive_send", "sent", { channel, session: sessionKey, parts: sent });
  return { status: "sent", parts: sent };

  function stopAt(
    done: number,
    total: number,
    reason: ProactiveRefusal,
    fields: Record<string, string>,
  ): ProactiveResult {
    if (done === 0) return refuse(reason, fields);
    audit.log("channel.proactive_send", "failed", {
      session: sessionKey,
      reason,
      sent: done,
      total,
      ...fields,
    });
    return { status: "partial", sent: done, total };
  }
}
