/**
 * The ONE builder of every JSON body parley sends that Discord may render as a message: message
 * create, message edit, interaction callback and interaction follow-up. Every body is LLM- or
 * tool-derived, so each carries allowed_mentions {parse: []} and nobody can be notified by the
 * model's text. Doing it here, and nowhere else, is the point: a text-level defang applied per
 * call site is one new send path away from being wrong. replied_user is omitted (it defaults off).
 * Pinned by test/discord/payload.test.ts and the every-call assertion in test/discord/e2e.test.ts.
 */

/** A Discord button inside an action row (type 1). Style 1 primary, 2 secondary, 3 success, 4 danger. */
export interface Button {
  type: 2;
  style: 1 | 2 | 3 | 4;
  label: string;
  custom_id: string;
  disabled?: boolean;
}

export interface ActionRow {
  type: 1;
  components: Button[];
}

/** An attachment descriptor; its id names the files[N] part it describes. */
export interface AttachmentDescriptor {
  id: number;
  filename: string;
  description?: string;
}

export interface MessageBody {
  content: string;
  components?: ActionRow[];
  /** 1 << 6 EPHEMERAL (interaction responses only), 1 << 2 SUPPRESS_EMBEDS. */
  flags?: number;
  attachments?: AttachmentDescriptor[];
  /**
   * A creation's idempotency key (at most 25 characters): sent with enforce_nonce, Discord returns
   * the message already created under it (within a few minutes) instead of creating a second one.
   */
  nonce?: string;
}

/** What goes over the wire: the body plus the mention guard, always. */
export type WireMessage = Omit<MessageBody, "nonce"> & {
  allowed_mentions: { parse: [] };
  nonce?: string;
  enforce_nonce?: boolean;
};

export const EPHEMERAL = 1 << 6;

export function messagePayload(body: MessageBody): WireMessage {
  const out: WireMessage = { content: body.content, allowed_mentions: { parse: [] } };
  if (body.components !== undefined) out.components = body.components;
  if (body.flags !== undefined) out.flags = body.flags;
  if (body.attachments !== undefined) out.attachments = body.attachments;
  if (body.nonce !== undefined) {
    out.nonce = body.nonce;
    out.enforce_nonce = true;
  }
  return out;
}

/** Interaction callback types parley uses. */
export const CALLBACK_CHANNEL_MESSAGE = 4;
export const CALLBACK_DEFERRED_UPDATE = 6;

export type InteractionCallback =
  | { type: typeof CALLBACK_CHANNEL_MESSAGE; data: WireMessage }
  | { type: typeof CALLBACK_DEFERRED_UPDATE; data: { allowed_mentions: { parse: [] } } };

/**
 * A command reply: ephemeral, because an approved thread is readable by every member who can view it.
 * With `components` it is a private widget (the thread `/sessions` list): a press on it carries the
 * message, and the press's own token edits it (PATCH …/messages/@original after a deferred update).
 */
export function commandReply(content: string, components?: ActionRow[]): InteractionCallback {
  return {
    type: CALLBACK_CHANNEL_MESSAGE,
    data: messagePayload({ content, flags: EPHEMERAL, ...(components ? { components } : {}) }),
  };
}

/**
 * A component press acknowledged before any work (Discord's ~3 s window). It renders nothing, but
 * carries the guard anyway so that no interaction callback body exists without it.
 */
export function deferredUpdate(): InteractionCallback {
  return { type: CALLBACK_DEFERRED_UPDATE, data: { allowed_mentions: { parse: [] } } };
}
