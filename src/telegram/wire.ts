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

/** What every downloadable Bot API object carries (PhotoSize, Document, Audio, Voice, Video, ...). */
export interface TgFileRef {
  /** The handle getFile takes; usable only with this bot's token. */
  file_id: string;
  file_unique_id?: string;
  /** Declared by Telegram; a claim, never the bound on what is read. */
  file_size?: number;
}

/** Document, Audio, Video and Animation also carry the sender's name and type. */
export interface TgNamedFile extends TgFileRef {
  file_name?: string;
  mime_type?: string;
}

export interface TgPhotoSize extends TgFileRef {
  width: number;
  height: number;
}

export interface TgVoice extends TgFileRef {
  mime_type?: string;
}

export interface TgSticker extends TgFileRef {
  is_animated?: boolean;
  is_video?: boolean;
  emoji?: string;
}

/** getFile's answer: `file_path` names the download (`<apiRoot>/file/bot<token>/<file_path>`). */
export interface TgFile extends TgFileRef {
  file_path?: string;
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
  /** Several messages sharing it were sent as one album. */
  media_group_id?: string;
  /** Every size Telegram made of one photo, smallest first: the last is the largest. */
  photo?: TgPhotoSize[];
  document?: TgNamedFile;
  audio?: TgNamedFile;
  voice?: TgVoice;
  video?: TgNamedFile;
  video_note?: TgFileRef;
  /** A GIF or silent video; Telegram sets `document` to the same file alongside it. */
  animation?: TgNamedFile;
  sticker?: TgSticker;
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
  /**
   * One Bot API call. `onWire` is awaited right before the request leaves (after the per-chat
   * pacing wait, again before a retry): what the delivery ledger records as "sending".
   */
  call<T = unknown>(
    method: string,
    payload: TgPayload,
    signal?: AbortSignal,
    onWire?: () => Promise<void>,
  ): Promise<T>;
  /** Wrap bytes as an upload part for a payload (grammY's InputFile); absent = no uploads. */
  file?(bytes: Uint8Array, filename: string): unknown;
}
