/**
 * TransportCapabilities: what a channel can do. Every default is the weakest channel's value (the
 * WhatsApp-like floor), so a transport that forgets to declare a field degrades safely instead of
 * over-promising. Layer: messaging (leaf).
 */
import type { TablePolicyName } from "../text/tables/policy.js";

export interface TransportCapabilities {
  /** Live in-place streaming of a reply. */
  readonly streaming: boolean;
  /** Messages can be edited after sending. */
  readonly edit: boolean;
  readonly reactions: boolean;
  /** Two directions land separately per channel, so one boolean could not describe both. */
  readonly filesInbound: boolean;
  /** ENFORCED: False keeps printing a local image path, the honest degradation. */
  readonly filesOutbound: boolean;
  /** ENFORCED: whether a native widget appears at all; the typed/numbered forms always remain. */
  readonly richBlocks: boolean;
  readonly threads: boolean;
  /** Outbound table presentation; read only by renderers that render tables. */
  readonly tableMode: TablePolicyName;
  /** The target renders a GFM pipe table as a table; native may pass through only when true. */
  readonly nativeTables: boolean;
  /** ENFORCED: only a transport whose inbound path resolves the mirror binding may declare it. */
  readonly supportsSessionResume: boolean;
  /** A CHARACTER (code point) cap; byte-capped platforms declare a value safe at 4 bytes/char. */
  readonly maxMessageChars: number;
  /** The real UTF-8 byte budget for a byte-capped platform; 0 = no byte cap (honest default). */
  readonly maxMessageBytes: number;
  /** TOTAL interactive choices per prompt; overflow degrades to a numbered text list. */
  readonly maxButtons: number;
  /** ENFORCED: the platform parses broadcast mentions (@everyone, <!channel>) -> defang them. */
  readonly mentionGrammars: boolean;
  readonly supportsProactiveSend: boolean;
  /** ENFORCED: sendMessage answers a real id, so an empty id means "refused". */
  readonly returnsMessageId: boolean;
}

export const DEFAULT_CAPABILITIES: TransportCapabilities = Object.freeze({
  streaming: false,
  edit: false,
  reactions: false,
  filesInbound: false,
  filesOutbound: false,
  richBlocks: false,
  threads: false,
  tableMode: "off",
  nativeTables: false,
  supportsSessionResume: false,
  maxMessageChars: 4096,
  maxMessageBytes: 0,
  maxButtons: 3,
  mentionGrammars: true,
  supportsProactiveSend: true,
  returnsMessageId: true,
});

/** Build a capability set from a partial declaration; unspecified fields take the floor. */
export function defineCapabilities(declared: Partial<TransportCapabilities> = {}): TransportCapabilities {
  return Object.freeze({ ...DEFAULT_CAPABILITIES, ...declared });
}

/** The JSON form (snake_case, as the conformance doc and the original's to_dict use). */
export function capabilitiesToJson(caps: TransportCapabilities): Record<string, boolean | number | string> {
  return {
    streaming: caps.streaming,
    edit: caps.edit,
    reactions: caps.reactions,
    files_inbound: caps.filesInbound,
    files_outbound: caps.filesOutbound,
    rich_blocks: caps.richBlocks,
    threads: caps.threads,
    table_mode: caps.tableMode,
    native_tables: caps.nativeTables,
    supports_session_resume: caps.supportsSessionResume,
    max_message_chars: caps.maxMessageChars,
    max_message_bytes: caps.maxMessageBytes,
    max_buttons: caps.maxButtons,
    mention_grammars: caps.mentionGrammars,
    supports_proactive_send: caps.supportsProactiveSend,
    returns_message_id: caps.returnsMessageId,
  };
}

/**
 * Whether a send that did not throw actually delivered. Most transports report a refusal as an empty
 * id; id-less transports (returnsMessageId=false) return "" on success and throw on failure, so the
 * empty-id test would report every delivery as lost. The reason lives here, not at call sites.
 */
export function deliveryConfirmed(
  caps: TransportCapabilities,
  messageId: string | null | undefined,
): boolean {
  if (!caps.returnsMessageId) return true;
  return typeof messageId === "string" && messageId.length > 0;
}
