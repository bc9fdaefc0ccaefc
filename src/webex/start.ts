/**
 * Starting Webex: REST client and device socket, transport, surface and hub over the shared
 * machinery. The hub resumes what a restart left unanswered before the socket opens, so older
 * messages come first.
 */
import { ParleyError } from "../messaging/base/errors.js";
import type { ChannelContext, RunningChannel } from "../messaging/channel/contract.js";
import { secretOf } from "../messaging/channel/contract.js";
import { ConversationHub } from "../messaging/channel/hub.js";
import type { WebexClientOptions } from "./client.js";
import { WebexClient } from "./client.js";
import { WEBEX_HELP_FOOTER, webexCommands } from "./commands.js";
import { WebexEgress } from "./egress.js";
import { FileGate } from "./files.js";
import { TokenHosts } from "./hosts.js";
import type { WebexSettings } from "./index.js";
import { webexOwner } from "./index.js";
import { WebexIntake } from "./intake.js";
import type { WebexAddress } from "./surface.js";
import { OfferBook, WebexSurface } from "./surface.js";
import { WebexTransport } from "./transport.js";

/** Knobs tests (and embedders) may turn; the gateway passes none. */
export interface WebexStartOverrides {
  statusStartMs?: number;
  approvalTimeoutMs?: number;
  client?: Partial<Pick<WebexClientOptions, "maxRetries" | "minHealthyMs" | "requestTimeoutMs">>;
  /** An extra trusted CA (PEM): a test's TLS fake behind a proxy. */
  tlsCa?: string;
}

export interface RunningWebex extends RunningChannel {
  client: WebexClient;
  transport: WebexTransport;
  hub: ConversationHub<WebexAddress>;
  intake: WebexIntake;
}

export async function start(
  ctx: ChannelContext<WebexSettings>,
  overrides: WebexStartOverrides = {},
): Promise<RunningWebex> {
  const s = ctx.settings;
  const token = secretOf(ctx.env, "WEBEX_BOT_TOKEN");
  if (!token) throw new ParleyError("CONFIG_INVALID", "WEBEX_BOT_TOKEN is not set");
  if (s.allowedEmails.length === 0)
    ctx.logger.warn("webex: webex.allowedEmails is empty, so nobody can use the bot (deny by default)");
  if (s.allowedRoomIds.length > 0 && !s.allowGroupRooms)
    ctx.logger.warn("webex: allowedRoomIds has no effect without allowGroupRooms");
  const hosts = new TokenHosts([s.apiUrl, s.u2cUrl, ...(s.wdmUrl ? [s.wdmUrl] : [])]);
  const egress = new WebexEgress({ env: ctx.env, ...(overrides.tlsCa ? { ca: overrides.tlsCa } : {}) });
  // Read once here: a malformed HTTPS_PROXY stops start with a clear error, not a failed request later.
  const route = egress.describe(s.apiUrl);
  let intake: WebexIntake | null = null;
  const client = new WebexClient({
    token,
    apiUrl: s.apiUrl,
    u2cUrl: s.u2cUrl,
    wdmUrl: s.wdmUrl,
    hosts,
    egress,
    logger: ctx.logger,
    clock: ctx.clock,
    ...overrides.client,
    onFrame: (frame) => intake?.handleFrame(frame),
    // No id to ack: counted and audited, so a stream of them shows in doctor.
    onUnreadable: (shape) => ctx.drops.record({ reason: "unparseable", shape }),
    onState: (connected) =>
      connected ? ctx.status?.connected() : ctx.status?.disconnected("device socket closed; reconnecting"),
  });
  const transport = new WebexTransport({
    audit: ctx.audit,
    drops: ctx.drops,
    rest: client,
    self: () => ({ id: client.botId, emails: client.botEmails }),
    allowedEmails: new Set(s.allowedEmails),
    allowGroupRooms: s.allowGroupRooms,
    allowedRoomIds: new Set(s.allowedRoomIds),
  });
  const offers = new OfferBook();
  const files = new FileGate(client, s.apiUrl, ctx.clock, egress);
  const surface = new WebexSurface(
    {
      rest: client,
      agentName: ctx.defaults.agentName,
      offers,
      files,
      ...(overrides.statusStartMs !== undefined ? { statusStartMs: overrides.statusStartMs } : {}),
    },
    ctx,
  );
  const owner = webexOwner(s);
  const hub = new ConversationHub<WebexAddress>({
    surface,
    commands: webexCommands(),
    ctx,
    isOwner: (userId) => userId === owner,
    queueMode: s.queueMode,
    approvalTimeoutMs: overrides.approvalTimeoutMs,
    helpFooter: WEBEX_HELP_FOOTER,
  });
  intake = new WebexIntake(client, transport, surface, hub, offers, files, ctx);
  // What a restart left unanswered, before new activities find their turns taken.
  await hub.resume();
  ctx.status?.connecting();
  await client.connect().catch(async (error: unknown) => {
    await egress.close();
    throw error;
  });
  ctx.announce(
    `parley webex: connected as ${client.botEmails[0] ?? client.botId} (WDM ${client.wdmHost}, ${route})`,
  );
  return {
    name: "webex",
    client,
    transport,
    hub,
    intake,
    async stop() {
      await hub.shutdown();
      await client.close();
      await egress.close();
    },
  };
}
