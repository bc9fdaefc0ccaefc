/**
 * Starting Teams: the SDK client (CloudAdapter, the bot's credential, the Connector edge), the
 * stored routes, the transport and its gates, the surface and the hub, then what a restart left
 * unanswered, and only then the messaging endpoint. Stopping is quiescent: the endpoint stops
 * taking activities (503, so the Connector delivers them again), the hub settles its background
 * turns, and only then is the listener closed.
 */
import { ParleyError } from "../messaging/base/errors.js";
import type { ChannelContext, RunningChannel } from "../messaging/channel/contract.js";
import { secretOf } from "../messaging/channel/contract.js";
import { ConversationHub } from "../messaging/channel/hub.js";
import { PickerRegistry } from "../messaging/channel/picker.js";
import { ownerOf } from "../messaging/channel/settings.js";
import type { SessionChoice } from "../messaging/session/resume.js";
import { SessionBinder } from "../messaging/session/resume.js";
import type { TeamsFileOptions } from "./attachments.js";
import { ChoiceBook } from "./cards.js";
import type { TeamsClientOptions } from "./client.js";
import { TeamsClient } from "./client.js";
import { TEAMS_HELP_FOOTER, teamsCommands } from "./commands.js";
import { MessagingEndpoint } from "./endpoint.js";
import type { TeamsSettings } from "./index.js";
import { teamsAuthority } from "./index.js";
import { TeamsIntake } from "./intake.js";
import { TeamsPeople } from "./people.js";
import type { TeamsAddress } from "./routes.js";
import { TeamsRoutes } from "./routes.js";
import { TEAMS_RESUME_COPY, TEAMS_SESSION_LIST, TeamsSessionPicker } from "./session-picker.js";
import { TeamsSurface } from "./surface.js";
import { connectorHostGate, TeamsTransport } from "./transport.js";

/** Knobs tests (and embedders) may turn; the gateway passes none. */
export interface TeamsStartOverrides {
  /** host:port for the messaging endpoint instead of teams.listen (tests pass port 0). */
  listen?: string;
  throttleMs?: number;
  typingEveryMs?: number;
  approvalTimeoutMs?: number;
  connector?: TeamsClientOptions["connector"];
  files?: Partial<Pick<TeamsFileOptions, "resolve" | "timeoutMs" | "maxBytes">>;
}

export interface RunningTeams extends RunningChannel {
  client: TeamsClient;
  transport: TeamsTransport;
  hub: ConversationHub<TeamsAddress>;
  intake: TeamsIntake;
  routes: TeamsRoutes;
  endpoint: MessagingEndpoint;
  /** The messaging endpoint's URL as bound (http://host:port/api/messages). */
  url: string;
}

