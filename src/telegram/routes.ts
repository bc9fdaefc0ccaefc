/**
 * Telegram's addresses: where a message came from (a DM or a forum Topic), the session key it maps
 * to, and the one spelling of "this conversation" the mirror commands use. One route string names
 * one conversation, and it is the ConversationState bucket, the generation seed and the key scope
 * at once, so the three cannot disagree about which conversation a message belongs to.
 */
import type { ChannelLink } from "../messaging/session/keys.js";
import { buildDmSessionKey, CHAT_TYPE_DIRECT, CHAT_TYPE_FORUM } from "../messaging/session/keys.js";
import type { TelegramDmScope } from "./index.js";

export interface Route {
  /** DM: the peer's user id. Topic: "{chatId}:{threadId}". */
  route: string;
  chatType: typeof CHAT_TYPE_DIRECT | typeof CHAT_TYPE_FORUM;
  chatId: string;
  threadId: string | undefined;
}

/** A DM is keyed by its peer; a Topic by (chat, thread), so no Topic shares a session with a DM. */
export function routeOf(userId: string, chatId: string, threadId: string | undefined): Route {
  return threadId === undefined
    ? { route: userId, chatType: CHAT_TYPE_DIRECT, chatId, threadId: undefined }
    : { route: `${chatId}:${threadId}`, chatType: CHAT_TYPE_FORUM, chatId, threadId };
}

export function sessionKeyFor(
  r: Route,
  opts: { agent: string; gen: number; dmScope: TelegramDmScope; operator: boolean },
): string {
  return buildDmSessionKey("telegram", opts.agent, r.route, {
    gen: opts.gen,
    chatType: r.chatType,
    dmScope: opts.dmScope,
    operator: opts.operator,
  });
}

/** This conversation as a ChannelLink: the Topic rides threadId so mirrored replies land in it. */
export function locationOf(r: Route): ChannelLink {
  return r.threadId === undefined
    ? { channelType: "telegram", conversationId: r.chatId }
    : { channelType: "telegram", conversationId: r.chatId, threadId: r.threadId };
}
