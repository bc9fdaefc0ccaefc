/**
 * The iLink bot API's JSON, as parley reads and writes it. Every field is read defensively: the API
 * is undocumented, so a missing or mistyped field is "absent", never a crash. Shapes follow the
 * public reverse-engineered descriptions of Tencent's own plugin (field names only).
 */

/** `message_type` 2: a bot wrote it (parley's own sends come back so); a user's is 1. */
export const MESSAGE_TYPE_USER = 1;
export const MESSAGE_TYPE_BOT = 2;
/** `message_state` 2: finished (parley sends only whole messages). */
export const MESSAGE_STATE_FINISH = 2;

/** `item.type`. */
export const ITEM_TEXT = 1;
export const ITEM_IMAGE = 2;
export const ITEM_VOICE = 3;
export const ITEM_FILE = 4;
export const ITEM_VIDEO = 5;

/** `sendtyping` status: 1 typing, 2 stopped. */
export const TYPING_ON = 1;
export const TYPING_OFF = 2;

/** The errcode iLink answers when the bot's session expired (a relink may be needed). */
export const SESSION_EXPIRED = -14;

export interface WireMedia {
  encrypt_query_param?: string;
  aes_key?: string;
  encrypt_type?: number;
}

export interface WireItem {
  type?: number;
  text_item?: { text?: string };
  image_item?: { media?: WireMedia; aeskey?: string };
  voice_item?: { media?: WireMedia; text?: string };
  file_item?: { media?: WireMedia; file_name?: string; len?: string };
  video_item?: { media?: WireMedia };
  /** A quoted message: the item it quotes, and a title iLink may give it. */
  ref_msg?: { message_item?: WireItem; title?: string };
}

export interface WireMessage {
  /** An integer on the wire, up to 64 bits: a string once it is past 2^53 (json.ts reads it so). */
  message_id?: number | string;
  from_user_id?: string;
  to_user_id?: string;
  client_id?: string;
  create_time_ms?: number;
  message_type?: number;
  message_state?: number;
  item_list?: WireItem[];
  context_token?: string;
}

/** Every JSON answer carries these; a nonzero `ret` or `errcode` is a failure, whatever the HTTP status. */
export interface WireResult {
  ret?: number;
  errcode?: number;
  errmsg?: string;
}

export interface GetUpdatesResult extends WireResult {
  msgs?: WireMessage[];
  get_updates_buf?: string;
  /** The server's suggested long-poll timeout for the next call. */
  longpolling_timeout_ms?: number;
}

export interface QrCodeResult extends WireResult {
  qrcode?: string;
  qrcode_img_content?: string;
}

export interface QrStatusResult extends WireResult {
  /** `wait`, `scaned` (sic), `confirmed` or `expired`. */
  status?: string;
  bot_token?: string;
  ilink_bot_id?: string;
  baseurl?: string;
  ilink_user_id?: string;
}

export interface GetConfigResult extends WireResult {
  typing_ticket?: string;
}

const KNOWN_ITEMS: ReadonlySet<unknown> = new Set([ITEM_TEXT, ITEM_IMAGE, ITEM_VOICE, ITEM_FILE, ITEM_VIDEO]);

/**
 * What is unknown about a message, or null when parley knows its shape: a `message_type` other
 * than user or bot, or items none of which is of a type parley reads (a new kind of content must
 * be counted as such, not as an empty message). A message with one known item among unknown ones
 * is read for what it has.
 */
export function unknownShapeOf(m: WireMessage): string | null {
  const type = m.message_type;
  if (type !== undefined && type !== MESSAGE_TYPE_USER && type !== MESSAGE_TYPE_BOT)
    return `message_type=${String(type)}`;
  const items = Array.isArray(m.item_list) ? m.item_list : [];
  const unknown = items.filter((i) => !KNOWN_ITEMS.has(i?.type) && !i?.ref_msg);
  if (items.length > 0 && unknown.length === items.length) return `item.type=${String(unknown[0]?.type)}`;
  return null;
}

/** A message as iLink delivers it, or null when it is not an object. */
export function asWireMessage(raw: unknown): WireMessage | null {
  return typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as WireMessage) : null;
}

/**
 * The message id as the dedupe key reads it, exact; "" when there is none (then nothing is
 * deduped). A number is taken only while it is a safe integer: past 2^53 it would already be rounded.
 */
export function messageIdOf(m: WireMessage): string {
  const id = m.message_id;
  if (typeof id === "number") return Number.isSafeInteger(id) ? String(id) : "";
  return typeof id === "string" ? id.trim() : "";
}
