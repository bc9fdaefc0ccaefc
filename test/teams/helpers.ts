/**
 * The Teams stack against the loopback fake: the real botbuilder CloudAdapter validating the
 * fake's JWTs, MSAL fetching the bot's token from the fake's token endpoint, the real Connector
 * client sending through parley's Connector edge, the real transport/intake/hub/renderer and the
 * real store, with a ScriptedProvider as the agent. Only the network boundary is fake.
 */

import { vi } from "vitest";
import type { Clock } from "../../src/messaging/base/clock.js";
import { realClock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import type { GrantControl } from "../../src/messaging/channel/contract.js";
import type { InboundDropLedger } from "../../src/messaging/channel/inbound-drops.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import type { ModelMenu } from "../../src/messaging/session/agent-controls.js";
import type { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { SessionStore } from "../../src/messaging/session/session-store.js";
import type { ConversationOwnership } from "../../src/messaging/store/ownership.js";
import type { ParleyStore } from "../../src/messaging/store/port.js";
import type { PipelineProvider } from "../../src/messaging/turn/pipeline.js";
import type {
  ScriptedProvider,
  ScriptedProviderOptions,
  ScriptedTurn,
  ScriptStep,
} from "../../src/providers/scripted.js";
import type { TeamsClientOptions } from "../../src/teams/client.js";
import { TeamsClient } from "../../src/teams/client.js";
import type { TeamsSettings } from "../../src/teams/index.js";
import { teamsChannel } from "../../src/teams/index.js";
import type { RunningTeams, TeamsStartOverrides } from "../../src/teams/start.js";
import { start as startTeams } from "../../src/teams/start.js";
import { connectorHostGate } from "../../src/teams/transport.js";
import { TeamsDriver } from "../fakes/teams/driver.js";
import type { FakeTeamsUser, Json, ShownMessage } from "../fakes/teams/server.js";
import { FakeTeams } from "../fakes/teams/server.js";
import { openTestStore, testChannelContext } from "../helpers/channel-context.js";
import { oneAgentForEverySession, tempHome, untilShown } from "../helpers/channel-under-test.js";

export { done, text } from "../helpers/channel-under-test.js";

export interface Stack {
  fake: FakeTeams;
  driver: TeamsDriver;
  running: RunningTeams;
  audit: MemoryAuditSink;
  /** The channel's inbound drops, counted per reason (the real ledger). */
  drops: InboundDropLedger;
  logger: MemoryLogger;
  provider: ScriptedProvider;
  sessions: SessionManager<PipelineProvider>;
  startedKeys: string[];
  home: string;
  parley: ParleyStore;
  alice: FakeTeamsUser;
  /** Allow-listed, not the owner. */
  bob: FakeTeamsUser;
  /** Not allow-listed. */
  mallory: FakeTeamsUser;
  /** Stop the channel (the fake and the store stay, for a restart). */
  stop(): Promise<void>;
  close(): Promise<void>;
}

export interface StackOptions {
  turns?: (ScriptedTurn | ScriptStep[])[];
  provider?: ScriptedProviderOptions;
  teams?: Record<string, unknown>;
  overrides?: TeamsStartOverrides & { clock?: Clock };
  fake?: FakeTeams;
  home?: string;
  grant?: GrantControl;
  /** Who is on the list: alice alone (the owner by default), or alice and bob. */
  both?: boolean;
  /** Session rows instead of the store's own (seeded web chat sessions for /sessions). */
  store?: SessionStore;
  /** This gateway's store (default: a fresh SQLite one in its home); closed with the stack. */
  parley?: ParleyStore;
  /** Several gateways on one store: this gateway's membership. */
  ownership?: ConversationOwnership;
}

export async function startStack(o: StackOptions = {}): Promise<Stack> {
  const fake = o.fake ?? (await new FakeTeams().start());
  const users = [...fake.users.values()];
  const alice = users.find((u) => u.name === "Alice") ?? fake.addUser("Alice");
  const bob = users.find((u) => u.name === "Bob") ?? fake.addUser("Bob");
  const mallory = users.find((u) => u.name === "Mallory") ?? fake.addUser("Mallory");
  const audit = new MemoryAuditSink();
  const logger = new MemoryLogger();
  const { provider, startedKeys, sessions } = oneAgentForEverySession(o);
  const home = o.home ?? tempHome("teams");
  const { clock, ...overrides } = o.overrides ?? {};
  const parley = o.parley ?? (await openTestStore(home, clock ? { now: () => clock.now() } : {}));
  const ctx = testChannelContext<TeamsSettings>(teamsChannel, {
    parley,
    section: {
      allowedUsers: o.both ? [alice.upn, bob.upn] : [alice.upn],
      ...(o.both ? { owner: alice.upn } : {}),
      connectorHosts: [fake.connectorHost],
      loginUrl: fake.loginUrl,
      openIdMetadataUrl: fake.openIdMetadataUrl,
      ...o.teams,
    },
    env: { MICROSOFT_APP_ID: fake.appId, MICROSOFT_APP_PASSWORD: fake.password },
    home,
    logger,
    audit,
    sessions,
    ...(clock ? { clock } : {}),
    ...(o.grant ? { grant: o.grant } : {}),
    ...(o.store ? { store: o.store } : {}),
    ...(o.ownership ? { ownership: o.ownership } : {}),
  });
  const running = await startTeams(ctx, { listen: "127.0.0.1:0", throttleMs: 0, ...overrides });
  const driver = new TeamsDriver(fake, running.url);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await running.stop();
  };
  return {
    fake,
    driver,
    running,
    audit,
    drops: ctx.dropLedger,
    logger,
    provider,
    sessions,
    startedKeys,
    home,
    parley,
    alice,
    bob,
    mallory,
    stop,
    async close() {
      await stop();
      await sessions.closeAll();
      await parley.close();
      if (!o.fake) await fake.close();
    },
  };
}

/** The real Teams client against the fake (its login, metadata and Connector host), on real time. */
export function teamsClientOn(fake: FakeTeams, o: Partial<TeamsClientOptions> = {}): TeamsClient {
  return new TeamsClient({
    appId: fake.appId,
    password: fake.password,
    authority: `${fake.loginUrl}/botframework.com`,
    tenantId: fake.tenantId,
    openIdMetadataUrl: fake.openIdMetadataUrl,
    tokenIssuer: fake.tokenIssuer,
    admits: connectorHostGate([fake.connectorHost]).admits,
    clock: realClock,
    logger: new MemoryLogger(),
    ...o,
  });
}

/** What a card shows: its TextBlocks (joined) and its button titles. */
export function cardTexts(m: ShownMessage): { text: string; buttons: string[] } {
  const texts: string[] = [];
  const buttons: string[] = [];
  for (const a of m.attachments) {
    const content = a.content as { body?: { text?: string }[]; actions?: { title?: string }[] } | undefined;
    for (const b of content?.body ?? []) if (typeof b.text === "string") texts.push(b.text);
    for (const action of content?.actions ?? [])
      if (typeof action.title === "string") buttons.push(action.title);
  }
  return { text: texts.join("\n"), buttons };
}

/** Everything a user could read in a conversation: message texts, card texts, button titles, image names. */
export function visible(fake: FakeTeams, conversationId?: string): string[] {
  const messages = conversationId ? fake.shown(conversationId) : fake.allShown();
  return messages.flatMap((m) => {
    const card = cardTexts(m);
    const names = m.attachments.map((a) => (typeof a.name === "string" ? a.name : "")).filter(Boolean);
    return [m.text, card.text, ...card.buttons, ...names].filter((s) => s !== "");
  });
}

/** Wait (bounded) until some visible entry matches. */
export function seen(fake: FakeTeams, pattern: RegExp | string, conversationId?: string): Promise<void> {
  return untilShown(() => visible(fake, conversationId), pattern);
}
/** The newest approval card in `user`'s personal chat (default Alice), once one is shown. */
export async function approvalCard(s: Stack, user = s.alice): Promise<ShownMessage> {
  const conversation = s.fake.personalConversation(user);
  return vi.waitFor(() => {
    const found = s.fake.shown(conversation).filter((m) => cardTexts(m).text.includes("Permission needed"));
    const last = found.at(-1);
    if (!last) throw new Error("no approval card yet");
    return last;
  });
}

/** The data of the card's button titled `title`. */
export function cardButton(m: ShownMessage, title: string): Json {
  const content = (m.attachments[0]?.content ?? {}) as { actions?: { title: string; data: Json }[] };
  const actions = content.actions ?? [];
  const found = actions.find((a) => a.title === title);
  if (!found) throw new Error(`no button ${title}: ${actions.map((a) => a.title).join(", ")}`);
  return found.data;
}

/** An agent's model menu of two: Fast (current) and Deep. */
export const FAST_OR_DEEP: ModelMenu = {
  configId: "model",
  current: "fast",
  options: [
    { id: "fast", name: "Fast" },
    { id: "deep", name: "Deep" },
  ],
};