export async function start(
  ctx: ChannelContext<TeamsSettings>,
  overrides: TeamsStartOverrides = {},
): Promise<RunningTeams> {
  const s = ctx.settings;
  const appId = secretOf(ctx.env, "MICROSOFT_APP_ID");
  const password = secretOf(ctx.env, "MICROSOFT_APP_PASSWORD");
  const tenantId = secretOf(ctx.env, "MICROSOFT_APP_TENANT_ID");
  // Without an app id the SDK would treat every request as authenticated: never start so.
  if (!appId || !password)
    throw new ParleyError("CONFIG_INVALID", "MICROSOFT_APP_ID and MICROSOFT_APP_PASSWORD must both be set");
  if (s.appType === "SingleTenant" && !tenantId)
    throw new ParleyError("CONFIG_INVALID", "teams.appType SingleTenant needs MICROSOFT_APP_TENANT_ID");
  if (s.allowedUsers.length === 0)
    throw new ParleyError("CONFIG_INVALID", "teams.allowedUsers is empty: the bot would answer nobody");
  const gate = connectorHostGate(s.connectorHosts);
  const client = new TeamsClient({
    appId,
    password,
    authority: teamsAuthority(s, ctx.env),
    tenantId,
    openIdMetadataUrl: s.openIdMetadataUrl,
    tokenIssuer: s.tokenIssuer,
    admits: gate.admits,
    clock: ctx.clock,
    logger: ctx.logger,
    ...(overrides.connector ? { connector: overrides.connector } : {}),
  });
  const routes = new TeamsRoutes(ctx.durable?.state.routes, { admits: gate.admits, logger: ctx.logger });
  await routes.load();
  const allowed = new Set(s.allowedUsers);
  const owner = ownerOf({ owner: s.owner, allowedUserIds: s.allowedUsers });
  const isOwner = (identity: string) => identity === owner;
  const choices = new ChoiceBook();
  const surface = new TeamsSurface(
    {
      sender: client,
      routes,
      choices,
      files: {
        isConnector: gate.admits,
        token: () => client.connectorToken(),
        timers: ctx.clock,
        ...overrides.files,
      },
      agentName: ctx.defaults.agentName,
      isOwner,
      ...(overrides.throttleMs !== undefined ? { throttleMs: overrides.throttleMs } : {}),
      ...(overrides.typingEveryMs !== undefined ? { typingEveryMs: overrides.typingEveryMs } : {}),
    },
    ctx,
  );
  const transport = new TeamsTransport({
    audit: ctx.audit,
    drops: ctx.drops,
    allowedUsers: allowed,
    gate,
    routes,
    logger: ctx.logger,
    post: async (conversationId, text) => {
      const address = routes.get(conversationId);
      if (!address) return "";
      return surface.postTo(address, text);
    },
  });
  const picker = await sessionPicker(
    ctx,
    surface,
    s.allowedUsers.length === 1 ? s.allowedUsers[0] : undefined,
  );
  const hub = new ConversationHub<TeamsAddress>({
    surface,
    commands: teamsCommands(),
    ctx,
    isOwner,
    queueMode: s.queueMode,
    approvalTimeoutMs: overrides.approvalTimeoutMs,
    helpFooter: TEAMS_HELP_FOOTER,
    binder: picker.binder,
    handlers: {
      // Teams' listing is the resume card: web chat sessions this chat may continue.
      sessions: async (call) => {
        const address = routes.get(call.conversation.link.conversationId);
        if (!address) return "This chat is not reachable yet; send a message first.";
        return (await picker.list(address, call.userId)) ?? "";
      },
    },
  });
  const intake = new TeamsIntake({
    appId,
    tokenIssuer: s.tokenIssuer,
    maxInflightTurns: s.maxInflightTurns,
    claimsOf: (turn) => client.claimsOf(turn),
    memberOf: (turn, accountId) => client.memberOf(turn, accountId),
    isOwner,
    transport,
    surface,
    hub,
    routes,
    people: new TeamsPeople({ allowed, clock: ctx.clock }),
    choices,

    ctx,
  });
  hub.registerList(TEAMS_SESSION_LIST, picker.pressable);
  // What a restart left unanswered comes before anything newer.
  await hub.resume();
  const endpoint = new MessagingEndpoint({
    listen: overrides.listen ?? s.listen,
    adapter: client.adapter,
    tokenIssuer: s.tokenIssuer,
    logic: (turn) => intake.onActivity(turn),
    drops: ctx.drops,
    logger: ctx.logger,
  });
  await endpoint.start();
  ctx.announce(`parley teams: messaging endpoint ${endpoint.url}`);
  return {
    name: "teams",
    client,
    transport,
    hub,
    intake,
    routes,
    endpoint,
    url: endpoint.url,
    async stop() {
      await endpoint.stopAccepting();
      await hub.shutdown();
      await endpoint.close();
    },
  };
}

/**
 * `/sessions` needs the durable session store (the binding lives on the picked session's row) and
 * the channel's resume records. An unreadable record does not stop the channel: every resume route
 * refuses with the repair hint, and the operator sees it here at startup too.
 */
async function sessionPicker(
  ctx: ChannelContext<TeamsSettings>,
  surface: TeamsSurface,
  soleIdentity: string | undefined,
): Promise<TeamsSessionPicker> {
  if (!ctx.durable) throw new ParleyError("CONFIG_INVALID", "teams needs the store for its resume records");
  const expectations = ctx.durable.state.resume.forChannel("teams");
  const status = await expectations.ready();
  if (status.state === "unreadable")
    ctx.logger.error(`teams: ${status.problem}; session routing is paused. ${expectations.repairHint()}`);
  const binder = new SessionBinder({
    channel: "teams",
    store: ctx.store,
    expectations,
    copy: TEAMS_RESUME_COPY,
    // Personal scope only: nobody else reads this chat.
    sharedAudience: () => false,
    audit: ctx.audit,
    logger: ctx.logger,
    picker: new PickerRegistry<SessionChoice>({ now: () => ctx.clock.now() }),
  });
  return new TeamsSessionPicker({
    binder,
    audit: ctx.audit,
    outbox: (address) => surface.outbox(address),
    soleIdentity,
  });
}
