/**
 * Telegram's fixed numbers and its validated reaction set, as named constants. Pure: the transport
 * and renderer import these without loading the SDK.
 */

/** A message is at most 4096 UTF-16 code units (after entity parsing; we bound the HTML itself). */
export const TELEGRAM_MAX_MESSAGE_UTF16 = 4096;
/**
 * The source (markdown) budget per message, in code points. Below the wire cap so the HTML form,
 * the steer chip and the live footer usually fit without a second split; the wire bound is then
 * re-checked in UTF-16 at the boundary anyway.
 */
export const TELEGRAM_SOURCE_CAP = 4000;
/** callback_data is capped in BYTES. */
export const TELEGRAM_MAX_CALLBACK_BYTES = 64;
/** Multipart upload ceiling per photo (by URL is 5 MB, by file_id unlimited; a local file is multipart). */
export const TELEGRAM_MAX_PHOTO_BYTES = 10 * 1024 * 1024;
export const TELEGRAM_MAX_MEDIA_GROUP = 10;
/**
 * The largest file the Bot API lets a bot download (getFile: "up to 20MB", taken here as 20 MiB;
 * a file between 20 MB and 20 MiB that Telegram refuses is still refused visibly, by getFile).
 * Bigger files get no download link at all.
 */
export const TELEGRAM_MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024;
/** Aggregate bytes per answer: ten photos at the per-file ceiling would hold 100 MiB resident. */
export const TELEGRAM_MAX_TOTAL_UPLOAD_BYTES = 25 * 1024 * 1024;
/** Inline keyboard buttons we offer for [OPTIONS:]; the rest degrade to a numbered list. */
export const TELEGRAM_MAX_BUTTONS = 8;

/**
 * The 73 emoji setMessageReaction accepts, spelled WITHOUT U+FE0F as the Bot API reference lists
 * them. Seven members are documented bare while keyboards emit the VS16 form, so membership is
 * tested on normalized spellings on both sides.
 */
export const REACTION_EMOJI: ReadonlySet<string> = new Set(
  [
    "👍",
    "👎",
    "❤",
    "🔥",
    "🥰",
    "👏",
    "😁",
    "🤔",
    "🤯",
    "😱",
    "🤬",
    "😢",
    "🎉",
    "🤩",
    "🤮",
    "💩",
    "🙏",
    "👌",
    "🕊",
    "🤡",
    "🥱",
    "🥴",
    "😍",
    "🐳",
    "❤‍🔥",
    "🌚",
    "🌭",
    "💯",
    "🤣",
    "⚡",
    "🍌",
    "🏆",
    "💔",
    "🤨",
    "😐",
    "🍓",
    "🍾",
    "💋",
    "🖕",
    "😈",
    "😴",
    "😭",
    "🤓",
    "👻",
    "👨‍💻",
    "👀",
    "🎃",
    "🙈",
    "😇",
    "😨",
    "🤝",
    "✍",
    "🤗",
    "🫡",
    "🎅",
    "🎄",
    "☃",
    "💅",
    "🤪",
    "🗿",
    "🆒",
    "💘",
    "🙉",
    "🦄",
    "😘",
    "💊",
    "🙊",
    "😎",
    "👾",
    "🤷‍♂",
    "🤷",
    "🤷‍♀",
    "😡",
  ].map((e) => normalizeReactionEmoji(e)),
);

/** Strip VS16 (U+FE0F): "❤️" and "❤" are one reaction. */
export function normalizeReactionEmoji(emoji: string): string {
  return emoji.replace(/\uFE0F/g, "");
}

export function isReactionEmoji(emoji: string): boolean {
  return REACTION_EMOJI.has(normalizeReactionEmoji(emoji));
}

/** The steer receipt: a reaction on the user's own message instead of a bubble. */
export const STEER_RECEIPT_EMOJI = "👌";
