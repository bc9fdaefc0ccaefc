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
  proto,
  WAMessage,
  WAMessageKey,
  WAPresence,
  WAVersion,
} from "@whiskeysockets/baileys";

/** The events parley listens to; anything else the socket emits is none of its business. */
export type WaEventName =
  | "connection.update"
  | "creds.update"
  | "messages.upsert"
  | "messages.update"
  | "lid-mapping.update"
  | "groups.update"
  | "group-participants.update";

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
  groupMetadata(jid: string): Promise<GroupMetadata>;
  /** baileys' LID mapping store (lib/Signal/lid-mapping.js): a linked identity to its phone JID and back. */
  readonly signalRepository: {
    readonly lidMapping: {
      getPNForLID(lid: string): Promise<string | null>;
      getLIDForPN(pn: string): Promise<string | null>;
    };
  };
  /** The pairing-code flow (`parley whatsapp link --phone`). */
  requestPairingCode(phoneNumber: string): Promise<string>;
  end(error: Error | undefined): Promise<void> | void;
  logout(msg?: string): Promise<void>;
}

/**
 * What parley sets on every socket besides the auth state (makeWASocket's config, lib/Types/Socket):
 * the announced WhatsApp Web version, the recent sends a retry asks for, the group metadata cache.
 */
export interface WaSocketOptions {
  version: WAVersion;
  getMessage(key: WAMessageKey): Promise<proto.IMessage | undefined>;
  cachedGroupMetadata(jid: string): Promise<GroupMetadata | undefined>;
}

export type { AnyMessageContent, Contact, GroupMetadata, WAMessage, WAMessageKey };
