/**
 * Starting Discord: REST + Gateway client, transport, surface and hub, wired to the gateway's shared
 * machinery. The Gateway must reach READY (bounded) for the channel to count as started; the
 * application-command registration runs in the background because its only product is
 * discoverability, and the ! text commands are the floor if it fails.
 */
import { ParleyError } from "../messaging/base/errors.js";
import type { ChannelContext, RunningChannel } from "../messaging/channel/contract.js";
import { secretOf } from "../messaging/channel/contract.js";
import { ConversationHub } from "../messaging/channel/hub.js";
import type { InboundDrop } from "../messaging/channel/inbound-drops.js";
import { PickerRegistry } from "../messaging/channel/picker.js";
import { ownerOf } from "../messaging/channel/settings.js";
import type { SessionChoice } from "../messaging/session/resume.js";
import { SessionBinder } from "../messaging/session/resume.js";
import type { SessionStore } from "../messaging/session/session-store.js";
import type { DiscordClientOptions } from "./client.js";
import { DiscordClient, intentsFor } from "./client.js";
import { applicationCommandPayload, DISCORD_HELP_FOOTER, discordCommands } from "./commands.js";
import type { DiscordSettings } from "./index.js";
import { DISCORD_API_BASE } from "./index.js";
import { DiscordEvents } from "./intake.js";
import type { ListSurface } from "./session-picker.js";
import { DISCORD_RESUME_COPY, DiscordSessionPicker } from "./session-picker.js";
import type { DiscordAddress, DiscordExtra } from "./surface.js";
import { DiscordSurface } from "./surface.js";
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
  throttleMs?: number;
  approvalTimeoutMs?: number;
  client?: Partial<
    Pick<DiscordClientOptions, "breaker" | "reconnect" | "readyTimeoutMs" | "requestTimeoutMs">
  >;
}

export interface RunningDiscord extends RunningChannel {
  client: DiscordClient;
  transport: DiscordTransport;
  hub: ConversationHub<DiscordAddress, DiscordExtra>;
  events: DiscordEvents;
  /** Settles when the background command registration finished (tests await it). */
  registration: Promise<void>;
}

/** PING, autocomplete and modal submit each need their own callback shape: dropped at the boundary. */
const HANDLED_INTERACTIONS = new Set([INTERACTION_APPLICATION_COMMAND, INTERACTION_MESSAGE_COMPONENT]);

/** The Gateway's own session frames: the client reads them (identity, connectedness); nobody wrote them. */
const SESSION_EVENTS = new Set(["READY", "RESUMED"]);

/**
 * What one Gateway dispatch is at the boundary: an envelope parley reads, a drop with its reason
 * (an edit, a shape it does not read, a frame without its id), or a session frame (null).
 */
export function toEnvelope(event: string, data: unknown): DiscordEnvelope | InboundDrop | null {
  if (SESSION_EVENTS.has(event)) return null;
  if (event === "MESSAGE_CREATE") {
    const m = messageSchema.safeParse(data);
    return m.success ? { kind: "message", message: m.data } : unreadable(event, data);
  }
  if (event === "INTERACTION_CREATE") {
    const i = interactionSchema.safeParse(data);
    if (!i.success) return unreadable(event, data);
    return HANDLED_INTERACTIONS.has(i.data.type)
      ? { kind: "interaction", interaction: i.data }
      : {
          reason: "unknown_shape",
          shape: `INTERACTION_CREATE type ${i.data.type}`,
          fields: { id: i.data.id },
        };
  }
  // parley answers what was sent, not what it became.
  if (event === "MESSAGE_UPDATE") return { reason: "edited", fields: { event } };
  return { reason: "unknown_shape", shape: event || "(no event name)" };
}

/** A frame of a kind parley reads that does not parse: without its id, or of another shape. */
function unreadable(event: string, data: unknown): InboundDrop {
  const id = (data as { id?: unknown } | null)?.id;
  return typeof id === "string" && id !== ""
    ? { reason: "unknown_shape", shape: event, fields: { id } }
    : { reason: "missing_id", fields: { event } };
}

