/**
 * The Discord channel under the shared contract: the real DiscordTransport and DiscordRenderer over
 * the real REST client, against the loopback fake. `outbound()` reads what the fake stored, i.e. what
 * a Discord user would see: message bodies, button labels and attachment descriptions.
 */
import { DiscordClient } from "../../src/discord/client.js";
import type { DiscordSettings } from "../../src/discord/index.js";
import { discordChannel } from "../../src/discord/index.js";
import { DiscordRenderer } from "../../src/discord/renderer.js";
import { start as startDiscord } from "../../src/discord/start.js";
import { DISCORD_CAPABILITIES, DiscordTransport } from "../../src/discord/transport.js";
import type { DiscordEnvelope } from "../../src/discord/wire.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import type { MessagingTransport } from "../../src/messaging/channel/transport.js";
import type { AuditSink } from "../../src/messaging/security/audit.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { FakeDiscord } from "../fakes/discord/server.js";
import { testChannelContext } from "../helpers/channel-context.js";
import { tempHome } from "../helpers/channel-under-test.js";
import { testDrops } from "../helpers/drops.js";
import type { ChannelHarness, OutboundMessage } from "./contract.js";
import type { DispatcherHarness } from "./dispatcher-contract.js";
import { liveChannel } from "./dispatcher-contract.js";

const ALLOWED = "200000000000000001";
const DM = "300000000000000001";

function client(apiBase: string, token: string): DiscordClient {
  return new DiscordClient({ token, apiBase, intents: 0, logger: new MemoryLogger(), onDispatch: () => {} });
}

let seq = 0;
function envelope(user: string, text: string, opts?: { bot?: boolean }): DiscordEnvelope {
  seq += 1;
  return {
    kind: "message",
    message: {
      id: `${900000000000000000n + BigInt(seq)}`,
      channel_id: DM,
      author: {
        id: /^\d+$/.test(user) ? user : "999999999999999999",
        username: user,
        ...(opts?.bot ? { bot: true } : {}),
      },
      content: text,
      attachments: [],
      mentions: [],
    },
  };
}

export const discordHarness: ChannelHarness = {
  name: "discord",
  capabilities: DISCORD_CAPABILITIES,
  unconfigured: (audit: AuditSink) =>
    new DiscordTransport({
      drops: testDrops(audit, "discord"),
      audit,
      // Never called: an unconfigured transport refuses before any send.
      rest: client("http://127.0.0.1:9/api", "unused"),
      botUserId: () => "",
      allowedUserIds: new Set(),
      logger: new MemoryLogger(),
    }) as unknown as MessagingTransport<unknown>,
  async configured(audit: AuditSink) {
    const fake = await new FakeDiscord().start();
    fake.addChannel({ id: DM, type: 1 });
    const rest = client(fake.apiBase, fake.token);
    const transport = new DiscordTransport({
      drops: testDrops(audit, "discord"),
      audit,
      rest,
      botUserId: () => fake.botId,
      allowedUserIds: new Set([ALLOWED]),
      logger: new MemoryLogger(),
    });
    return {
      transport: transport as unknown as MessagingTransport<unknown>,
      conversationId: DM,
      allowedUser: ALLOWED,
      envelope,
      newRenderer: () =>
        new DiscordRenderer({
          rest,
          channelId: DM,
          toggles: { reactionsEnabled: true, showThinking: true },
          audit: new MemoryAuditSink(),
          logger: new MemoryLogger(),
          throttleMs: 0,
        }),
      outbound: (): OutboundMessage[] =>
        fake.channelMessages(DM).map((m) => {
          const labels = (m.components as Array<{ components?: Array<{ label?: string }> }>).flatMap((row) =>
            (row.components ?? []).map((b) => b.label ?? ""),
          );
          return {
            text: m.content,
            rendered: [
              m.content,
              ...labels,
              ...m.attachments.map((a) => `${a.filename} ${a.description ?? ""}`),
            ],
            buttons: labels.length,
          };
        }),
      close: async () => {
        await rest.close();
        await fake.close();
      },
    };
  },
};

/** The whole Discord channel (start()) against the fake REST + Gateway: DMs from the owner and a guest. */
export const discordDispatcher: DispatcherHarness = {
  name: "discord",
  async lab() {
    const fake = await new FakeDiscord().start();
    const owner = "200000000000000001";
    const guest = "200000000000000002";
    const dms: Record<string, string> = { [owner]: "300000000000000001", [guest]: "300000000000000002" };
    for (const id of Object.values(dms)) fake.addChannel({ id, type: 1 });
    const address = (user: string) => ({ channelId: dms[user] ?? "", userId: user });
    const home = tempHome("discord-dispatch");
    return {
      owner,
      guest,
      async start(shared) {
        const ctx = testChannelContext<DiscordSettings>(discordChannel, {
          section: { allowedUserIds: [owner, guest], owner, apiBase: fake.apiBase },
          env: { DISCORD_BOT_TOKEN: fake.token },
          home,
          ...shared,
        });
        const running = await startDiscord(ctx, { throttleMs: 0 });
        await running.registration;
        return liveChannel(
          running,
          address,
          async (user, text) =>
            void fake.userMessage({ channelId: dms[user] ?? "", userId: user, content: text }),
        );
      },
      visible: () =>
        Object.values(dms).flatMap((dm) =>
          fake
            .channelMessages(dm)
            .flatMap((m) => [
              m.content,
              ...((m.components ?? []) as { components: { label?: string }[] }[]).flatMap((row) =>
                row.components.map((b) => b.label ?? ""),
              ),
            ]),
        ),
      reactions: () => fake.callsTo("PUT", /\/reactions\//).map((c) => c.path),
      close: () => fake.close(),
    };
  },
};
