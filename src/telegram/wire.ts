/**
 * The slice of the Bot API's wire shapes parley reads, and the one call port every module uses.
 * Declared here rather than imported from the SDK so the transport, renderer and dispatcher load
 * without grammY (only channel.ts and client.ts do), and so the fake's envelopes type-check.
 */

export interface TgUser {
  id: number;
  is_bot: boolean;
  first_name?: string;
  username?: string;
}

export interface TgChat {
  id: number;
  type: "private" | "group" | "supergroup" | "channel";
  is_forum?: boolean;
  title?: string;
}

/** Offsets and lengths are UTF-16 code units (a JS string's own indexing). */
export interface TgEntity {
  type: string;
  offset: number;
  length: number;
  user?: TgUser;
  url?: string;
}

export interface TgInlineButton {
  text: string;
  callback_data?: string;
}

export interface TgInlineKeyboard {
  inline_keyboard: TgInlineButton[][];
}

export interface TgMessage {
  message_id: number;
  date?: number;
  chat: TgChat;
  from?: TgUser;
  sender_chat?: TgChat;
  text?: string;
  caption?: string;
  entities?: TgEntity[];
  caption_entities?: TgEntity[];
  message_thread_id?: number;
  is_topic_message?: boolean;
  reply_to_message?: TgMessage;
  reply_markup?: TgInlineKeyboard;
}

export interface TgCallbackQuery {
  id: string;
  from: TgUser;
  data?: string;
  message?: TgMessage;
}

export interface TgUpdate {
  update_id: number;
  message?: TgMessage;
  edited_message?: TgMessage;
  callback_query?: TgCallbackQuery;
}

export type TgPayload = Record<string, unknown>;

/**
 * Raw Bot API calls, `method` + payload as the Bot API documents them. The channel binds it to
 * grammY's client (with its pacing and 429 transformers); a failure rejects with grammY's error.
 */
export interface TelegramOps {
  call<T = unknown>(method: string, payload: TgPayload, signal?: AbortSignal): Promise<T>;
  /** Wrap bytes as an upload part for a payload (grammY's InputFile); absent = no uploads. */
  file?(bytes: Uint8Array, filename: string): unknown;
}
