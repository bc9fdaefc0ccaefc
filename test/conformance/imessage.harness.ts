import type { IMessageSettings } from "../../src/imessage/index.js";
import { imessageChannel } from "../../src/imessage/index.js";
import { OwnMessageLedger } from "../../src/imessage/ledger.js";
import { Presence } from "../../src/imessage/presence.js";
import { IMessageRenderer } from "../../src/imessage/renderer.js";
import { start as startIMessage } from "../../src/imessage/start.js";
import { IMessageSurface } from "../../src/imessage/surface.js";
import { IMESSAGE_CAPABILITIES, IMessageTransport } from "../../src/imessage/transport.js";
import type { ImsgMessage } from "../../src/imessage/wire.js";
import { realClock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import type { MessagingTransport } from "../../src/messaging/channel/transport.js";
import type { AuditSink } from "../../src/messaging/security/audit.js";
import { FakeImsgFolder, waitFor } from "../fakes/imsg/control.js";
import { testChannelContext } from "../helpers/channel-context.js";
import { testDrops } from "../helpers/drops.js";
import { imsgClientOn, macHost } from "../imessage/channel-harness.js";
import type { ChannelHarness, OutboundMessage } from "./contract.js";
import type { DispatcherHarness } from "./dispatcher-contract.js";
import { liveChannel } from "./dispatcher-contract.js";

const OWNER = "+61400000000";
const GUEST = "guest@example.com";
let rowid = 1_000;

/** A watched row from `user`; a bot-authored one is the Mac's own (`is_from_me`). */
function envelope(user: string, text: string, opts?: { bot?: boolean }): ImsgMessage {
  rowid += 1;
  return { rowid, guid: `CONF-${rowid}`, sender: user, isFromMe: opts?.bot === true, text, isGroup: false };
}

export const imessageHarness: ChannelHarness = {
  name: "imessage",
  capabilities: IMESSAGE_CAPABILITIES,
  unconfigured: (audit: AuditSink) =>
    new IMessageTransport({
      drops: testDrops(audit, "imessage"),
      audit,
    }) as unknown as MessagingTransport<unknown>,
  async configured(audit: AuditSink) {
    const folder = new FakeImsgFolder();
    const logger = new MemoryLogger();
    const client = imsgClientOn(folder, logger);
    await client.start();
    const transport = new IMessageTransport({
      drops: testDrops(audit, "imessage"),
      audit,
      imsg: client,
      allowedHandles: [OWNER],
      ledger: new OwnMessageLedger(realClock),
      clock: realClock,
      logger,
    });
    const presence = new Presence(client, logger);
    const surface = new IMessageSurface(
      { transport, presence, agentName: "conformance", commands: { new: "/new", stop: "/stop" } },
      { clock: realClock, logger },
    );
    return {
      transport: transport as unknown as MessagingTransport<unknown>,
      conversationId: OWNER,
      allowedUser: OWNER,
      envelope,
      newRenderer: () =>
        new IMessageRenderer({
          post: (md) => surface.postTo(OWNER, md),
          typing: async () => {},
          clock: realClock,
          logger,
          commands: { new: "/new", stop: "/stop" },
        }),
      outbound: (): OutboundMessage[] => folder.sent().map((t) => ({ text: t, rendered: [t], buttons: 0 })),
      close: () => client.stop(),
    };
  },
};

/** The whole iMessage channel against the fake imsg: the owner's and a guest's 1:1 chats. */
export const imessageDispatcher: DispatcherHarness = {
  name: "imessage",
  buffered: true,
  async lab() {
    const folder = new FakeImsgFolder();
    return {
      owner: OWNER,
      guest: GUEST,
      async start(shared) {
        const ctx = testChannelContext<IMessageSettings>(imessageChannel, {
          section: { allowedHandles: [OWNER, GUEST], owner: OWNER },
          env: { IMESSAGE_CLI_PATH: folder.cliPath, IMESSAGE_DB_PATH: folder.dbPath },
          ...shared,
        });
        const before = folder.starts();
        const running = await startIMessage(ctx, { platform: macHost, restartFirstMs: 100 });
        await waitFor(() => folder.starts() > before, "imsg started");
        return liveChannel(
          running,
          (user) => user,
          async (user, text) => void (await folder.incoming(user, text)),
        );
      },
      visible: () => folder.sent(),
      // iMessage declares no reactions: nothing is ever put on a user's message.
      reactions: () =>
        folder
          .requests()
          .filter((r) => r.method === "reactions.send")
          .map((r) => r.method),
      close: async () => {},
    };
  },
};
