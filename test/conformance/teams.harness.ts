/**
 * Teams under the channel contract: the real TeamsTransport and TeamsRenderer over the real SDK
 * client (MSAL for the token, the Connector client through parley's edge), against the loopback
 * fake. `outbound()` reads what the fake shows a Teams user: message texts, card texts and button
 * titles, image names. The dispatcher half runs the whole channel (start()) with activities the
 * fake's driver signs and posts to the messaging endpoint.
 */
import { realClock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import type { MessagingTransport } from "../../src/messaging/channel/transport.js";
import type { AuditSink } from "../../src/messaging/security/audit.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import { ChoiceBook } from "../../src/teams/cards.js";
import type { TeamsSettings } from "../../src/teams/index.js";
import { teamsChannel } from "../../src/teams/index.js";
import { TeamsOutbox } from "../../src/teams/outbox.js";
import { TeamsRenderer } from "../../src/teams/renderer.js";
import type { TeamsAddress } from "../../src/teams/routes.js";
import { TeamsRoutes } from "../../src/teams/routes.js";
import { start as startTeams } from "../../src/teams/start.js";
import { TeamsSurface } from "../../src/teams/surface.js";
import { connectorHostGate, TEAMS_CAPABILITIES, TeamsTransport } from "../../src/teams/transport.js";
import type { TeamsEnvelope } from "../../src/teams/wire.js";
import { TeamsDriver } from "../fakes/teams/driver.js";
import type { FakeTeams, FakeTeamsUser } from "../fakes/teams/server.js";
import { FakeTeams as Fake } from "../fakes/teams/server.js";
import { testChannelContext } from "../helpers/channel-context.js";
import { tempHome } from "../helpers/channel-under-test.js";
import { testDrops } from "../helpers/drops.js";
import { cardTexts, teamsClientOn, visible } from "../teams/helpers.js";
import type { ChannelHarness, OutboundMessage } from "./contract.js";
import type { DispatcherHarness } from "./dispatcher-contract.js";
import { liveChannel } from "./dispatcher-contract.js";

function addressOf(fake: FakeTeams, user: FakeTeamsUser): TeamsAddress {
  return {
    conversationId: fake.personalConversation(user),
    serviceUrl: fake.serviceUrl,
    tenantId: fake.tenantId,
    userAccountId: user.accountId,
    identity: user.upn,
    botId: `28:${fake.appId}`,
  };
}

let seq = 0;

export const teamsHarness: ChannelHarness = {
  name: "teams",
  capabilities: TEAMS_CAPABILITIES,
  unconfigured: (audit: AuditSink) =>
    new TeamsTransport({
      drops: testDrops(audit, "teams"),
      audit,
      allowedUsers: new Set(),
      gate: connectorHostGate([]),
      logger: new MemoryLogger(),
    }) as unknown as MessagingTransport<unknown>,
  async configured(audit: AuditSink) {
    const fake = await new Fake().start();
    const alice = fake.addUser("Alice");
    const client = teamsClientOn(fake);
    const gate = connectorHostGate([fake.connectorHost]);
    const logger = new MemoryLogger();
    const routes = new TeamsRoutes(undefined, { admits: gate.admits, logger });
    const address = addressOf(fake, alice);
    await routes.remember(address);
    const outbox = new TeamsOutbox({ sender: client, address, routes, audit: new MemoryAuditSink(), logger });
    const surface = new TeamsSurface(
      {
        sender: client,
        routes,
        choices: new ChoiceBook(),
        files: { isConnector: gate.admits, token: () => client.connectorToken() },
        agentName: "default",
        isOwner: () => true,
      },
      {
        clock: realClock,
        logger,
        audit: new MemoryAuditSink(),
        sessions: new SessionManager({
          createProvider: () => {
            throw new Error("no agent here");
          },
        }),
      },
    );
    const transport = new TeamsTransport({
      drops: testDrops(audit, "teams"),
      audit,
      allowedUsers: new Set([alice.upn]),
      gate,
      routes,
      logger,
      // The channel's own proactive path: the surface's display-safe, capped post.
      post: (_conversationId, text) => surface.postTo(address, text),
    });
    const driver = new TeamsDriver(fake, "http://127.0.0.1:9/unused");
    const envelope = (user: string, text: string, opts?: { bot?: boolean }): TeamsEnvelope => {
      seq += 1;
      const from = opts?.bot ? { ...alice, accountId: `28:${fake.appId}` } : alice;
      const activity = driver.message(from, text) as unknown as TeamsEnvelope["activity"];
      return { activity: { ...activity, id: `contract-${seq}` }, identity: user };
    };
    return {
      transport: transport as unknown as MessagingTransport<unknown>,
      conversationId: address.conversationId,
      allowedUser: alice.upn,
      envelope,
      newRenderer: () =>
        new TeamsRenderer({
          outbox,
          owner: true,
          choices: new ChoiceBook(),
          audit: new MemoryAuditSink(),
          logger,
          throttleMs: 0,
        }),
      outbound: (): OutboundMessage[] =>
        fake.allShown().map((m) => {
          const card = cardTexts(m);
          const names = m.attachments.map((a) => (typeof a.name === "string" ? a.name : ""));
          return {
            text: m.text || card.text,
            rendered: [m.text, card.text, ...card.buttons, ...names],
            buttons: card.buttons.length,
          };
        }),
      close: () => fake.close(),
    };
  },
};

/** The whole Teams channel (start()) against the fake: personal chats with the owner and a guest. */
export const teamsDispatcher: DispatcherHarness = {
  name: "teams",
  async lab() {
    const fake = await new Fake().start();
    const owner = fake.addUser("Olivia Owner");
    const guest = fake.addUser("Gus Guest");
    const byUpn = new Map([owner, guest].map((u) => [u.upn, u]));
    const home = tempHome("teams-dispatch");
    return {
      owner: owner.upn,
      guest: guest.upn,
      async start(shared) {
        const ctx = testChannelContext<TeamsSettings>(teamsChannel, {
          section: {
            allowedUsers: [owner.upn, guest.upn],
            owner: owner.upn,
            connectorHosts: [fake.connectorHost],
            loginUrl: fake.loginUrl,
            openIdMetadataUrl: fake.openIdMetadataUrl,
          },
          env: { MICROSOFT_APP_ID: fake.appId, MICROSOFT_APP_PASSWORD: fake.password },
          home,
          ...shared,
        });
        const running = await startTeams(ctx, { listen: "127.0.0.1:0", throttleMs: 0 });
        const driver = new TeamsDriver(fake, running.url);
        const userOf = (upn: string) => byUpn.get(upn) ?? fake.addUser(upn);
        return liveChannel(
          running,
          (upn) => addressOf(fake, userOf(upn)),
          async (upn, text) => {
            const res = await driver.post(driver.message(userOf(upn), text));
            if (res.status !== 200) throw new Error(`the endpoint answered ${res.status}`);
          },
        );
      },
      visible: () => visible(fake),
      // A bot cannot react to a user's message on Teams.
      reactions: () => [],
      close: () => fake.close(),
    };
  },
};
