/**
 * Starting Weixin: the iLink client at the admitted origin (the token goes nowhere else), the
 * session pause (its state recorded in the data home for doctor), the peers' context tokens and the
 * long-poll cursor from the store, transport, surface and hub (steer only: a reply here answers the
 * peer's latest message, so nothing is held for later), what a restart left unfinished, then the
 * long poll. Stop ends the poll, settles turns, then clears "typing…".
 */
import { ParleyError } from "../messaging/base/errors.js";
import type { ChannelContext, RunningChannel } from "../messaging/channel/contract.js";
import { secretOf } from "../messaging/channel/contract.js";
import { ConversationHub } from "../messaging/channel/hub.js";
import { IlinkClient } from "./client.js";
import { WEIXIN_HELP_FOOTER, weixinCommands } from "./commands.js";
import { readHealth, readLink, TOKEN_ENV, writeHealth } from "./home.js";
import type { WeixinSettings } from "./index.js";
import { WeixinIntake } from "./intake.js";
import { admissibleBaseUrl } from "./origins.js";
import { SessionPause } from "./pause.js";
import { PeerState } from "./peers.js";
import { ownerOf, PeerPolicy } from "./policy.js";
import type { PollerOptions, PollHealth } from "./poller.js";
import { UpdatesPoller } from "./poller.js";
import type { WeixinAddress, WeixinExtra } from "./surface.js";
import { WeixinSurface } from "./surface.js";
import { WeixinTransport } from "./transport.js";
import { Typing } from "./typing.js";

/** Knobs tests (and embedders) may turn; the gateway passes none. */
export interface WeixinStartOverrides {
  fetch?: typeof fetch;
  approvalTimeoutMs?: number;
  sendGapMs?: number;
  typingRefreshMs?: number;
  backoff?: PollerOptions["backoff"];
  /** Plaintext ceiling for one media object. */
  maxMediaBytes?: number;
}

export interface RunningWeixin extends RunningChannel {
  hub: ConversationHub<WeixinAddress, WeixinExtra>;
  transport: WeixinTransport;
  poller: UpdatesPoller;
  pause: SessionPause;
  /** Healthy, or why not (a `-14` pause says "relink may be needed"). */
  health(): PollHealth;
}

export async function start(
  ctx: ChannelContext<WeixinSettings>,
  overrides: WeixinStartOverrides = {},
): Promise<RunningWeixin> {
  const s = ctx.settings;
  const { clock, logger, audit } = ctx;
  const token = secretOf(ctx.env, TOKEN_ENV);
  if (!token) throw new ParleyError("CONFIG_INVALID", `${TOKEN_ENV} is not set: run \`parley weixin link\``);
  const link = readLink(ctx.home);
  const owner = ownerOf(s.owner, link?.ownerUserId, s.allowedUserIds);
  const policy = new PeerPolicy({ dmPolicy: s.dmPolicy, allowedUserIds: s.allowedUserIds, owner });
  if (policy.policy === "allowlist" && policy.listed().length === 0)
    throw new ParleyError(
      "CONFIG_INVALID",
      "weixin.allowedUserIds is empty and no owner is linked: the bot would answer nobody",
    );
  if (policy.policy === "unknown")
    logger.warn(`weixin: dmPolicy "${s.dmPolicy}" is not allowlist, open or disabled: everyone is refused`);
  // A base URL login named is used only if it may carry the token (checked again: the file is editable).
  const origin = (link?.baseUrl && admissibleBaseUrl(link.baseUrl, s.apiUrl)) || s.apiUrl;

  const record = (pausedUntil: number) => {
    try {
      writeHealth(ctx.home, { pausedUntil, at: clock.now() });
    } catch (error) {
      logger.warn("weixin: recording the session's health failed", { error: String(error) });
    }
  };
  const pause = new SessionPause({
    clock,
    minutes: s.sessionPauseMinutes,
    onChange: ({ until }) => {
      if (until > 0) {
        logger.error(
          `weixin: iLink says the session expired (-14); every call paused for ${s.sessionPauseMinutes} min; relink may be needed (parley weixin link)`,
        );
        audit.log("weixin.session", "expired", {
          minutes: s.sessionPauseMinutes,
          reason: "paused_after_-14",
        });
      } else logger.info("weixin: the session pause is over; polling again");
      record(until);
    },
  });
  // A restart inside a pause keeps it (a crash loop must not become a burst of -14s); a relink
  // clears the record, so a fresh token is used at once.
  const prior = readHealth(ctx.home);
  if (prior && prior.pausedUntil > clock.now()) pause.restore(prior.pausedUntil);
  else record(0);
  const client = new IlinkClient({
    origin,
    token,
    pause,
    timers: clock,
    ...(overrides.fetch ? { fetch: overrides.fetch } : {}),
  });
  const peers = new PeerState({
    routes: ctx.durable?.state.routes,
    cursors: ctx.durable?.state.cursors,
    logger,
  });
  await peers.load();
  const transport = new WeixinTransport({
    audit,
    drops: ctx.drops,
    client,
    policy,
    peers,
    timers: clock,
    logger,
    ...(overrides.sendGapMs !== undefined ? { sendGapMs: overrides.sendGapMs } : {}),
  });
  const typing = new Typing({
    client,
    peers,
    timers: clock,
    logger,
    ...(overrides.typingRefreshMs ? { refreshMs: overrides.typingRefreshMs } : {}),
  });
  const commands = weixinCommands();
  const surface = new WeixinSurface({
    transport,
    typing,
    agentName: ctx.defaults.agentName,
    clock,
    logger,
    audit,
    media: {
      cdnUrl: s.cdnUrl,
      ...(overrides.fetch ? { fetch: overrides.fetch } : {}),
      ...(overrides.maxMediaBytes ? { maxBytes: overrides.maxMediaBytes } : {}),
    },
    commands: { new: commands.spell("new"), stop: commands.spell("stop") },
  });
  const hub = new ConversationHub<WeixinAddress, WeixinExtra>({
    surface,
    commands,
    ctx,
    isOwner: (userId) => owner !== undefined && userId === owner,
    // Steer only: a message is folded into the live turn or refused with a prompt to resend.
    queueMode: "steer",
    holdsMidTurn: false,
    approvalTimeoutMs: overrides.approvalTimeoutMs,
    helpFooter: WEIXIN_HELP_FOOTER,
  });
  const intake = new WeixinIntake(transport, hub, peers, ctx.drops);
  // Before the first poll: what a restart left unanswered comes before anything newer.
  await hub.resume();
  const poller = new UpdatesPoller({
    client,
    peers,
    pause,
    handle: (raw) => intake.onMessage(raw),
    drops: ctx.drops,
    clock,
    logger,
    ...(overrides.backoff ? { backoff: overrides.backoff } : {}),
    onHealth: (h) => {
      if (!h.healthy) logger.warn(`weixin: unhealthy: ${h.reason}`);
      if (h.healthy) ctx.status?.connected();
      else ctx.status?.disconnected(h.reason);
    },
  });
  // Not connected until a poll answers.
  ctx.status?.connecting();
  poller.start();
  logger.info(`weixin: polling ${origin}`);
  return {
    name: "weixin",
    hub,
    transport,
    poller,
    pause,
    health: () => {
      if (pause.remainingMs() > 0)
        return { healthy: false, reason: "session expired (-14): paused; relink may be needed" };
      return poller.currentHealth;
    },
    async stop() {
      await poller.stop();
      await hub.shutdown();
      typing.stopAll();
    },
  };
}
