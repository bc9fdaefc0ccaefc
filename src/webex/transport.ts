/**
 * WebexTransport: Webex as a MessagingTransport. An envelope is an activity already hydrated
 * (GET /messages/{id}), so the gate sees who spoke, where, and in what kind of room. Deny by
 * default: the sender's e-mail must be listed (lowercased); a direct room always may be used, a
 * space only with `allowGroupRooms` AND its id listed, and only on a POSITIVE room type (an unknown
 * type is refused, never guessed to be direct). Every refusal is audited by the base class; a space
 * refusal also records the room id.
 */
import { defineCapabilities } from "../messaging/channel/capabilities.js";
import type { InboundAttachment, InboundMessage, TransportOptions } from "../messaging/channel/transport.js";
import { inboundMessage, MessagingTransport } from "../messaging/channel/transport.js";
import type { WebexClient } from "./client.js";
import { lastByteGuard, splitForWebex, WEBEX_MAX_BYTES, WEBEX_MAX_CHARS, webexSafe } from "./format.js";

export const WEBEX_CAPABILITIES = defineCapabilities({
  // Every edit is counted (at most 10 per message): no token streaming, a few status frames.
  streaming: false,
  edit: true,
  reactions: false,
  filesInbound: true,
  // The agent's images go out one file per message, after the answer (direct rooms only).
  filesOutbound: true,
  richBlocks: true,
  threads: false,
  tableMode: "auto",
  nativeTables: false,
  // The safe character floor: 7,439 bytes at 4 bytes a character.
  maxMessageChars: WEBEX_MAX_CHARS,
  maxMessageBytes: WEBEX_MAX_BYTES,
  // One submit per choice on a card; more read as a form.
  maxButtons: 5,
  // Webex has no @all text grammar a model could trigger by typing.
  mentionGrammars: false,
  supportsProactiveSend: true,
  returnsMessageId: true,
});

/** A hydrated Webex message, plus where its activity came from. */
export interface WebexEnvelope {
  messageId: string;
  roomId: string;
  /** "direct" | "group"; anything else is refused. */
  roomType: string;
  personId: string;
  email: string;
  text: string;
  files: string[];
  mentioned: boolean;
}

export type WebexRest = Pick<WebexClient, "createMessage" | "editMessage">;

export interface WebexTransportOptions extends TransportOptions {
  rest: WebexRest;
  /** The bot's own person id and e-mails (people/me): its messages are never turns. */
  self: () => { id: string; emails: readonly string[] };
  allowedEmails: ReadonlySet<string>;
  allowGroupRooms: boolean;
  allowedRoomIds: ReadonlySet<string>;
}

export class WebexTransport extends MessagingTransport<WebexEnvelope> {
  readonly channelType = "webex";
  override readonly capabilities = WEBEX_CAPABILITIES;
  /** Rooms a turn ran in during this process: the only ones a proactive send may reach. */
  private readonly known = new Set<string>();

  constructor(private readonly o: WebexTransportOptions) {
    super(o);
  }

  /** The second own-message drop (the first is the actor e-mail, before hydration). */
  protected isBotAuthored(raw: WebexEnvelope): boolean {
    const self = this.o.self();
    return raw.personId === self.id || self.emails.includes(raw.email.toLowerCase());
  }

  protected normalize(raw: WebexEnvelope): InboundMessage | null {
    if (!raw.roomId || !raw.email) return null;
    return inboundMessage({
      channelType: this.channelType,
      userId: raw.email.toLowerCase(),
      conversationId: raw.roomId,
      text: raw.text,
      messageId: raw.messageId,
      isMention: raw.mentioned,
      // Direct only on a positive "direct": any other or missing type is gated as a space.
      ...(raw.roomType === "direct" ? {} : { threadId: `space:${raw.roomId}` }),
      attachments: raw.files.map((url, i): InboundAttachment => ({ name: `file-${i + 1}`, ref: url })),
    });
  }

  authorize(message: InboundMessage): boolean {
    if (!this.o.allowedEmails.has(message.userId)) return false;
    if (message.threadId === undefined) return true;
    return this.mayUseSpace(message.conversationId, message.userId);
  }

  /** A space: the switch AND the listed id; a refusal names the room for the operator. */
  mayUseSpace(roomId: string, userId: string): boolean {
    if (this.o.allowGroupRooms && this.o.allowedRoomIds.has(roomId)) return true;
    this.audit.log("webex.space", "denied", {
      room: roomId,
      user: userId,
      reason: this.o.allowGroupRooms ? "room_not_listed" : "group_rooms_off",
    });
    return false;
  }

  /** An envelope's room kind, positively: only "direct" and "group" are rooms parley knows. */
  static knownRoomType(type: string | undefined): type is "direct" | "group" {
    return type === "direct" || type === "group";
  }

  remember(roomId: string): void {
    this.known.add(roomId);
  }

  override maySendTo(conversationId: string): boolean {
    return this.known.has(conversationId);
  }

  async sendMessage(conversationId: string, content: string): Promise<string> {
    let first = "";
    for (const chunk of splitForWebex(webexSafe(content))) {
      for (const part of lastByteGuard(chunk)) {
        const res = await this.o.rest.createMessage({ roomId: conversationId, markdown: part });
        if (!res.ok) return "";
        first ||= res.data.id;
      }
    }
    return first;
  }
}
