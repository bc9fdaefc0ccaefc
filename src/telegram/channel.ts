/**
 * Starting Telegram: the bot (grammY, paced), identity via getMe, the command menu, the durable
 * cursor and the long-polling loop, wired to the gateway's shared machinery. A rejected token aborts
 * startup; an unreachable Telegram does not (the channel starts and connects when it can).
 */
import type { GatewayContext, RunningChannel } from "../gateway/channel.js";
import type { Clock } from "../messaging/base/clock.js";
import { realClock, sleep } from "../messaging/base/clock.js";
import { ParleyError } from "../messaging/base/errors.js";
import type { Logger } from "../messaging/base/logger.js";
import { normalizeQueueMode } from "../messaging/queue/mid-turn-router.js";
import type { SessionStore } from "../messaging/session/session-store.js";
import type { TelegramFileOptions } from "./attachments.js";
import type { PaceOptions } from "./client.js";
import { createTelegramBot, telegramOps } from "./client.js";
import { menuCommands } from "./commands.js";
import { UpdateCursor } from "./cursor.js";
import { TelegramDispatcher } from "./dispatch.js";
import { apiErrorOf } from "./errors.js";
import type { BotIdentity } from "./gate.js";
import { UpdatePoller } from "./poller.js";
import type { TelegramRendererOptions } from "./renderer.js";
import { readTelegramSettings } from "./settings.js";
import { TelegramTransport } from "./transport.js";
import type { TelegramOps, TgUser } from "./wire.js";

/** Knobs tests (and embedders) may turn; the gateway passes none. */
export interface TelegramStartOverrides {
  clock?: Clock;
  pace?: Partial<PaceOptions>;
  renderer?: Partial<Omit<TelegramRendererOptions, "chatId" | "threadId">>;
  approvalTimeoutMs?: number;
  /** Retry gap for getMe while Telegram is unreachable at boot. */
  identifyRetryMs?: number;
  /** Download bounds and the HTTP client for files users send (the token and apiRoot are the channel's). */
  files?: Partial<Omit<TelegramFileOptions, "token" | "apiRoot">>;
  /** Album collection timing. */
  albums?: { settleMs?: number; maxWaitMs?: number };
}

export interface RunningTelegram extends RunningChannel {
  dispatcher: TelegramDispatcher;
  transport: TelegramTransport;
  poller: UpdatePoller;
}

/** The gateway's store when it is a full SessionStore (links, flags, titles); else undefined. */
function sessionStoreOf(ctx: GatewayContext): SessionStore | undefined {
  const store = ctx.pipeline.store as Partial<SessionStore> | undefined;
  return store && typeof store.generationOf === "function" && typeof store.setFlag === "function"
    ? (store as SessionStore)
    : undefined;
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

export async function startTelegram(
  ctx: GatewayContext,
  overrides: TelegramStartOverrides = {},
): Promise<RunningTelegram> {
  const s = readTelegramSettings(ctx.config.telegram, ctx.env);
  if (!s.token) throw new ParleyError("CONFIG_INVALID", "TELEGRAM_BOT_TOKEN is not set");
  if (s.allowedUserIds.size === 0)
    throw new ParleyError("CONFIG_INVALID", "telegram.allowedUserIds is empty: the bot would answer nobody");
  const clock = overrides.clock ?? realClock;
  const logger = ctx.logger;
  const bot = createTelegramBot({
    token: s.token,
    apiRoot: s.apiRoot,
    clock,
    logger,
    ...(overrides.pace ? { pace: overrides.pace } : {}),
  });
  const ops = telegramOps(bot);
  const transport = new TelegramTransport({
    audit: ctx.audit,
    ops,
    allowedUserIds: s.allowedUserIds,
    forum: { allowForum: s.allowForum, allowedForumChatIds: s.allowedForumChatIds },
    logger,
    // Files users send are downloaded from the same Bot API server the calls go to.
    files: { timers: clock, ...overrides.files, token: s.token, apiRoot: s.apiRoot },
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

  const store = sessionStoreOf(ctx);
  if (!store)
    logger.warn("telegram: no shared session store; links, titles and privacy flags last until restart");
  const dispatcher = new TelegramDispatcher({
    transport,
    sessions: ctx.sessions,
    pipeline: ctx.pipeline,
    audit: ctx.audit,
    logger,
    approvalMode: ctx.config.approvalMode,
    queueMode: normalizeQueueMode(s.queueMode ?? ctx.config.queueMode),
    forumActivation: s.forumActivation,
    dmScope: s.dmScope,
    ownerCount: s.allowedUserIds.size,
    grant: ctx.grant,
    clock,
    ...(store ? { store } : {}),
    ...(overrides.approvalTimeoutMs ? { approvalTimeoutMs: overrides.approvalTimeoutMs } : {}),
    ...(overrides.renderer ? { renderer: overrides.renderer } : {}),
    ...(overrides.albums ? { albums: overrides.albums } : {}),
  });
  await registerCommands(ops, logger);
  const cursor = await UpdateCursor.load({ home: ctx.home, logger });
  const poller = new UpdatePoller({
    ops,
    cursor,
    handle: (update) => dispatcher.handleUpdate(update),
    timeoutSeconds: s.pollTimeoutSeconds,
    clock,
    logger,
    onState: (connected, reason) =>
      connected ? logger.info("telegram: connected") : logger.warn("telegram: not connected", { reason }),
  });
  poller.start();
  return {
    name: "telegram",
    dispatcher,
    transport,
    poller,
    async stop() {
      stopping.abort();
      await poller.stopIntake();
      await dispatcher.shutdown();
      await poller.drain();
    },
  };
}

export function start(ctx: GatewayContext): Promise<RunningChannel> {
  return startTelegram(ctx);
}
