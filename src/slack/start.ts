/**
 * Starting Slack: the Web API client (auth.test first: a rejected bot token stops the channel
 * here, with the reason), the transport, surface and hub, then Bolt with parley's receiver (Socket
 * Mode or the Events API over HTTP), the messages a restart left unanswered, and only then the
 * connection that delivers new ones.
 */
import type { AllMiddlewareArgs } from "@slack/bolt";
import { App } from "@slack/bolt";
import { ParleyError } from "../messaging/base/errors.js";
import type { ReconnectGuardOptions } from "../messaging/base/reconnect-guard.js";
import type { ChannelContext, RunningChannel } from "../messaging/channel/contract.js";
import { secretOf } from "../messaging/channel/contract.js";
import { ConversationHub } from "../messaging/channel/hub.js";
import { ownerOf } from "../messaging/channel/settings.js";
import type { SessionStore } from "../messaging/session/session-store.js";
import type { RetryPolicy } from "./client.js";
import { SlackClient, sdkLogger } from "./client.js";
import { SLACK_HELP_FOOTER, slackCommands } from "./commands.js";
import type { SlackSettings } from "./index.js";
import { SlackEvents } from "./intake.js";
import type { HeldAck } from "./receiver.js";
import { HELD_ACK, SlackReceiver } from "./receiver.js";
import type { SlackAddress, SlackExtra } from "./surface.js";
import { SlackSurface } from "./surface.js";
import { SlackTransport } from "./transport.js";
import { blockActionsSchema, messageEventSchema, slashCommandSchema } from "./wire.js";

/** Knobs tests (and embedders) may turn; the gateway passes none. */
export interface SlackStartOverrides {
  throttleMs?: number;
  approvalTimeoutMs?: number;
  retry?: RetryPolicy;
  reconnect?: Omit<ReconnectGuardOptions, "clock">;
  /** Download bounds for files users share. */
  files?: { timeoutMs?: number; maxBytes?: number };
}

export interface RunningSlack extends RunningChannel {
  client: SlackClient;
  transport: SlackTransport;
  hub: ConversationHub<SlackAddress, SlackExtra>;
  events: SlackEvents;
  receiver: SlackReceiver;
  surface: SlackSurface;
}

export async function start(
  ctx: ChannelContext<SlackSettings>,
  overrides: SlackStartOverrides = {},
): Promise<RunningSlack> {
  const s = ctx.settings;
  const token = secretOf(ctx.env, "SLACK_BOT_TOKEN");
  const appToken = secretOf(ctx.env, "SLACK_APP_TOKEN");
  const signingSecret = secretOf(ctx.env, "SLACK_SIGNING_SECRET");
  if (!token.startsWith("xoxb-"))
    throw new ParleyError("CONFIG_INVALID", "SLACK_BOT_TOKEN is not an xoxb- bot token");
  if (s.mode === "socket" && !appToken.startsWith("xapp-"))
    throw new ParleyError(
      "CONFIG_INVALID",
      "slack.mode socket needs SLACK_APP_TOKEN (an xapp- app-level token)",
    );
  if (s.mode === "http" && !signingSecret)
    throw new ParleyError("CONFIG_INVALID", "slack.mode http needs SLACK_SIGNING_SECRET");
  if (s.allowedUserIds.length === 0)
    ctx.logger.warn("slack: slack.allowedUserIds is empty, so nobody can use the bot (deny by default)");

  const client = new SlackClient({
    token,
    apiUrl: s.apiUrl,
    logger: ctx.logger,
    ...(overrides.retry ? { retry: overrides.retry } : {}),
  });
  let me: Awaited<ReturnType<SlackClient["verify"]>>;
  try {
    me = await client.verify();
  } catch (error) {
    const code = (error as { data?: { error?: unknown } }).data?.error;
    throw new ParleyError(
      "CONFIG_INVALID",
      `Slack refused the bot token (auth.test: ${String(code ?? error)})`,
    );
  }
  const owner = ownerOf(s);
  const transport = new SlackTransport({
    audit: ctx.audit,
    drops: ctx.drops,
    api: client,
    botUserId: me.botUserId,
    botId: me.botId,
    allowedUserIds: new Set(s.allowedUserIds),
    // A Slack Connect member of another workspace is a stranger unless their workspace is named.
    allowedTeamIds: new Set(s.allowedTeamIds.length > 0 ? s.allowedTeamIds : [me.teamId]),
    allowedChannelIds: new Set(s.allowedChannelIds),
    earlierThreads: earlierThreads(ctx.store),
  });
  const surface = new SlackSurface(
    {
      api: client,
      settings: s,
      agentName: ctx.defaults.agentName,
      owner,
      files: { token, origins: client.origins, ...overrides.files },
      streaming: { available: true },
      ...(overrides.throttleMs !== undefined ? { throttleMs: overrides.throttleMs } : {}),
    },
    ctx,
  );
  const hub = new ConversationHub<SlackAddress, SlackExtra>({
    surface,
    commands: slackCommands(),
    ctx,
    isOwner: (userId) => userId === owner,
    queueMode: s.queueMode,
    approvalTimeoutMs: overrides.approvalTimeoutMs,
    helpFooter: SLACK_HELP_FOOTER,
    privacy: true,
  });
  const events = new SlackEvents(transport, client, surface, hub, ctx, owner);
  const boltLogger = sdkLogger(ctx.logger, "slack bolt");
  const receiver = new SlackReceiver({
    mode: s.mode,
    appToken,
    signingSecret,
    listen: s.listen,
    apiUrl: s.apiUrl,
    logger: ctx.logger,
    boltLogger,
    drops: ctx.drops,
    own: { botId: me.botId, botUserId: me.botUserId },
    clock: ctx.clock,
    ...(overrides.reconnect ? { reconnect: overrides.reconnect } : {}),
    onState: (connected) =>
      connected ? ctx.status?.connected() : ctx.status?.disconnected("socket mode connection closed"),
  });
  const app = new App({
    token,
    botId: me.botId,
    botUserId: me.botUserId,
    receiver,
    logger: boltLogger,
    // The ids above are auth.test's: Bolt need not ask again for every event.
    tokenVerificationEnabled: false,
    convoStore: false,
    clientOptions: { slackApiUrl: `${s.apiUrl}/` },
  });
  wire(app, events, ctx);

  // What a restart left unanswered, before new messages find their turns taken.
  await hub.resume();
  if (s.mode === "socket") ctx.status?.connecting();
  await receiver.start();
  const where = s.mode === "http" ? ` (Events API on ${s.listen})` : " (Socket Mode)";
  ctx.announce(
    `parley slack: connected as @${me.botName || me.botUserId} in ${me.team || me.teamId}${where}`,
  );
  return {
    name: "slack",
    client,
    transport,
    hub,
    events,
    receiver,
    surface,
    async stop() {
      // No new deliveries first (an unacknowledged one is delivered again after a restart).
      await receiver.stop();
      await hub.shutdown();
    },
  };
}

