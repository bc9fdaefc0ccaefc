/**
 * One fake socket: parley's `WaSocket` port, implemented by the fake world (server.ts). The
 * boundary is the port because WhatsApp Web cannot be faked at the wire (the Noise handshake checks
 * WhatsApp's certificate; every message is Signal-encrypted per device). Below it everything is
 * real baileys: `sendMessage` runs baileys' own message generation (`generateWAMessage`, media
 * encrypted and uploaded into the fake's loopback server), the result crosses baileys' protobuf
 * encoder and decoder, and comes back as a `fromMe` echo (`append`), as baileys' own socket does.
 * What baileys does with the socket options parley sets is done here too: a send to a group asks
 * `cachedGroupMetadata` first and queries the group only on a miss (lib/Socket/messages-send.js
 * `relayMessage`); a retry receipt is answered from this socket's own recent sends, else from
 * `getMessage` (lib/Socket/messages-recv.js `sendMessagesAgain`, the cache per socket in
 * lib/Utils/message-retry-manager.js); a pairing code writes `me` into the creds at once
 * (lib/Socket/socket.js `requestPairingCode`).
 */
import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import type {
  AnyMessageContent,
  AuthenticationState,
  MiscMessageGenerationOptions,
  WAMessage,
  WAPresence,
} from "@whiskeysockets/baileys";
import { bytesToCrockford, generateWAMessage, isJidGroup, proto } from "@whiskeysockets/baileys";
import type {
  Contact,
  GroupMetadata,
  WaEventName,
  WaEvents,
  WaSocket,
  WaSocketOptions,
} from "../../../src/whatsapp/wire.js";
import type { FakeWhatsApp } from "./server.js";

/**
 * baileys' errors are Booms: the reason as `output.statusCode`, and `data` what the server sent
 * (a `failure` node's attrs, or a stream error's reason node; lib/Socket/socket.js).
 */
export function closedWith(statusCode: number, message = "connection closed", data?: unknown): Error {
  return Object.assign(new Error(message), { output: { statusCode }, ...(data ? { data } : {}) });
}

export class FakeSocket implements WaSocket {
  private readonly emitter = new EventEmitter();
  ended = false;
  readonly ev = {
    on: <E extends WaEventName>(event: E, listener: (arg: WaEvents[E]) => void) =>
      void this.emitter.on(event, listener as (arg: unknown) => void),
    off: <E extends WaEventName>(event: E, listener: (arg: WaEvents[E]) => void) =>
      void this.emitter.off(event, listener as (arg: unknown) => void),
  };

  readonly signalRepository = {
    lidMapping: {
      getPNForLID: async (lid: string): Promise<string | null> => {
        this.world.record({ kind: "lid_lookup", lid });
        return this.world.lidToPn.get(lid) ?? null;
      },
      getLIDForPN: async (pn: string): Promise<string | null> => {
        this.world.record({ kind: "pn_lookup", pn });
        for (const [lid, mapped] of this.world.lidToPn) if (mapped === pn) return lid;
        return null;
      },
    },
  };

  /** This socket's own recent sends (baileys' per-socket retry cache): empty on every new socket. */
  private readonly recentSends = new Map<string, proto.IMessage>();
  /** The QR rotation's timer while this socket waits for a scan. */
  qrTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly world: FakeWhatsApp,
    readonly auth: AuthenticationState,
    readonly options: WaSocketOptions,
  ) {
    this.emitter.setMaxListeners(50);
  }

  /** baileys' `sock.user` is the creds' `me`. */
  get user(): Contact | undefined {
    const me = this.auth.creds.me;
    return me ? { id: me.id, ...(me.lid ? { lid: me.lid } : {}) } : undefined;
  }

  /** A recipient could not decrypt `id` and asks again: answered from the cache, else getMessage. */
  async retryRequest(chat: string, id: string): Promise<boolean> {
    const message =
      this.recentSends.get(id) ?? (await this.options.getMessage({ remoteJid: chat, id, fromMe: true }));
    this.world.record({ kind: "retry", id, answered: message !== undefined });
    return message !== undefined;
  }

  emit<E extends WaEventName>(event: E, arg: WaEvents[E]): void {
    if (!this.ended) this.emitter.emit(event, arg);
  }

  async sendMessage(
    jid: string,
    content: AnyMessageContent,
    options: MiscMessageGenerationOptions = {},
  ): Promise<WAMessage | undefined> {
    if (this.ended) throw closedWith(428, "Connection Closed");
    if (isJidGroup(jid)) {
      // relayMessage: the cached metadata, and a query of the group only when it has no participants.
      const cached = await this.options.cachedGroupMetadata(jid);
      if (!cached || !Array.isArray(cached.participants)) await this.groupMetadata(jid);
    }
    const generated = await generateWAMessage(jid, content, {
      userJid: this.world.operator.pn,
      upload: (path, opts) => this.world.upload(path, opts.mediaType),
      ...(options.messageId ? { messageId: options.messageId } : {}),
      logger: undefined as never,
    });
    // What the server relays is what crossed the wire: the protobuf, encoded and decoded.
    const wire = proto.WebMessageInfo.decode(proto.WebMessageInfo.encode(generated).finish()) as WAMessage;
    this.world.relay(jid, wire);
    this.world.outbox.push(wire);
    if (wire.key.id && wire.message) this.recentSends.set(wire.key.id, wire.message);
    // baileys emits its own sends back as `append` (emitOwnEvents), after the call returns.
    setImmediate(() => this.emit("messages.upsert", { messages: [wire], type: "append" }));
    return wire;
  }

  async sendPresenceUpdate(type: WAPresence, toJid?: string): Promise<void> {
    if (this.ended) throw closedWith(428, "Connection Closed");
    this.world.record({ kind: "presence", type, chat: toJid ?? "" });
  }

  async groupFetchAllParticipating(): Promise<{ [jid: string]: GroupMetadata }> {
    this.world.record({ kind: "group_list" });
    return Object.fromEntries([...this.world.groups].map((id) => [id, this.world.groupMeta(id)]));
  }

  async groupMetadata(jid: string): Promise<GroupMetadata> {
    this.world.record({ kind: "group_metadata", jid });
    return this.world.groupMeta(jid);
  }

  /** baileys: a Crockford code from 5 random bytes, `me` and the code written into the creds at once. */
  async requestPairingCode(phoneNumber: string): Promise<string> {
    const code = bytesToCrockford(randomBytes(5));
    this.auth.creds.pairingCode = code;
    this.auth.creds.me = { id: `${phoneNumber}@s.whatsapp.net`, name: "~" };
    this.emit("creds.update", this.auth.creds);
    this.world.record({ kind: "pairing_code", phone: phoneNumber, code });
    return code;
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.stopQr();
    this.world.forget(this);
  }

  stopQr(): void {
    if (this.qrTimer) clearTimeout(this.qrTimer);
    this.qrTimer = null;
  }

  async logout(): Promise<void> {
    this.world.record({ kind: "logout" });
    this.world.disconnect(401, this);
  }
}
