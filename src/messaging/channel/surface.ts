/**
 * The small typed surface a channel gives its ConversationHub: where a conversation's key, replies,
 * receipts, renderers and files come from. `A` is the channel's own address type (a page id, a chat
 * and Topic, a channel and thread); the hub never looks inside it. `P` is what a queued message
 * carries besides its text and files (typed, never cast).
 */
import type { Attachment, IngestLimits } from "../files/ingest.js";
import type { ReceiptSurface } from "../queue/receipt.js";
import type { ChannelLink } from "../session/keys.js";
import type { JsonValue } from "../store/port.js";
import type { Renderer } from "../turn/renderer.js";
import type { ParsedCommand } from "./command-kit.js";
import type { TurnParts } from "./delivery.js";
import type { IntakeTicket } from "./journal.js";
import type { InboundAttachment } from "./transport.js";

/** What the hub needs to know about the conversation an address names. */
export interface Conversation {
  /** One generation bucket: /new and rotation are scoped to exactly this conversation. */
  route: string;
  /** A one-to-one conversation with the bot (a shared room sees every reply). */
  direct: boolean;
  /** Where its turns render; recorded as the session's origin. */
  link: ChannelLink;
}

/** Where a conversation's messages are shown: the scope a posted list is pressable in. */
export function placeOf(c: Conversation): string {
  return `${c.link.channelType}:${c.link.conversationId}:${c.link.threadId ?? ""}`;
}

/** What a queued message carries through the hub: its files as descriptors, never bytes. */
export interface HubPayload<P> {
  /** Resolves the intake's "accepted" once the turn that answers this message starts. */
  started?: () => void;
  attachments: readonly InboundAttachment[];
  messageId?: string;
  extra?: P;
  /** The journaled messages this item answers: completed when the turn that takes it ends. */
  tickets: readonly IntakeTicket[];
  /** What its sender is not allowed (the channel's `guards`); the turn takes the strictest. */
  guards?: TurnGuards;
}

/**
 * What a channel withholds from one message's sender: someone admitted to talk to the agent is not
 * necessarily admitted to make it act (a WhatsApp contact the operator let in, a group member).
 * Every field left out means "no restriction", so a channel without guards behaves as before.
 */
export interface TurnGuards {
  /** Every tool request of the turn answering it is denied, ahead of every approve path (/yolo too). */
  denyAllTools?: boolean;
  /** False: never folded into a running turn (which may be someone else's); held behind the receipt. */
  steer?: boolean;
  /** False: a bare 1/2/3 is an ordinary message, never the answer to an open approval prompt. */
  answersApprovals?: boolean;
  /**
   * Said to the agent ahead of the message (a group's rules, who will read the answer); never shown
   * in the chat and never recorded as the user's words.
   */
  promptNote?: string;
}

/** Which local files an answer may ship (a renderer with outbound files asks at its seal). */
export interface OutboundFilePolicy {
  /** The approved root: the agent's working folder (absent = every reference refused). */
  root(): Promise<string | undefined>;
  /** The restricted-session ceiling: false keeps every path as text (and is audited). */
  allowed(): boolean;
}

export interface TurnStart<P> {
  sessionKey: string;
  files: OutboundFilePolicy;
  /** The messages this turn answers (one, or a drained burst), in arrival order. */
  extras: readonly (P | undefined)[];
  /** The platform id of the last message answered (the one a status reaction decorates). */
  messageId?: string;
  /**
   * The turn's outbound parts: every message the renderer CREATES goes through `parts.post` (or
   * takes `parts.nextKey()` as its own id), so a turn resumed after a crash edits what its first
   * run landed instead of posting it twice.
   */
  parts: TurnParts;
}

/** Posts a list as tappable choices and settles it; the hub keeps the list (PickerRegistry). */
export interface PickerSurface {
  /** The longest list text one message takes (code points); a longer list drops its descriptions. */
  readonly maxChars: number;
  /** Post `text` with one button per label; the handle a press will name, or null when it failed. */
  post(text: string, labels: readonly string[]): Promise<string | null>;
  /** Replace the list with `text` and retire its buttons. */
  settle(handle: string, text: string): Promise<void>;
}

