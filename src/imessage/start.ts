/**
 * Starting iMessage: the platform check first (macOS 14+, the Messages database readable; anywhere
 * else the channel refuses and says why), then the imsg child, transport, surface and hub over the
 * shared machinery, the messages a restart left unanswered, and only then the watch from the
 * persisted cursor. A child that dies is restarted with backoff and the watch resubscribes from the
 * cursor; stopping closes its stdin (the quiescent stop).
 */
import { ParleyError } from "../messaging/base/errors.js";
import type { ChannelContext, RunningChannel } from "../messaging/channel/contract.js";
import { ConversationHub } from "../messaging/channel/hub.js";
import { ownerOf } from "../messaging/channel/settings.js";
import { ImsgClient } from "./client.js";
import { IMESSAGE_HELP_FOOTER, imessageCommands } from "./commands.js";
import type { IMessageSettings } from "./index.js";
import { IMessageIntake } from "./intake.js";
import { OwnMessageLedger } from "./ledger.js";
import { hostPlatform, type PlatformProbe } from "./platform.js";
import { Presence } from "./presence.js";
import type { IMessageAddress, IMessageExtra } from "./surface.js";
import { IMessageSurface } from "./surface.js";
import { IMessageTransport, type ImsgCalls, type SendPolicy } from "./transport.js";
import { WatchFeed } from "./watch.js";

/** Knobs tests (and embedders) may turn; the gateway passes none, so production has no bypass. */
export interface IMessageStartOverrides {
  /** Where the channel may run (tests run on Linux); default the host's own check. */
  platform?: PlatformProbe;
  approvalTimeoutMs?: number;
  restartFirstMs?: number;
  restartMaxMs?: number;
  resubscribeFirstMs?: number;
  sendPolicy?: Partial<SendPolicy>;
  typingEveryMs?: number;
  echoTtlMs?: number;
  requestTimeoutMs?: number;
}

export interface RunningIMessage extends RunningChannel {
  hub: ConversationHub<IMessageAddress, IMessageExtra>;
  transport: IMessageTransport;
  client: ImsgClient;
  feed: WatchFeed;
  ledger: OwnMessageLedger;
}

export async function start(
  ctx: ChannelContext<IMessageSettings>,
  overrides: IMessageStartOverrides = {},
): Promise<RunningIMessage> {
  const s = ctx.settings;
  if (s.allowedHandles.length === 0)
    throw new ParleyError(
      "CONFIG_INVALID",
      "imessage.allowedHandles is empty: the channel would answer nobody",
    );
  const platform = await (overrides.platform ?? hostPlatform)(s.dbPath);
  if (!platform.supported)
    throw new ParleyError(
      "CONFIG_INVALID",
      `imessage cannot run here: ${platform.reason ?? "unsupported host"}`,
    );
  const { clock, logger } = ctx;
  // Said, not ignored quietly: the operator set it expecting an effect it never had on real imsg.
  if (s.bufferLimit !== undefined)
    logger.warn("imessage: bufferLimit has no effect (imsg has no subscription bound); remove it");

  // The child is created below; everything that calls it goes through this late-bound view.
  let client: ImsgClient | null = null;
  const imsg: ImsgCalls = {
    request: (method, params) =>
      client ? client.request(method, params) : Promise.reject(new Error("imsg is not running")),
  };
  const ledger = new OwnMessageLedger(clock, overrides.echoTtlMs);
  const transport = new IMessageTransport({
    audit: ctx.audit,
    drops: ctx.drops,
    imsg,
    allowedHandles: s.allowedHandles,
    ledger,
    service: s.service,
    clock,
    logger,
    ...(overrides.sendPolicy ? { sendPolicy: overrides.sendPolicy } : {}),
  });
  const presence = new Presence(imsg, logger);
  const commands = imessageCommands();
  const surface = new IMessageSurface(
    {
      transport,
      presence,
      agentName: ctx.defaults.agentName,
      commands: { new: commands.spell("new"), stop: commands.spell("stop") },
      ...(overrides.typingEveryMs === undefined ? {} : { typingEveryMs: overrides.typingEveryMs }),
    },
    ctx,
  );
  const owner = ownerOf({ owner: s.owner, allowedUserIds: s.allowedHandles });
  const hub = new ConversationHub<IMessageAddress, IMessageExtra>({
    surface,
    commands,
    ctx,
    isOwner: (userId) => userId === owner,
    approvalTimeoutMs: overrides.approvalTimeoutMs,
    helpFooter: IMESSAGE_HELP_FOOTER,
    ...(s.queueMode ? { queueMode: s.queueMode } : {}),
  });
  const intake = new IMessageIntake(transport, hub, presence, ctx);
  const feed = new WatchFeed({
    imsg,
    cursor: ctx.durable?.state.cursors,
    clock,
    logger,
    drops: ctx.drops,
    handle: (row) => intake.onRow(row),
    ...(overrides.resubscribeFirstMs === undefined
      ? {}
      : { resubscribeFirstMs: overrides.resubscribeFirstMs }),
  });
  // Until the journal's leftovers are resumed, a (re)started child is not subscribed.
  let watching = false;
  const started = new ImsgClient({
    cliPath: s.cliPath,
    dbPath: s.dbPath,
    clock,
    logger,
    onNotification: (method, params) => feed.onNotification(method, params),
    drops: ctx.drops,
    // The imsg child is iMessage's connection: running is connected, an exit is down until restarted.
    onState: (running, reason) =>
      running ? ctx.status?.connected() : ctx.status?.disconnected(reason ?? "imsg stopped"),
    onStarted: async (status, restarted) => {
      presence.setStatus(status);
      if (restarted) logger.info("imessage: imsg restarted");
      if (watching) await feed.onChildStarted();
    },
    ...(overrides.restartFirstMs === undefined ? {} : { restartFirstMs: overrides.restartFirstMs }),
    ...(overrides.restartMaxMs === undefined ? {} : { restartMaxMs: overrides.restartMaxMs }),
    ...(overrides.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: overrides.requestTimeoutMs }),
  });
  client = started;
  ctx.status?.connecting();
  try {
    const status = await started.start();
    logger.info(`imessage: imsg ${status.version} (${s.cliPath}) on ${platform.os}`);
  } catch (error) {
    await started.stop();
    throw new ParleyError("CONFIG_INVALID", `imessage: ${s.cliPath} rpc did not start: ${String(error)}`, {
      cause: error,
    });
  }
  // What a restart left unanswered comes before anything newer; then the watch opens.
  await hub.resume();
  await feed.load();
  watching = true;
  await feed.subscribe();
  return {
    name: "imessage",
    hub,
    transport,
    client: started,
    feed,
    ledger,
    async stop() {
      watching = false;
      feed.stop();
      await hub.shutdown();
      await started.stop();
    },
  };
}