/** Bolt's listeners: each payload parsed at the boundary, then handed to the intake. */
function wire(app: App, events: SlackEvents, ctx: ChannelContext<SlackSettings>): void {
  const onEvent = async ({ body, event, context }: AllMiddlewareArgs & { body: unknown; event: unknown }) => {
    const held = context[HELD_ACK] as HeldAck | undefined;
    const parsed = messageEventSchema.safeParse(event);
    const eventId = (body as { event_id?: unknown }).event_id;
    const type = String((event as { type?: unknown } | null)?.type ?? "");
    // Every event_callback reaches Bolt through SlackReceiver, which holds its ack.
    if (!held) return void ctx.drops.record({ reason: "unheld", shape: type });
    if (typeof eventId !== "string" || eventId === "") {
      ctx.drops.record({ reason: "missing_id", fields: { event: type } });
      return void (await held.ack());
    }
    if (!parsed.success) {
      ctx.drops.record({ reason: "unknown_shape", shape: type, fields: { event: eventId } });
      return void (await held.ack());
    }
    await events.onEvent({ kind: "event", eventId, event: parsed.data }, held);
  };
  app.event("message", onEvent as never);
  app.event("app_mention", onEvent as never);
  app.action(/^parley:/, async ({ ack, body }) => {
    await ack();
    const parsed = blockActionsSchema.safeParse(body);
    if (!parsed.success) return void ctx.drops.record({ reason: "unknown_shape", shape: "block_actions" });
    events.track(events.onAction(parsed.data));
  });
  app.command(ctx.settings.slashCommand, async ({ ack, body }) => {
    await ack();
    const parsed = slashCommandSchema.safeParse(body);
    if (!parsed.success) return void ctx.drops.record({ reason: "unknown_shape", shape: "slash_command" });
    events.track(events.onCommand(parsed.data));
  });
  app.error(async (error) => {
    ctx.logger.warn("slack: bolt error", { error: error instanceof Error ? error.message : String(error) });
  });
}

/** Channel threads parley answered before this start: every thread turn records its origin. */
function earlierThreads(store: SessionStore): string[] {
  const threads: string[] = [];
  for (const key of store.keys()) {
    const origin = store.get(key)?.originLink;
    if (origin?.channelType === "slack" && origin.threadId)
      threads.push(`${origin.conversationId}:${origin.threadId}`);
  }
  return threads;
}