export interface ChannelSurface<A, P = undefined> {
  conversation(address: A): Conversation;
  /** The session key of a conversation at a generation. */
  sessionKey(address: A, generation: number): string;
  /**
   * Markdown text into the conversation, split and bounded by the channel. True when every part
   * landed (a routing notice counts as delivered on confirmation alone); never throws. With
   * `parts` (a reply that answers a journaled message) each message goes through `parts.post`.
   */
  reply(address: A, text: string, parts?: TurnParts): Promise<boolean>;
  /** The one receipt bubble for messages held behind a running turn (absent: a hub that never holds). */
  receipts?(address: A): ReceiptSurface;
  newRenderer(address: A, turn: TurnStart<P>): Renderer;
  /**
   * Byte sources for a turn's files (every answered message's, in arrival order), read only now, by
   * the turn; absent when the channel takes no files.
   */
  attachments?(
    files: { refs: readonly InboundAttachment[]; extras: readonly (P | undefined)[] },
    address: A,
  ): Attachment[];
  ingestLimits?: Partial<IngestLimits>;
  /**
   * The receipt for a message folded into the running turn: a reaction on it, not a bubble (a steer
   * costs no message). Absent where the platform has no reactions.
   */
  acknowledgeSteer?(address: A, messageId: string): Promise<void>;
  /** React to a message with an emoji (an agent host's `react`); false when the platform refused it. */
  react?(address: A, messageId: string, emoji: string): Promise<boolean>;
  /** The conversation was named (auto-title): show it where the platform has a title. */
  retitle?(address: A, title: string): Promise<void>;
  /** Button lists; absent: lists are numbered text answered with a command argument. */
  pickers?(address: A): PickerSurface;
  /**
   * The journal form of a message's extra (plain data), so a restarted gateway can run it; absent
   * (or undefined) = the extra is not kept, and a resumed message runs without it.
   */
  journalExtra?(extra: P): JsonValue | undefined;
  /** The extra back from its journal form. */
  reviveExtra?(data: JsonValue, address: A): P | undefined;
  /**
   * Messages the platform sent as one (an album), each journaled on its own, merged back into one
   * message when they are resumed together; absent = resumed one by one.
   */
  mergeGroup?(messages: readonly IncomingMessage<A, P>[]): IncomingMessage<A, P>;
}

/** One authorized message, as the channel hands it to the hub. */
export interface IncomingMessage<A, P = undefined> {
  address: A;
  userId: string;
  text: string;
  messageId?: string;
  attachments?: readonly InboundAttachment[];
  extra?: P;
  /** The bot was addressed (a mention, a reply to it); a group gate may require it. */
  isMention?: boolean;
  /** False for text the user did not type (a pressed option's label): never a command. */
  interpretCommands?: boolean;
  /** The command parse the channel already made of `text` (passed down, never parsed twice). */
  parsed?: ParsedCommand | null;
  /** Where a command's answer goes when not the conversation (a slash command's own reply). */
  replyTo?: (text: string) => Promise<boolean>;
  /** The journaled messages this is (one, or an album's items): the hub completes them. */
  tickets?: readonly IntakeTicket[];
  /**
   * The channel knows this message answers an approval prompt that is no longer open (it quotes an
   * earlier process's prompt, or one already decided): a typed 1/2/3 then gets the neutral receipt
   * and goes nowhere, never to the agent and never to a newer prompt.
   */
  staleVerdict?: boolean;
}

/** The hub resolves once a message is routed, with the end of whatever work it started. */
export interface Handled {
  turn: Promise<void>;
}

export const NOTHING: Handled = Object.freeze({ turn: Promise.resolve() });

/** Inside the hub: whether the work a message started took its tickets (and will complete them). */
export type Dispatched = Handled & { took?: boolean };

/** An answer to one message: where its sender asked for it (a slash command's own reply), else its conversation. */
export function replyTo<A, P>(
  surface: Pick<ChannelSurface<A, P>, "reply">,
  message: IncomingMessage<A, P>,
  text: string,
  parts?: TurnParts,
): Promise<boolean> {
  return message.replyTo ? message.replyTo(text) : surface.reply(message.address, text, parts);
}
