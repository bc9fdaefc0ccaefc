/**
 * Where a Telegram message may come from (the chat gate) and whether it should start a turn (the
 * activation gate). One predicate per question, used by inbound, button presses and outbound alike,
 * so "may I answer here" can never disagree with "may I send here".
 */
import type { ForumActivation } from "./index.js";
import type { TgEntity, TgMessage } from "./wire.js";

export type ChatGateOutcome =
  | "allowed_private"
  | "allowed_forum"
  | "denied_forum_not_allowed"
  | "denied_non_private_chat";

export interface ForumPolicy {
  allowForum: boolean;
  allowedForumChatIds: ReadonlySet<string>;
}

/**
 * A private chat is allowed; a group is allowed only as a real forum Topic (a supergroup message
 * WITH a thread id) in an allow-listed chat. Ordinary groups and a supergroup's General chat are
 * refused: a reply there is readable by members the user allow-list never admitted.
 */
export function forumGateOutcome(
  chatType: string,
  chatId: string,
  threadId: string | undefined,
  policy: ForumPolicy,
): ChatGateOutcome {
  if (chatType === "private") return "allowed_private";
  if (chatType === "supergroup" && threadId !== undefined) {
    return policy.allowForum && policy.allowedForumChatIds.has(chatId)
      ? "allowed_forum"
      : "denied_forum_not_allowed";
  }
  return "denied_non_private_chat";
}

export interface BotIdentity {
  id: number;
  username: string;
}

/** The handles Telegram itself classified as mentions (a handle inside a URL is a url entity). */
export function mentionHandles(text: string, entities: readonly TgEntity[]): string[] {
  return (
    entities
      .filter((e) => e.type === "mention")
      // Offsets are UTF-16 units, which is exactly how a JS string indexes: no re-encoding needed.
      .map((e) => text.slice(e.offset, e.offset + e.length).toLowerCase())
  );
}

const HANDLE_TOKEN = /(?<![\w@/.])@([A-Za-z0-9_]{3,32})\b/g;

/**
 * Does this message address the bot? Unresolved identity (before getMe) answers false, so mention
 * mode cannot behave as "always" at startup. A reply to one of the bot's own messages counts.
 */
export function addressesBot(message: TgMessage, bot: BotIdentity | null): boolean {
  if (!bot) return false;
  if (message.reply_to_message?.from?.id === bot.id) return true;
  const text = message.text ?? message.caption ?? "";
  const entities = message.entities ?? message.caption_entities;
  const handle = `@${bot.username}`.toLowerCase();
  if (!entities) {
    // "Never parsed" is not "nobody was mentioned": fall back to the token scan.
    return [...text.matchAll(HANDLE_TOKEN)].some((m) => `@${m[1]}`.toLowerCase() === handle);
  }
  if (mentionHandles(text, entities).includes(handle)) return true;
  return entities.some(
    (e) =>
      (e.type === "text_mention" && e.user?.id === bot.id) ||
      (e.type === "bot_command" &&
        text
          .slice(e.offset, e.offset + e.length)
          .toLowerCase()
          .endsWith(handle)),
  );
}

export type ActivationOutcome = "activated" | "denied_activation_off" | "denied_activation_mention_only";

/** Should it answer (after may it): a DM is answered in every mode; a Topic per forumActivation. */
export function activationOutcome(
  chatType: string,
  mode: ForumActivation,
  isMention: boolean,
): ActivationOutcome {
  if (chatType === "private" || mode === "always") return "activated";
  if (mode === "off") return "denied_activation_off";
  return isMention ? "activated" : "denied_activation_mention_only";
}
