/**
 * Starting Telegram: the bot (grammY, paced), identity via getMe, the command menu, the messages a
 * restart left unanswered, then the long-polling loop from the durable cursor, wired to the
 * gateway's shared machinery. A rejected token aborts
 * startup; an unreachable Telegram does not (the channel starts and connects when it can).
 */
import { sleep } from "../messaging/base/clock.js";
import { ParleyError } from "../messaging/base/errors.js";
import type { Logger } from "../messaging/base/logger.js";
import type { ChannelContext, RunningChannel } from "../messaging/channel/contract.js";
import { secretOf } from "../messaging/channel/contract.js";
import { ConversationHub } from "../messaging/channel/hub.js";
import { ownerOf } from "../messaging/channel/settings.js";
import type { TelegramFileOptions } from "./attachments.js";
import type { PaceOptions } from "./client.js";
import { createTelegramBot, telegramOps } from "./client.js";
import { menuCommands, TELEGRAM_HELP_FOOTER, telegramCommands } from "./commands.js";
import { apiErrorOf } from "./errors.js";
import type { BotIdentity } from "./gate.js";
import type { TelegramSettings } from "./index.js";
import { TelegramUpdates, topicAdmits } from "./intake.js";
import { UpdatePoller } from "./poller.js";
import type { TelegramRendererOptions } from "./renderer.js";
import type { Route } from "./routes.js";
import type { TelegramExtra } from "./surface.js";
import { TelegramSurface } from "./surface.js";
import { TelegramTransport } from "./transport.js";
import type { TelegramOps, TgUser } from "./wire.js";

/** Knobs tests (and embedders) may turn; the gateway passes none. */
export interface TelegramStartOverrides {
  pace?: Partial<PaceOptions>;
  renderer?: Partial<Omit<TelegramRendererOptions, "chatId" | "threadId" | "uploads">>;
  approvalTimeoutMs?: number;
  /** Retry gap for getMe while Telegram is unreachable at boot. */
  identifyRetryMs?: number;
  /** Download bounds and the HTTP client for files users send (the token and apiRoot are the channel's). */
  files?: Partial<Omit<TelegramFileOptions, "token" | "apiRoot">>;
  /** Album collection timing. */
  albums?: { settleMs?: number; maxWaitMs?: number };
}

export interface RunningTelegram extends RunningChannel {
  hub: ConversationHub<Route, TelegramExtra>;
  updates: TelegramUpdates;
  transport: TelegramTransport;
  poller: UpdatePoller;
}

async function registerCommands(ops: TelegramOps, logger: Logger): Promise<void> {
  const wanted = menuCommands();
  try {
    // Registering on every start spends rate budget (and earns 429s) for nothing: compare first.
    const current = await ops.call<{ command: string; description: string }[]>("getMyCommands", {});
    if (JSON.stringify(current) === JSON.stringify(wanted)) return;
    await ops.call("setMyCommands", { commands: wanted });
  } catch (error) {
    logger.warn("telegram: registering the command menu failed", { error: String(error) });
  }
}

export async function start(
  ctx: ChannelContext<TelegramSettings>,
  overrides: TelegramStartOverrides = {},
): Promise<RunningTelegram> {
  const s = ctx.settings;
  const token = secretOf(ctx.env, "TELEGRAM_BOT_TOKEN");
  if (!token) throw new ParleyError("CONFIG_INVALID", "TELEGRAM_BOT_TOKEN is not set");
  if (s.allowedUserIds.length === 0)
    throw new ParleyError("CONFIG_INVALID", "telegram.allowedUserIds is empty: the bot would answer nobody");
  const clock = ctx.clock;
  const logger = ctx.logger;
  const bot = createTelegramBot({
    token,
    apiRoot: s.apiRoot,
    clock,
    logger,
    ...(overrides.pace ? { pace: overrides.pace } : {}),
  });
  const ops = telegramOps(bot);
  const transport = new TelegramTransport({
    audit: ctx.audit,
    drops: ctx.drops,
    ops,
    allowedUserIds: new Set(s.allowedUserIds),
    owner: ownerOf(s),
    forum: { allowForum: s.allowForum, allowedForumChatIds: new Set(s.allowedForumChatIds) },
    logger,
    // Files users send are downloaded from the same Bot API server the calls go to.
    files: { timers: clock, ...overrides.files, token, apiRoot: s.apiRoot },
  });

  const stopping = new AbortController();
  const identify = async (): Promise<boolean> => {
    try {
      const me = await ops.call<TgUser>("getMe", {});
      transport.setIdentity({ id: me.id, username: me.username ?? "" } satisfies BotIdentity);
      return true;
    } catch (error) {
      // Only a rejected token is fatal; anything else is "not reachable yet".
      if (apiErrorOf(error)?.code === 401)
        throw new ParleyError("CONFIG_INVALID", "Telegram rejected the bot token (getMe: 401)");
      logger.warn("telegram: getMe failed; starting unidentified and retrying", { error: String(error) });
      return false;
    }
  };
  if (!(await identify())) {
    // Until identity lands, mention mode answers nobody rather than everybody.
    void (async () => {
      while (!stopping.signal.aborted) {
        try {
          await sleep(clock, overrides.identifyRetryMs ?? 15_000, stopping.signal);
          if (await identify()) return;
        } catch (error) {
          if (!stopping.signal.aborted)
            logger.error("telegram: identity retry stopped", { error: String(error) });
          return;
        }
      }
    })();
  }

  const surface = new TelegramSurface(
    {
      transport,
      agentName: ctx.defaults.agentName,
      dmScope: s.dmScope,
      soleOperator: s.allowedUserIds.length === 1,
      ...(overrides.renderer ? { renderer: overrides.renderer } : {}),
    },
    ctx,
  );
  const owner = ownerOf(s);
  const hub = new ConversationHub<Route, TelegramExtra>({
    surface,
    commands: telegramCommands(() => transport.identity?.username ?? null),
    ctx,
    isOwner: (userId) => userId === owner,
    queueMode: s.queueMode,
    approvalTimeoutMs: overrides.approvalTimeoutMs,
    helpFooter: TELEGRAM_HELP_FOOTER,
    privacy: true,
    admit: topicAdmits(s, ctx.drops),
  });
  const updates = new TelegramUpdates(transport, surface, hub, ctx, overrides.albums);
  await registerCommands(ops, logger);
  // Before the first poll: what a restart left unanswered comes before anything newer.
  await hub.resume();
  const poller = new UpdatePoller({
    ops,
    ...(ctx.durable ? { cursor: ctx.durable.state.cursors } : {}),
    handle: (update) => updates.handleUpdate(update),
    timeoutSeconds: s.pollTimeoutSeconds,
    clock,
    logger,
    onState: (connected, reason) => {
      if (connected) {
        logger.info("telegram: connected");
        ctx.status?.connected();
      } else {
        logger.warn("telegram: not connected", { reason });
        ctx.status?.disconnected(reason ?? "not connected");
      }
    },
  });
  // Not connected until the first poll answers (an unreachable Telegram does not stop the start).
  ctx.status?.connecting();
  await poller.start();
  return {
    name: "telegram",
    hub,
    updates,
    transport,
    poller,
    async stop() {
      stopping.abort();
      await poller.stopIntake();
      await updates.shutdown();
    },
  };
}
