/**
 * Starting Discord: REST + Gateway client, transport, dispatcher, wired to the gateway's shared
 * machinery. The Gateway must reach READY (bounded) for the channel to count as started; the
 * application-command registration runs in the background because its only product is
 * discoverability, and the ! text commands are the floor if it fails.
 */
import type { GatewayContext, RunningChannel } from "../gateway/channel.js";
import type { Clock } from "../messaging/base/clock.js";
import { ParleyError } from "../messaging/base/errors.js";
import { PickerRegistry } from "../messaging/channel/picker.js";
import type { SessionChoice } from "../messaging/session/resume.js";
import { SessionBinder } from "../messaging/session/resume.js";
import { expectationsRepairHint, ResumeExpectationStore } from "../messaging/session/resume-expectations.js";
import type { SessionStore } from "../messaging/session/session-store.js";
import type { DiscordClientOptions } from "./client.js";
import { DiscordClient, intentsFor } from "./client.js";
import { applicationCommandPayload } from "./commands.js";
import { DiscordDispatcher } from "./dispatch.js";
import { DISCORD_RESUME_COPY, DiscordSessionPicker } from "./session-picker.js";
import { DEFAULT_API_BASE, readDiscordSettings, readToggles } from "./settings.js";
import { DiscordTransport } from "./transport.js";
import type { DiscordEnvelope } from "./wire.js";
import {
  INTERACTION_APPLICATION_COMMAND,
  INTERACTION_MESSAGE_COMPONENT,
  interactionSchema,
  messageSchema,
} from "./wire.js";

/** Knobs tests (and embedders) may turn; the gateway passes none. */
export interface DiscordStartOverrides {
  clock?: Clock;
  throttleMs?: number;
  approvalTimeoutMs?: number;
  client?: Partial<
    Pick<DiscordClientOptions, "breaker" | "reconnect" | "readyTimeoutMs" | "requestTimeoutMs">
  >;
}

export interface RunningDiscord extends RunningChannel {
  client: DiscordClient;
  transport: DiscordTransport;
  dispatcher: DiscordDispatcher;
  /** Settles when the background command registration finished (tests await it). */
  registration: Promise<void>;
}

/** PING, autocomplete and modal submit each need their own callback shape: dropped at the boundary. */
const HANDLED_INTERACTIONS = new Set([INTERACTION_APPLICATION_COMMAND, INTERACTION_MESSAGE_COMPONENT]);

export function toEnvelope(event: string, data: unknown): DiscordEnvelope | null {
  if (event === "MESSAGE_CREATE") {
    const m = messageSchema.safeParse(data);
    return m.success ? { kind: "message", message: m.data } : null;
  }
  if (event === "INTERACTION_CREATE") {
    const i = interactionSchema.safeParse(data);
    return i.success && HANDLED_INTERACTIONS.has(i.data.type)
      ? { kind: "interaction", interaction: i.data }
      : null;
  }
  return null;
}

