/**
 * The Webex channel under the shared contract: the real WebexTransport and WebexRenderer over the
 * real REST client, against the loopback fake. `outbound()` reads what the fake stored, i.e. what a
 * Webex user would see: every version of every message the bot posted, and its cards' text.
 */
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import type { MessagingTransport } from "../../src/messaging/channel/transport.js";
import type { AuditSink } from "../../src/messaging/security/audit.js";
import { cardTexts } from "../../src/webex/cards.js";
import { WebexClient } from "../../src/webex/client.js";
import { WebexEgress } from "../../src/webex/egress.js";
import { TokenHosts } from "../../src/webex/hosts.js";
import type { WebexSettings } from "../../src/webex/index.js";
import { webexChannel } from "../../src/webex/index.js";
import { WebexRenderer } from "../../src/webex/renderer.js";
import { start as startWebex } from "../../src/webex/start.js";
import type { WebexEnvelope } from "../../src/webex/transport.js";
import { WEBEX_CAPABILITIES, WebexTransport } from "../../src/webex/transport.js";
import type { FakeWebex, FakeWebexMessage } from "../fakes/webex/server.js";
import { FakeWebex as Fake } from "../fakes/webex/server.js";
import { testChannelContext } from "../helpers/channel-context.js";
import { tempHome } from "../helpers/channel-under-test.js";
import { testDrops } from "../helpers/drops.js";
import type { ChannelHarness, OutboundMessage } from "./contract.js";
import type { DispatcherHarness } from "./dispatcher-contract.js";
import { liveChannel } from "./dispatcher-contract.js";

const ALLOWED = "alice@example.com";
const ROOM = "room-direct-alice";

export function webexClient(fake: FakeWebex, token = fake.token): WebexClient {
  return new WebexClient({
    token,
    apiUrl: fake.apiUrl,
    u2cUrl: fake.u2cUrl,
    wdmUrl: "",
    hosts: new TokenHosts([fake.apiUrl, fake.u2cUrl]),
    egress: new WebexEgress({ env: {} }),
    logger: new MemoryLogger(),
    onFrame: () => {},
    onUnreadable: () => {},
  });
}

let seq = 0;
function envelope(user: string, text: string, opts?: { bot?: boolean }): WebexEnvelope {
  seq += 1;
  return {
    messageId: `m${seq}`,
    roomId: ROOM,
    roomType: "direct",
    personId: opts?.bot ? "bot-person" : `person-${user}`,
    email: opts?.bot ? "parley@webex.bot" : user,
    text,
    files: [],
    mentioned: false,
  };
}

/** Every version of every bot message, with its card's text: all a reader could have seen. */
export function shown(m: FakeWebexMessage): string[] {
  return [...m.versions, ...m.attachments.flatMap(cardTexts)];
}

function buttonsOf(m: FakeWebexMessage): number {
  return m.attachments.reduce<number>(
    (n, a) => n + ((a as { content?: { actions?: unknown[] } }).content?.actions?.length ?? 0),
    0,
  );
}

export const webexHarness: ChannelHarness = {
  name: "webex",
  capabilities: WEBEX_CAPABILITIES,
  unconfigured: (audit: AuditSink) =>
    new WebexTransport({
      drops: testDrops(audit, "webex"),
      audit,
      // Never called: an unconfigured transport refuses before any send.
      rest: {
        createMessage: async () => ({ ok: false, status: 0, message: "" }),
        editMessage: async () => ({ ok: false, status: 0, message: "" }),
      },
      self: () => ({ id: "bot", emails: [] }),
      allowedEmails: new Set(),
      allowGroupRooms: false,
      allowedRoomIds: new Set(),
    }) as unknown as MessagingTransport<unknown>,
  async configured(audit: AuditSink) {
    const fake = await new Fake().start();
    fake.addRoom(ROOM, "direct");
    const rest = webexClient(fake);
    const transport = new WebexTransport({
      drops: testDrops(audit, "webex"),
      audit,
      rest,
      self: () => ({ id: "bot-person", emails: ["parley@webex.bot"] }),
      allowedEmails: new Set([ALLOWED]),
      allowGroupRooms: false,
      allowedRoomIds: new Set(),
    });
    return {
      transport: transport as unknown as MessagingTransport<unknown>,
      conversationId: ROOM,
      allowedUser: ALLOWED,
      envelope,
      newRenderer: () =>
        new WebexRenderer({ rest, roomId: ROOM, logger: new MemoryLogger(), statusStartMs: 0 }),
      outbound: (): OutboundMessage[] =>
        fake.botMessages(ROOM).map((m) => ({ text: m.markdown, rendered: shown(m), buttons: buttonsOf(m) })),
      close: () => fake.close(),
    };
  },
};

/** The whole Webex channel (start()) against the fake REST + device socket: two people in DMs. */
export const webexDispatcher: DispatcherHarness = {
  name: "webex",
  async lab() {
    const fake = await new Fake().start();
    const owner = "owner@example.com";
    const guest = "guest@example.com";
    const rooms: Record<string, string> = { [owner]: "room-owner", [guest]: "room-guest" };
    for (const id of Object.values(rooms)) fake.addRoom(id, "direct");
    const address = (user: string) => ({ roomId: rooms[user] ?? "", space: false, email: user });
    const home = tempHome("webex-dispatch");
    return {
      owner,
      guest,
      async start(shared) {
        const ctx = testChannelContext<WebexSettings>(webexChannel, {
          section: { allowedEmails: [owner, guest], owner, apiUrl: fake.apiUrl, u2cUrl: fake.u2cUrl },
          env: { WEBEX_BOT_TOKEN: fake.token },
          home,
          ...shared,
        });
        const running = await startWebex(ctx, { statusStartMs: 0 });
        return liveChannel(
          running,
          address,
          async (user, text) =>
            void fake.userMessage({ email: user, roomId: rooms[user] ?? "room-stranger", text }),
        );
      },
      // What a reader sees now: each message's latest version and its card (an edit replaces the text).
      visible: () => fake.botMessages().flatMap((m) => [m.markdown, ...m.attachments.flatMap(cardTexts)]),
      // Webex has no reactions: nothing is ever put on a user's message.
      reactions: () => [],
      close: () => fake.close(),
    };
  },
};
