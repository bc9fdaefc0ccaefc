/**
 * WeCom's numbers in one place, each with where it comes from.
 */

/** stream.content and markdown.content are capped in UTF-8 BYTES, not characters. */
export const WECOM_MAX_REPLY_BYTES = 20_480;
/**
 * The code-point floor: safe at 4 bytes per code point, so a bubble cut by characters can never land
 * over the byte cap whatever the script (a CJK answer sits ~3x over a character cap that ignores it).
 */
export const WECOM_MAX_REPLY_CHARS = WECOM_MAX_REPLY_BYTES / 4;
/**
 * Room each bubble keeps for what surrounds the answer (the status line, a decided prompt's outcome,
 * the steer chip); the answer itself is split at the rest.
 */
export const WECOM_FRAME_RESERVE_CHARS = 512;
export const WECOM_ANSWER_CHARS = WECOM_MAX_REPLY_CHARS - WECOM_FRAME_RESERVE_CHARS;

/** A bubble is writable for 10 minutes from its first frame; later frames are refused (846608). */
export const WECOM_STREAM_LIFETIME_MS = 10 * 60_000;
/**
 * Rolled a little before that lifetime: a frame sent at 9:59 that lands at 10:01 would be the one
 * refused, and the user would miss it until the next roll.
 */
export const WECOM_ROLL_AGE_MS = WECOM_STREAM_LIFETIME_MS - 30_000;

/**
 * Pushes (aibot_send_msg) WeCom accepts per conversation: 30 a minute and 1,000 an hour
 * (https://developer.work.weixin.qq.com/document/path/101463, 主动推送消息). A push past either is
 * refused with 45009.
 */
export const WECOM_PUSHES_PER_MINUTE = 30;
export const WECOM_PUSHES_PER_HOUR = 1_000;
/**
 * WeCom counts its windows on its own receipt clock, not ours: two pushes 59,999 ms apart by our
 * clock were refused as "within a minute". So each window is budgeted this much longer than it is.
 */
export const WECOM_PUSH_WINDOW_MARGIN_MS = 1_000;
/**
 * A push not acknowledged (its ack timed out, or the socket closed with it in flight) is sent again
 * up to this many times (after the reconnect when the socket closed): a part nobody confirmed must
 * not be taken for delivered, and a re-send repeats at worst.
 */
export const WECOM_MAX_RESENDS = 3;
/** A wait for push budget longer than this is said in the chat (the rest of the answer is coming). */
export const WECOM_LONG_BUDGET_WAIT_MS = 15_000;

/** The heartbeat WeCom expects on the long connection. */
export const WECOM_PING_INTERVAL_MS = 30_000;
/** Pings without an answer before the connection is taken for dead. */
export const WECOM_MISSED_PINGS = 2;
/** How long an answer to a frame we sent is awaited; past it the verdict is unknown. */
export const WECOM_ACK_TIMEOUT_MS = 5_000;

/** The largest file WeCom carries (plaintext); what is read is at most 32 bytes more (the padding). */
export const WECOM_MAX_PLAINTEXT_BYTES = 20 * 1024 * 1024;
/** PKCS#7 to a 32-byte block always adds 1..32 bytes, so the ciphertext cap is the plaintext one + 32. */
export const WECOM_PAD_BLOCK = 32;
export const WECOM_MAX_CIPHERTEXT_BYTES = WECOM_MAX_PLAINTEXT_BYTES + WECOM_PAD_BLOCK;

/** Reconnect backoff: doubling from the base up to the ceiling. */
export const WECOM_RECONNECT_BASE_MS = 1_000;
export const WECOM_RECONNECT_MAX_MS = 60_000;
/**
 * A connection must stay up this long for its close to reset the backoff: an accept-then-close loop
 * would otherwise reconnect at the base delay forever.
 */
export const WECOM_MIN_HEALTHY_MS = 30_000;
