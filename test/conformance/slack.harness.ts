/**
 * The Slack channel under the shared contract: the real SlackTransport and SlackRenderer over the
 * real WebClient, against the loopback fake. `outbound()` reads what the fake stored, i.e. what a
 * Slack user would see: each message's text as sent (a stream's appends joined), its rendered
 * form, its blocks, button labels, tasks and file titles, and the thread's status line.
 */
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { TurnParts } from "../../src/messaging/channel/delivery.js";
import type { MessagingTransport } from "../../src/messaging/channel/transport.js";
import type { AuditSink } from "../../src/messaging/security/audit.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { SlackClient } from "../../src/slack/client.js";
import type { SlackSettings } from "../../src/slack/index.js";
import { slackChannel } from "../../src/slack/index.js";
import { SlackRenderer } from "../../src/slack/renderer.js";
import { start as startSlack } from "../../src/slack/start.js";
import type { SlackAddress } from "../../src/slack/surface.js";
import { SLACK_CAPABILITIES, SlackTransport } from "../../src/slack/transport.js";
import type { SlackEnvelope } from "../../src/slack/wire.js";
import { buttonsOf, FakeSlack } from "../fakes/slack/server.js";
import { testChannelContext } from "../helpers/channel-context.js";
import { tempHome } from "../helpers/channel-under-test.js";
import { testDrops } from "../helpers/drops.js";
import type { ChannelHarness, OutboundMessage } from "./contract.js";
import type { DispatcherHarness } from "./dispatcher-contract.js";
import { liveChannel } from "./dispatcher-contract.js";

const ALLOWED = "U0000000001";
const DM = "D0000000001";
const ROOT = "1600000000.000001";

const client = (apiUrl: string, token: string) =>
  new SlackClient({ token, apiUrl, logger: new MemoryLogger(), retry: { retries: 0 } });

let seq = 0;
function envelope(teamId: string) {
  return (user: string, text: string, opts?: { bot?: boolean }): SlackEnvelope => {
    seq += 1;
    return {
      kind: "event",
      eventId: `EvC${seq}`,
      event: {
        type: "message",
        channel: DM,
        channel_type: "im",
        user: /^U[A-Z0-9]+$/.test(user) ? user : "U9999999999",
        ...(opts?.bot ? { bot_id: "BOTHER0001" } : {}),
        team: teamId,
        text,
        ts: `1600000000.${String(seq).padStart(6, "0")}`,
        files: [],
      },
    };
  };
}

export const slackHarness: ChannelHarness = {
  name: "slack",
  capabilities: SLACK_CAPABILITIES,
  unconfigured: (audit: AuditSink) =>
    new SlackTransport({
      drops: testDrops(audit, "slack"),
      audit,
      // Never called: an unconfigured transport refuses before any send.
      api: client("http://127.0.0.1:9/api", "xoxb-unused"),
      botUserId: "",
      botId: "",
      allowedUserIds: new Set(),
      allowedTeamIds: new Set(),
      allowedChannelIds: new Set(),
    }) as unknown as MessagingTransport<unknown>,
  async configured(audit: AuditSink) {
    const fake = await new FakeSlack().start();
    const api = client(fake.apiUrl, fake.botToken);
    const transport = new SlackTransport({
      drops: testDrops(audit, "slack"),
      audit,
      api,
      botUserId: fake.botUserId,
      botId: fake.botId,
      allowedUserIds: new Set([ALLOWED]),
      allowedTeamIds: new Set([fake.teamId]),
      allowedChannelIds: new Set(),
    });
    return {
      transport: transport as unknown as MessagingTransport<unknown>,
      conversationId: DM,
      allowedUser: ALLOWED,
      envelope: envelope(fake.teamId),
      newRenderer: () =>
        new SlackRenderer({
          api,
          channel: DM,
          threadTs: ROOT,
          parts: TurnParts.unrecorded(),
          logger: new MemoryLogger(),
          audit: new MemoryAuditSink(),
          toggles: { reactionsEnabled: true, showThinking: true, streaming: true },
          throttleMs: 0,
        }),
      outbound: (): OutboundMessage[] =>
        fake.botMessages(DM).map((m) => ({
          text: m.text,
          rendered: [
            ...fake.visibleParts(m),
            ...m.blocks.map((b) => JSON.stringify(b)),
            ...(m.threadTs ? [fake.status.get(m.threadTs) ?? ""] : []),
          ],
          buttons: buttonsOf(m).length,
        })),
      close: () => fake.close(),
    };
  },
};

/** The whole Slack channel (start(), Socket Mode) against the fake: DM threads of the owner and a guest. */
export const slackDispatcher: DispatcherHarness = {
  name: "slack",
  async lab() {
    const fake = await new FakeSlack().start();
    const owner = "U0000000001";
    const guest = "U0000000002";
    const dms: Record<string, string> = { [owner]: "D0000000001", [guest]: "D0000000002" };
    // Each user talks in one thread: their first message opens it, later ones reply in it.
    const threads = new Map<string, string>();
    const opened = new Set<string>();
    const threadOf = (user: string) => {
      if (!threads.has(user)) threads.set(user, fake.nextTs());
      return threads.get(user) as string;
    };
    const address = (user: string): SlackAddress => ({
      channel: dms[user] ?? "D0000000099",
      threadTs: threadOf(user),
      userId: user,
      teamId: fake.teamId,
      dm: true,
    });
    const home = tempHome("slack-dispatch");
    return {
      owner,
      guest,
      async start(shared) {
        const ctx = testChannelContext<SlackSettings>(slackChannel, {
          section: { mode: "socket", apiUrl: fake.apiUrl, allowedUserIds: [owner, guest], owner },
          env: { SLACK_BOT_TOKEN: fake.botToken, SLACK_APP_TOKEN: fake.appToken },
          home,
          ...shared,
        });
        const running = await startSlack(ctx, { throttleMs: 0, retry: { retries: 1, minTimeout: 10 } });
        return liveChannel(running, address, async (user, text) => {
          const channel = dms[user] ?? "D0000000099";
          const thread = threadOf(user);
          if (opened.has(user)) fake.userMessage({ channel, user, text, threadTs: thread });
          else {
            opened.add(user);
            fake.userMessage({ channel, user, text, ts: thread });
          }
        });
      },
      visible: () =>
        Object.values(dms).flatMap((dm) => [
          ...fake.botMessages(dm).flatMap((m) => fake.visibleParts(m)),
          ...[...threads.values()].map((t) => fake.status.get(t) ?? "").filter((s) => s !== ""),
        ]),
      reactions: () => fake.callsTo("reactions.add").map((c) => String(c.args.name)),
      close: () => fake.close(),
    };
  },
};