export async function startDiscord(
  ctx: GatewayContext,
  overrides: DiscordStartOverrides = {},
): Promise<RunningDiscord> {
  const s = readDiscordSettings(ctx.config, ctx.env);
  for (const problem of s.problems) ctx.logger.warn(`discord: ${problem}`);
  if (!s.token) throw new ParleyError("CONFIG_INVALID", "DISCORD_BOT_TOKEN is not set");
  if (s.allowedUserIds.size === 0)
    ctx.logger.warn("discord: discord.allowedUserIds is empty, so nobody can use the bot (deny by default)");
  if (s.allowedChannelIds.size > 0 && !s.autoThread)
    ctx.logger.warn(
      "discord: allowedChannelIds has no effect without autoThread (a channel is never answered in place)",
    );
  const guild = s.allowedThreadIds.size > 0 || s.allowedChannelIds.size > 0;
  let dispatcher: DiscordDispatcher | null = null;
  const client = new DiscordClient({
    token: s.token,
    apiBase: s.apiBase,
    intents: intentsFor(guild),
    logger: ctx.logger,
    ...(overrides.clock ? { clock: overrides.clock } : {}),
    ...overrides.client,
    onDispatch: (event, data) => {
      const envelope = toEnvelope(event, data);
      if (envelope) void dispatcher?.handle(envelope);
      else if (event === "MESSAGE_CREATE" || event === "INTERACTION_CREATE")
        ctx.logger.debug("discord: event dropped at the boundary", { event });
    },
    onState: (state) => {
      if (state.error) ctx.logger.warn(`discord: ${state.error}`);
    },
  });
  const transport = new DiscordTransport({
    audit: ctx.audit,
    rest: client,
    botUserId: () => client.botUserId,
    allowedUserIds: s.allowedUserIds,
    allowedThreadIds: s.allowedThreadIds,
    allowedChannelIds: s.allowedChannelIds,
    autoThread: s.autoThread,
    logger: ctx.logger,
    ...(ctx.store ? { earlierThreads: earlierThreads(ctx.store) } : {}),
    // An operator-configured apiBase (e.g. the loopback fake) is also admitted as a file origin.
    attachments: {
      ...(s.apiBase === DEFAULT_API_BASE ? {} : { extraOrigin: s.apiBase }),
      ...(overrides.clock ? { timers: overrides.clock } : {}),
    },
  });
  const resume = ctx.store ? await sessionResume(ctx, client, s.allowedUserIds, overrides.clock) : undefined;
  dispatcher = new DiscordDispatcher({
    transport,
    rest: client,
    sessions: ctx.sessions,
    pipeline: ctx.pipeline,
    audit: ctx.audit,
    logger: ctx.logger,
    approvalMode: ctx.config.approvalMode,
    queueMode: s.queueMode,
    autoApproveSession: () => ctx.grant.isActive(),
    toggles: () =>
      readToggles(
        () => ctx.config,
        (error) => ctx.logger.warn("discord: toggles unreadable", { error: String(error) }),
      ),
    ...(overrides.clock ? { clock: overrides.clock } : {}),
    ...(overrides.throttleMs !== undefined ? { throttleMs: overrides.throttleMs } : {}),
    ...(overrides.approvalTimeoutMs ? { approvalTimeoutMs: overrides.approvalTimeoutMs } : {}),
    ...(resume ? { resume } : {}),
  });
  await client.connect();
  const { rows, skipped } = applicationCommandPayload();
  if (skipped.length) ctx.logger.warn("discord: command rows skipped (invalid for Discord)", { skipped });
  const registration = client.registerCommands(rows).then((res) => {
    if (!res.ok)
      ctx.logger.warn("discord: registering slash commands failed; ! commands still work", {
        status: res.status,
      });
  });
  ctx.announce(`parley discord: connected as ${client.botUserId}`);
  const running = dispatcher;
  return {
    name: "discord",
    client,
    transport,
    dispatcher: running,
    registration,
    async stop() {
      await running.shutdown();
      await registration;
      await client.close();
    },
  };
}

/** Threads parley conversed in before this start: every thread turn records its thread as origin. */
function earlierThreads(store: SessionStore): Set<string> {
  const threads = new Set<string>();
  for (const key of store.keys()) {
    const origin = store.get(key)?.originLink;
    if (origin?.channelType === "discord" && origin.threadId) threads.add(origin.threadId);
  }
  return threads;
}

/**
 * `!sessions` needs the durable session store (the binding lives on the picked session's row) and the
 * channel's expectation file. An unreadable file does not stop the channel: every resume route then
 * refuses with the repair hint, and the operator sees it here at startup too.
 */
async function sessionResume(
  ctx: GatewayContext,
  rest: DiscordClient,
  allowedUserIds: ReadonlySet<string>,
  clock: Clock | undefined,
): Promise<DiscordSessionPicker | undefined> {
  const store = ctx.store;
  if (!store) return undefined;
  const expectations = new ResumeExpectationStore(ctx.home, "discord", { logger: ctx.logger });
  const status = await expectations.ready();
  if (status.state === "unreadable")
    ctx.logger.error(
      `discord: ${status.problem}; session routing is paused. ${expectationsRepairHint(expectations.relPath)}`,
    );
  const binder = new SessionBinder({
    channel: "discord",
    store,
    expectations,
    copy: DISCORD_RESUME_COPY,
    // A guild thread is read by every member who can see its channel; a DM by the owner alone.
    sharedAudience: (location) => location.threadId !== undefined,
    audit: ctx.audit,
    logger: ctx.logger,
    ...(clock ? { picker: new PickerRegistry<SessionChoice>({ now: () => clock.now() }) } : {}),
  });
  const [owner, ...others] = [...allowedUserIds];
  return new DiscordSessionPicker({
    rest,
    binder,
    audit: ctx.audit,
    ownerId: owner !== undefined && others.length === 0 ? owner : undefined,
  });
}

export function start(ctx: GatewayContext): Promise<RunningChannel> {
  return startDiscord(ctx);
}