export async function start(
  ctx: ChannelContext<DiscordSettings>,
  overrides: DiscordStartOverrides = {},
): Promise<RunningDiscord> {
  const s = ctx.settings;
  const token = secretOf(ctx.env, "DISCORD_BOT_TOKEN");
  if (!token) throw new ParleyError("CONFIG_INVALID", "DISCORD_BOT_TOKEN is not set");
  if (s.allowedUserIds.length === 0)
    ctx.logger.warn("discord: discord.allowedUserIds is empty, so nobody can use the bot (deny by default)");
  if (s.allowedChannelIds.length > 0 && !s.autoThread)
    ctx.logger.warn(
      "discord: allowedChannelIds has no effect without autoThread (a channel is never answered in place)",
    );
  const guild = s.allowedThreadIds.length > 0 || s.allowedChannelIds.length > 0;
  let events: DiscordEvents | null = null;
  const client = new DiscordClient({
    token,
    apiBase: s.apiBase,
    intents: intentsFor(guild),
    logger: ctx.logger,
    clock: ctx.clock,
    ...overrides.client,
    onDispatch: (event, data) => {
      const read = toEnvelope(event, data);
      if (read === null) return;
      if ("reason" in read) ctx.drops.record(read);
      else if (events) void events.handle(read);
      // The Gateway opens only after the intake is built; counted should that ever change.
      else ctx.drops.record({ reason: "not_ready" });
    },
    onState: (state) => {
      if (state.error) ctx.logger.warn(`discord: ${state.error}`);
      if (state.connected) ctx.status?.connected();
      else ctx.status?.disconnected(state.error ?? "gateway connection closed");
    },
  });
  const transport = new DiscordTransport({
    audit: ctx.audit,
    drops: ctx.drops,
    rest: client,
    botUserId: () => client.botUserId,
    allowedUserIds: new Set(s.allowedUserIds),
    allowedThreadIds: new Set(s.allowedThreadIds),
    allowedChannelIds: new Set(s.allowedChannelIds),
    autoThread: s.autoThread,
    logger: ctx.logger,
    earlierThreads: earlierThreads(ctx.store),
    // An operator-configured apiBase (e.g. the loopback fake) is also admitted as a file origin.
    attachments: {
      ...(s.apiBase === DISCORD_API_BASE ? {} : { extraOrigin: s.apiBase }),
      timers: ctx.clock,
    },
  });
  const owner = ownerOf(s);
  const resume = await sessionResume(ctx, client, owner);
  const surface = new DiscordSurface(
    {
      transport,
      rest: client,
      settings: s,
      agentName: ctx.defaults.agentName,
      ...(overrides.throttleMs !== undefined ? { throttleMs: overrides.throttleMs } : {}),
    },
    ctx,
  );
  const hub: ConversationHub<DiscordAddress, DiscordExtra> = new ConversationHub<
    DiscordAddress,
    DiscordExtra
  >({
    surface,
    commands: discordCommands(),
    ctx,
    isOwner: (userId) => userId === owner,
    queueMode: s.queueMode,
    approvalTimeoutMs: overrides.approvalTimeoutMs,
    helpFooter: DISCORD_HELP_FOOTER,
    binder: resume.binder,
    handlers: {
      // Discord's listing is the resume picker: web chat sessions this conversation may continue.
      sessions: async (call) => {
        const slash = call.extra?.slash;
        // In a thread the list exists only as the ephemeral answer to the owner's slash command.
        const where: ListSurface = call.conversation.direct
          ? { kind: "dm" }
          : slash && events
            ? {
                kind: "thread-private",
                reply: (content, rows) => (events as DiscordEvents).slashReply(slash, content, rows),
              }
            : { kind: "thread" };
        return (await resume.list(call.conversation.link, call.userId, where)) ?? "";
      },
    },
  });
  events = new DiscordEvents(transport, client, surface, hub, resume, ctx);
  ctx.status?.connecting();
  await client.connect();
  // What a restart left unanswered, before new messages find their turns taken.
  await hub.resume();
  const { rows, skipped } = applicationCommandPayload();
  if (skipped.length) ctx.logger.warn("discord: command rows skipped (invalid for Discord)", { skipped });
  const registration = client.registerCommands(rows).then((res) => {
    if (!res.ok)
      ctx.logger.warn("discord: registering slash commands failed; ! commands still work", {
        status: res.status,
      });
  });
  ctx.announce(`parley discord: connected as ${client.botUserId}`);
  return {
    name: "discord",
    client,
    transport,
    hub,
    events,
    registration,
    async stop() {
      await hub.shutdown();
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
 * channel's resume records (the store's). An unreadable record (an older install's file that could
 * not be imported) does not stop the channel: every resume route then refuses with the repair hint,
 * and the operator sees it here at startup too.
 */
async function sessionResume(
  ctx: ChannelContext<DiscordSettings>,
  rest: DiscordClient,
  owner: string | undefined,
): Promise<DiscordSessionPicker> {
  const store = ctx.store;
  if (!ctx.durable) throw new ParleyError("CONFIG_INVALID", "discord needs the store for its resume records");
  const expectations = ctx.durable.state.resume.forChannel("discord");
  const status = await expectations.ready();
  if (status.state === "unreadable")
    ctx.logger.error(`discord: ${status.problem}; session routing is paused. ${expectations.repairHint()}`);
  const binder = new SessionBinder({
    channel: "discord",
    store,
    expectations,
    copy: DISCORD_RESUME_COPY,
    // A guild thread is read by every member who can see its channel; a DM by the owner alone.
    sharedAudience: (location) => location.threadId !== undefined,
    audit: ctx.audit,
    logger: ctx.logger,
    picker: new PickerRegistry<SessionChoice>({ now: () => ctx.clock.now() }),
  });
  return new DiscordSessionPicker({ rest, binder, audit: ctx.audit, ownerId: owner });
}
