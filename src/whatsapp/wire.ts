/**
 * The WaSocket port: the subset of a baileys socket parley calls, and nothing else. WhatsApp Web
 * cannot be faked at the wire (the Noise handshake checks WhatsApp's certificate and every message
 * is Signal-encrypted per device), so this port is the boundary the test fake implements;
 * test/whatsapp/wire-types.test.ts proves `makeWASocket`'s real return type satisfies it, so the
 * channel can call nothing the real socket lacks. Types only: importing this loads no SDK.
 */
import type {
  AnyMessageContent,
  BaileysEventMap,
  Contact,
  GroupMetadata,
  MiscMessageGenerationOptions,
  WAMessage,
  WAMessageKey,
  WAPresence,
} from "@whiskeysockets/baileys";

/** The events parley listens to; anything else the socket emits is none of its business. */
export type WaEventName =
  | "connection.update"
  | "creds.update"
  | "messages.upsert"
  | "messages.update"
  | "lid-mapping.update";

export type WaEvents = Pick<BaileysEventMap, WaEventName>;

export interface WaEventSource {
  on<E extends WaEventName>(event: E, listener: (arg: WaEvents[E]) => void): void;
  off<E extends WaEventName>(event: E, listener: (arg: WaEvents[E]) => void): void;
}

export interface WaSocket {
  readonly ev: WaEventSource;
  /** The linked account once the connection is open (`id` is the phone JID, `lid` its linked id). */
  readonly user: Contact | undefined;
  sendMessage(
    jid: string,
    content: AnyMessageContent,
    options?: MiscMessageGenerationOptions,
  ): Promise<WAMessage | undefined>;
  sendPresenceUpdate(type: WAPresence, toJid?: string): Promise<void>;
  groupFetchAllParticipating(): Promise<{ [jid: string]: GroupMetadata }>;
  /** The LID lookup: a linked identity to the phone JID it stands for (null when unknown). */
  readonly signalRepository: { readonly lidMapping: { getPNForLID(lid: string): Promise<string | null> } };
  /** The pairing-code flow (`parley whatsapp link --phone`). */
  requestPairingCode(phoneNumber: string): Promise<string>;
  end(error: Error | undefined): Promise<void> | void;
  logout(msg?: string): Promise<void>;
}

export type { AnyMessageContent, Contact, GroupMetadata, WAMessage, WAMessageKey };
