/**
 * WhatsApp under the channel contract: the real transport and renderer over the fake's socket (the
 * WaSocket port; baileys' message generation and protobufs below it), and the whole channel
 * (start()) against the fake. Outbound payloads are every text and edit parley sent, as sent and as
 * the phone shows it (the dialect's markers gone).
 */
import type { WAMessage } from "@whiskeysockets/baileys";
import { proto } from "@whiskeysockets/baileys";
import type { MessagingTransport } from "../../src/messaging/channel/transport.js";
import type { AuditSink } from "../../src/messaging/security/audit.js";
import type { WhatsAppSettings } from "../../src/whatsapp/index.js";
import { whatsappChannel } from "../../src/whatsapp/index.js";
import { extract } from "../../src/whatsapp/media.js";
import { WhatsAppRenderer } from "../../src/whatsapp/renderer.js";
import { start as startWhatsApp } from "../../src/whatsapp/start.js";
import type { WaAddress } from "../../src/whatsapp/surface.js";
import type { WaEnvelope } from "../../src/whatsapp/transport.js";
import { WHATSAPP_CAPABILITIES, WhatsAppTransport } from "../../src/whatsapp/transport.js";
import { FakeWhatsApp } from "../fakes/whatsapp/server.js";
import { testChannelContext } from "../helpers/channel-context.js";
import { testDrops } from "../helpers/drops.js";
import { GUEST, GUEST_JID, linkedHome, openTransport, STRANGER_JID } from "../whatsapp/harness.js";
import type { ChannelHarness, OutboundMessage } from "./contract.js";
import type { DispatcherHarness } from "./dispatcher-contract.js";
import { liveChannel } from "./dispatcher-contract.js";

const OWNER = "+4917000000001";

/** What a phone shows for a body in the dialect: the emphasis markers are not displayed. */
export function shownOnPhone(text: string): string {
  return text.replace(/[*_~`]/g, "");
}

let seq = 0;

function message(chat: string, fromMe: boolean, text: string, id: string): WAMessage {
  const info = proto.WebMessageInfo.fromObject({
    key: { remoteJid: chat, fromMe, id },
    message: { conversation: text },
    messageTimestamp: Math.floor(Date.now() / 1000),
  });
  return proto.WebMessageInfo.decode(proto.WebMessageInfo.encode(info).finish()) as WAMessage;
}

export const whatsappHarness: ChannelHarness = {
  name: "whatsapp",
  capabilities: WHATSAPP_CAPABILITIES,
  unconfigured: (audit: AuditSink) =>
    new WhatsAppTransport({
      drops: testDrops(audit, "whatsapp"),
      audit,
    }) as unknown as MessagingTransport<unknown>,
  async configured(audit: AuditSink) {
    const fake = await FakeWhatsApp.start({ lifetimeMs: 60_000 });
    const { transport, sent, operator } = await openTransport(fake, audit);
    const envelope = (user: string, text: string, opts?: { bot?: boolean }): WaEnvelope => {
      seq += 1;
      const id = `CONTRACT${seq}`;
      if (opts?.bot) sent.remember(id);
      const own = opts?.bot === true || user === OWNER;
      const chat = own ? operator.pn : STRANGER_JID;
      const m = message(chat, own, text, id);
      return {
        message: m,
        chat,
        kind: own ? "self" : "dm",
        sender: own
          ? { jid: operator.pn, userId: operator.userId, resolved: true }
          : { jid: STRANGER_JID, userId: `+${STRANGER_JID.split("@")[0]}`, resolved: true },
        operator: own,
        content: extract(m) ?? { text, files: [], notes: [], mentions: [], quotedId: undefined },
        addressed: false,
      };
    };
    return {
      transport: transport as unknown as MessagingTransport<unknown>,
      conversationId: operator.pn,
      allowedUser: OWNER,
      envelope,
      newRenderer: () =>
        new WhatsAppRenderer(transport, { chat: operator.pn, editIntervalMs: 0, firstFrameMs: 0 }),
      outbound: (): OutboundMessage[] =>
        fake.records.flatMap((r) =>
          r.kind === "send" || r.kind === "edit"
            ? [{ text: r.text, rendered: [shownOnPhone(r.text)], buttons: 0 }]
            : [],
        ),
      close: () => fake.stop(),
    };
  },
};

/** The whole WhatsApp channel against the fake: the operator in their self-chat, an admitted guest. */
export const whatsappDispatcher: DispatcherHarness = {
  name: "whatsapp",
  async lab() {
    const fake = await FakeWhatsApp.start({ lifetimeMs: 60_000 });
    const home = await linkedHome(fake);
    const self: WaAddress = { kind: "self", chat: fake.operator.pn };
    const guest: WaAddress = { kind: "dm", chat: GUEST_JID, peer: GUEST };
    return {
      owner: OWNER,
      guest: GUEST,
      async start(shared) {
        const ctx = testChannelContext<WhatsAppSettings>(whatsappChannel, {
          section: { webSocketUrl: fake.webSocketUrl, dmPolicy: "allowlist", allowFrom: [GUEST] },
          home,
          ...shared,
        });
        const running = await startWhatsApp(ctx, {
          createSocket: fake.createSocket,
          renderer: { editIntervalMs: 0, firstFrameMs: 0 },
        });
        await fake.waitFor(() => running.connection.state === "open", 5000, "the connection");
        return liveChannel(
          running,
          (user) => (user === OWNER ? self : guest),
          async (user, text) => {
            if (user === OWNER) fake.receive({ chat: fake.operator.pn, fromMe: true, text });
            else if (user === GUEST) fake.receive({ chat: GUEST_JID, text });
            else fake.receive({ chat: STRANGER_JID, text });
          },
        );
      },
      visible: () => fake.visible().map(shownOnPhone),
      reactions: () => fake.reactions().map((r) => r.emoji),
      close: () => fake.stop(),
    };
  },
};
