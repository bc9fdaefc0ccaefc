/**
 * One fake socket: parley's `WaSocket` port, implemented by the fake world (server.ts). The
 * boundary is the port because WhatsApp Web cannot be faked at the wire (the Noise handshake checks
 * WhatsApp's certificate; every message is Signal-encrypted per device). Below it everything is
 * real baileys: `sendMessage` runs baileys' own message generation (`generateWAMessage`, media
 * encrypted and uploaded into the fake's loopback server), the result crosses baileys' protobuf
 * encoder and decoder, and comes back as a `fromMe` echo (`append`), as baileys' own socket does.
 */
import { EventEmitter } from "node:events";
import type {
  AnyMessageContent,
  MiscMessageGenerationOptions,
  WAMessage,
  WAPresence,
} from "@whiskeysockets/baileys";
import { generateWAMessage, proto } from "@whiskeysockets/baileys";
import type { Contact, GroupMetadata, WaEventName, WaEvents, WaSocket } from "../../../src/whatsapp/wire.js";
import type { FakeWhatsApp } from "./server.js";

/** baileys' errors carry the reason as a Boom status code; parley reads exactly that shape. */
export function closedWith(statusCode: number, message = "connection closed"): Error {
  return Object.assign(new Error(message), { output: { statusCode } });
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
    },
  };

  constructor(private readonly world: FakeWhatsApp) {
    this.emitter.setMaxListeners(50);
  }

  get user(): Contact | undefined {
    const me = this.world.operator;
    return { id: `${me.pn.split("@")[0]}:12@s.whatsapp.net`, lid: me.lid };
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
    return Object.fromEntries(
      [...this.world.groups].map((id) => [
        id,
        {
          id,
          subject: `Group ${id.split("@")[0]?.slice(-4)}`,
          owner: undefined,
          participants: [],
        } as unknown as GroupMetadata,
      ]),
    );
  }

  async requestPairingCode(phoneNumber: string): Promise<string> {
    this.world.record({ kind: "pairing_code", phone: phoneNumber });
    return "PARL3YWA";
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.world.forget(this);
  }

  async logout(): Promise<void> {
    this.world.record({ kind: "logout" });
    this.world.disconnect(401, this);
  }
}
