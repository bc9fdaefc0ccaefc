/**
 * WeCom's AI-bot long connection, at the wire: the JSON frames on the one WebSocket, typed and read
 * defensively (a frame is platform input: whatever does not have the expected shape is dropped, never
 * trusted). Every frame is `{ cmd?, headers: { req_id }, body?, errcode?, errmsg? }`; an answer to
 * something we sent (a subscribe, a ping, a reply) carries no `cmd`, only the req_id and an errcode.
 */

import type { Logger } from "../messaging/base/logger.js";
import { truncateUtf8 } from "../messaging/text/split.js";
import { WECOM_MAX_REPLY_BYTES } from "./limits.js";

export const CMD_SUBSCRIBE = "aibot_subscribe";
export const CMD_PING = "ping";
export const CMD_CALLBACK = "aibot_msg_callback";
export const CMD_EVENT = "aibot_event_callback";
export const CMD_RESPOND = "aibot_respond_msg";
export const CMD_SEND = "aibot_send_msg";

/** The req_id of a reply that no longer routes (its conversation turn is gone): every stream on it is dead. */
export const ERR_UNROUTABLE = 846605;
/** The bubble outlived WeCom's stream lifetime (10 minutes): that stream id is dead, a new one is not. */
export const ERR_STREAM_EXPIRED = 846608;

/** One media object of a callback: a short-lived URL and the object's own AES key. */
export interface WireMedia {
  url?: string;
  aeskey?: string;
  filename?: string;
}

export interface WireMixedItem {
  msgtype?: string;
  text?: { content?: string };
  image?: WireMedia;
}

/** The body of an aibot_msg_callback: who wrote, where, and what. */
export interface CallbackBody {
  msgid?: string;
  aibotid?: string;
  chatid?: string;
  /** "single" for a one-to-one chat; "group" otherwise. */
  chattype?: string;
  from?: { userid?: string };
  msgtype?: string;
  text?: { content?: string };
  image?: WireMedia;
  file?: WireMedia;
  video?: WireMedia;
  /** WeCom's own transcript of a voice message: the text is the payload. */
  voice?: { content?: string };
  mixed?: { msg_item?: WireMixedItem[] };
  /** A one-shot HTTPS endpoint that accepts one answer to this message. */
  response_url?: string;
}

export interface CallbackFrame {
  cmd: typeof CMD_CALLBACK;
  headers: { req_id: string };
  body: CallbackBody;
}

export interface EventFrame {
  cmd: typeof CMD_EVENT;
  headers: { req_id: string };
  body: { msgid?: string; from?: { userid?: string }; event?: { eventtype?: string } };
}

/** The answer to something we sent, told apart by its req_id only. */
export interface AckFrame {
  headers: { req_id: string };
  errcode: number;
}

export type InboundFrame =
  | { kind: "callback"; frame: CallbackFrame }
  | { kind: "event"; frame: EventFrame; eventType: string }
  | { kind: "ack"; frame: AckFrame }
  /** Not a frame we act on, and why (the drop's reason); `shape` names its cmd when it had one. */
  | { kind: "unknown"; reason: "unparseable" | "missing_id" | "unknown_shape"; shape?: string };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Read one text frame; `unknown` for anything that is not a frame we act on (logged by the caller). */
export function readFrame(data: string): InboundFrame {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    // Not JSON at all: nothing in it can be read, not even a cmd.
    return { kind: "unknown", reason: "unparseable" };
  }
  if (!isObject(parsed)) return { kind: "unknown", reason: "unparseable" };
  const shape = typeof parsed.cmd === "string" ? parsed.cmd : undefined;
  const named = shape === undefined ? {} : { shape };
  if (!isObject(parsed.headers)) return { kind: "unknown", reason: "missing_id", ...named };
  const reqId = parsed.headers.req_id;
  if (typeof reqId !== "string" || reqId === "") return { kind: "unknown", reason: "missing_id", ...named };
  const headers = { req_id: reqId };
  if (parsed.cmd === CMD_CALLBACK && isObject(parsed.body))
    return { kind: "callback", frame: { cmd: CMD_CALLBACK, headers, body: parsed.body as CallbackBody } };
  if (parsed.cmd === CMD_EVENT && isObject(parsed.body)) {
    const event = isObject(parsed.body.event) ? parsed.body.event : {};
    const eventType = typeof event.eventtype === "string" ? event.eventtype : "";
    return {
      kind: "event",
      frame: { cmd: CMD_EVENT, headers, body: parsed.body as EventFrame["body"] },
      eventType,
    };
  }
  if (parsed.cmd === undefined && typeof parsed.errcode === "number")
    return { kind: "ack", frame: { headers, errcode: parsed.errcode } };
  return { kind: "unknown", reason: "unknown_shape", shape: shape ?? "no_cmd" };
}

/** A frame we send. `body` is absent only on a ping. */
export interface OutboundFrame {
  cmd: string;
  headers: { req_id: string };
  body?: Record<string, unknown>;
}

export function subscribeFrame(reqId: string, botId: string, secret: string): OutboundFrame {
  return { cmd: CMD_SUBSCRIBE, headers: { req_id: reqId }, body: { bot_id: botId, secret } };
}

export function pingFrame(reqId: string): OutboundFrame {
  return { cmd: CMD_PING, headers: { req_id: reqId } };
}

/** One frame of a streamed bubble: `content` is the bubble's WHOLE text (it replaces), `finish` seals. */
export function streamFrame(
  reqId: string,
  streamId: string,
  content: string,
  finish: boolean,
): OutboundFrame {
  return {
    cmd: CMD_RESPOND,
    headers: { req_id: reqId },
    body: { msgtype: "stream", stream: { id: streamId, finish, content } },
  };
}

/** A push into a conversation the user has written to: markdown, its own req_id. */
export function pushFrame(reqId: string, chatId: string, content: string): OutboundFrame {
  return {
    cmd: CMD_SEND,
    headers: { req_id: reqId },
    body: { chatid: chatId, msgtype: "markdown", markdown: { content } },
  };
}

/**
 * The byte cap, enforced where content leaves the process (a frame, a push, a response_url body).
 * Every caller already splits well below it, so this cuts only what a future path forgot to bound:
 * at a code point (never inside a CJK character or an emoji's surrogate pair), and logged (sizes
 * only, never text), rather than sent whole for WeCom to refuse with the answer lost.
 */
export function withinWireCap(content: string, logger: Logger): string {
  const bounded = truncateUtf8(content, WECOM_MAX_REPLY_BYTES);
  if (bounded !== content)
    logger.warn("wecom: content over the byte cap was cut at the wire", {
      bytes: Buffer.byteLength(content, "utf8"),
      cap: WECOM_MAX_REPLY_BYTES,
    });
  return bounded;
}
