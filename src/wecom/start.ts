/**
 * Starting WeCom: the long connection (its health recorded for doctor), the transport's gate, the
 * surface and the hub, then what a restart left unfinished, then the intake. The hub never holds a
 * message behind a live turn (a WeCom answer is bound to the message that asked) and gives a failed
 * message's msgid back, so a redelivery would be answered; nothing says WeCom redelivers (a callback
 * has no acknowledgement), so the renderer never relies on it. Stop settles turns before the socket.
 */
import { ParleyError } from "../messaging/base/errors.js";
import type { ChannelContext, RunningChannel } from "../messaging/channel/contract.js";
import { secretOf } from "../messaging/channel/contract.js";
import { ConversationHub } from "../messaging/channel/hub.js";
import { ownerOf } from "../messaging/channel/settings.js";
import type { WeComClientOptions } from "./client.js";
import { WeComClient } from "./client.js";
import { WECOM_HELP_FOOTER, wecomCommands } from "./commands.js";
import { writeHealth } from "./health.js";
import type { WeComSettings } from "./index.js";
import { WeComIntake } from "./intake.js";
import { admissibleSocketUrl, OriginPolicy } from "./origins.js";
import type { WeComAddress } from "./outbox.js";
import { ResponseUrl } from "./response-url.js";
import type { WeComExtra } from "./surface.js";
import { WeComSurface } from "./surface.js";
import { WeComTransport } from "./transport.js";

/** Knobs tests (and embedders) may turn; the gateway passes none. */
export interface WeComStartOverrides {
  client?: Partial<
    Pick<
      WeComClientOptions,
      "ackTimeoutMs" | "pingIntervalMs" | "reconnectBaseMs" | "reconnectMaxMs" | "connectWaitMs"
    >
  >;
  throttleMs?: number;
  approvalTimeoutMs?: number;
}

export interface RunningWeCom extends RunningChannel {
  hub: ConversationHub<WeComAddress, WeComExtra>;
  client: WeComClient;
  transport: WeComTransport;
  intake: WeComIntake;
}

export async function start(
  ctx: ChannelContext<WeComSettings>,
  overrides: WeComStartOverrides = {},
): Promise<RunningWeCom> {
  const s = ctx.settings;
  const botId = secretOf(ctx.env, "WECOM_BOT_ID");
  const secret = secretOf(ctx.env, "WECOM_SECRET");
  if (!botId || !secret)
    throw new ParleyError("CONFIG_INVALID", "WECOM_BOT_ID and WECOM_SECRET must both be set");
  if (s.allowedUsers.length === 0 && !s.allowAllUsers)
    throw new ParleyError("CONFIG_INVALID", "wecom.allowedUsers is empty: the bot would answer nobody");
  if (!admissibleSocketUrl(s.wsUrl))
    throw new ParleyError("CONFIG_INVALID", "wecom.wsUrl is not a wss:// URL");
  const { clock, logger, audit } = ctx;
  const origins = new OriginPolicy(s.mediaHosts);

  let intake: WeComIntake | undefined;
  const client = new WeComClient({
    url: s.wsUrl,
    botId,
    secret,
    clock,
    logger,
    drops: ctx.drops,
    ...overrides.client,
    onCallback: (frame) => intake?.onCallback(frame),
    onHealth: (h) => {
      // The same verdict is the channel's connection state (health, metrics, alerts).
      if (h.state === "healthy") ctx.status?.connected();
      else if (h.state === "connecting") ctx.status?.connecting();
      else ctx.status?.disconnected(h.reason);
      // doctor's "last verdict"; losing it costs a report, never the connection.
      try {
        writeHealth(ctx.home, h);
      } catch (error) {
        logger.warn("wecom: recording the connection's health failed", { error: String(error) });
      }
    },
  });
  const transport = new WeComTransport({
    audit,
    drops: ctx.drops,
    botId,
    allowedUsers: s.allowedUsers,
    allowAllUsers: s.allowAllUsers,
    pusher: client,
    logger,
  });
  const surface = new WeComSurface({
    wire: client,
    responseUrl: new ResponseUrl({ origins, timers: clock, logger }),
    origins,
    agentName: ctx.defaults.agentName,
    clock,
    logger,
    audit,
    ...(overrides.throttleMs !== undefined ? { throttleMs: overrides.throttleMs } : {}),
  });
  const owner = ownerOf({ owner: s.owner, allowedUserIds: s.allowedUsers });
  const hub = new ConversationHub<WeComAddress, WeComExtra>({
    surface,
    commands: wecomCommands(),
    ctx,
    isOwner: (userId) => userId === owner,
    // Steer only: a message is folded into the live turn or refused with a resend prompt.
    queueMode: "steer",
    holdsMidTurn: false,
    redelivers: true,
    approvalTimeoutMs: overrides.approvalTimeoutMs,
    helpFooter: WECOM_HELP_FOOTER,
    privacy: true,
  });
  intake = new WeComIntake(transport, hub, logger, ctx.drops);
  // The connection opens first (callbacks wait), so what a restart left unfinished can be answered,
  // and comes before anything newer. Not connected until subscribed.
  ctx.status?.connecting();
  client.start();
  await hub.resume();
  intake.start();
  return {
    name: "wecom",
    hub,
    client,
    transport,
    intake,
    async stop() {
      await intake?.stop();
      // Turns borrow the socket for their answers: they settle before it closes.
      await hub.shutdown();
      await client.close();
    },
  };
}
