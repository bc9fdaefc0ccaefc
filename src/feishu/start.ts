/**
 * Starting Feishu/Lark: the SDK's REST client at `feishu.domain`, the bot's identity (bot/v3/info:
 * its open_id is how a group mentions it), transport, surface and hub over the shared machinery,
 * the messages a restart left unanswered, then the long connection. Credentials Feishu rejects
 * abort the start; an unreachable Feishu does not (the channel starts, identifies when it can, and
 * answers no group until then).
 */
import type { Clock } from "../messaging/base/clock.js";
import { sleep } from "../messaging/base/clock.js";
import { ParleyError } from "../messaging/base/errors.js";
import type { ChannelContext, RunningChannel } from "../messaging/channel/contract.js";
import { secretOf } from "../messaging/channel/contract.js";
import { ConversationHub } from "../messaging/channel/hub.js";
import { ownerOf } from "../messaging/channel/settings.js";
import type { FeishuRestOptions } from "./client.js";
import { createClient, createHttp, FeishuRest } from "./client.js";
import { FEISHU_HELP_FOOTER, feishuCommands } from "./commands.js";
import type { FeishuConnectionOptions } from "./connection.js";
import { FeishuConnection } from "./connection.js";
import { resolveDomain } from "./domain.js";
import { apiErrorOf, isCredentialRejected } from "./errors.js";
import type { FeishuSettings } from "./index.js";
import { FeishuIntake } from "./intake.js";
import { PromptLedger } from "./prompts.js";
import type { FeishuAddress, FeishuExtra } from "./surface.js";
import { FeishuSurface } from "./surface.js";
import { FeishuTransport } from "./transport.js";

/** Knobs tests (and embedders) may turn; the gateway passes none. */
export interface FeishuStartOverrides {
  approvalTimeoutMs?: number;
  rest?: Partial<Pick<FeishuRestOptions, "maxAttempts" | "maxWaitMs" | "backoffMs">>;
  connection?: Partial<
    Pick<
      FeishuConnectionOptions,
      "pingTimeoutSeconds" | "handshakeTimeoutMs" | "restartFirstMs" | "restartMaxMs"
    >
  >;
  /** Retry gap for bot/v3/info while Feishu is unreachable at boot. */
  identifyRetryMs?: number;
}

export interface RunningFeishu extends RunningChannel {
  hub: ConversationHub<FeishuAddress, FeishuExtra>;
  transport: FeishuTransport;
  connection: FeishuConnection;
  intake: FeishuIntake;
}

export async function start(
  ctx: ChannelContext<FeishuSettings>,
  overrides: FeishuStartOverrides = {},
): Promise<RunningFeishu> {
  const s = ctx.settings;
  const appSecret = secretOf(ctx.env, "FEISHU_APP_SECRET");
  if (!s.appId) throw new ParleyError("CONFIG_INVALID", "feishu.appId (or FEISHU_APP_ID) is not set");
  if (!appSecret) throw new ParleyError("CONFIG_INVALID", "FEISHU_APP_SECRET is not set");
  if (s.allowedOpenIds.length === 0)
    throw new ParleyError("CONFIG_INVALID", "feishu.allowedOpenIds is empty: the bot would answer nobody");
  const { clock, logger } = ctx;
  const domain = resolveDomain(s.domain);
  // One HTTP client for REST and endpoint discovery: no redirects, so the secret stays at the origin.
  const http = createHttp();
  const client = createClient({ appId: s.appId, appSecret, origin: domain.origin, http, logger });
  const rest = new FeishuRest({ client, clock, logger, ...overrides.rest });
  const transport = new FeishuTransport({
    audit: ctx.audit,
    drops: ctx.drops,
    rest,
    allowedOpenIds: new Set(s.allowedOpenIds),
    groups: { allowGroup: s.allowGroup, allowedGroupIds: new Set(s.allowedGroupIds) },
    logger,
  });

  const stopping = new AbortController();
  const identify = async (): Promise<boolean> => {
    try {
      transport.setIdentity(await rest.botInfo());
      return true;
    } catch (error) {
      const api = apiErrorOf(error);
      // Only rejected credentials are fatal; anything else is "not reachable yet".
      if (api && isCredentialRejected(api))
        throw new ParleyError(
          "CONFIG_INVALID",
          `${domain.label} rejected the app id or secret (code ${api.code}: ${api.msg})`,
        );
      logger.warn("feishu: bot/v3/info failed; starting unidentified and retrying", { error: String(error) });
      return false;
    }
  };
  if (!(await identify()))
    retryIdentity(identify, clock, overrides.identifyRetryMs ?? 15_000, stopping.signal, ctx);

  const commands = feishuCommands();
  const prompts = new PromptLedger();
  const surface = new FeishuSurface(
    {
      transport,
      agentName: ctx.defaults.agentName,
      dmScope: s.dmScope,
      soleOperator: s.allowedOpenIds.length === 1,
      prompts,
      commands: { new: commands.spell("new"), stop: commands.spell("stop") },
    },
    ctx,
  );
  const owner = ownerOf({ owner: s.owner, allowedUserIds: s.allowedOpenIds });
  const hub = new ConversationHub<FeishuAddress, FeishuExtra>({
    surface,
    commands,
    ctx,
    isOwner: (userId) => userId === owner,
    approvalTimeoutMs: overrides.approvalTimeoutMs,
    helpFooter: FEISHU_HELP_FOOTER,
    // A reply answers one inbound message: a message held for later could not be delivered.
    holdsMidTurn: false,
  });
  const intake = new FeishuIntake(transport, hub, ctx, { prompts, appId: s.appId, rest });
  // Before the long connection opens: what a restart left unanswered comes before anything newer.
  await hub.resume();
  const connection = new FeishuConnection({
    appId: s.appId,
    appSecret,
    origin: domain.origin,
    http,
    logger,
    clock,
    onMessage: (event) => intake.onEvent(event),
    drops: ctx.drops,
    onState: (connected, reason) =>
      connected ? ctx.status?.connected() : ctx.status?.disconnected(reason ?? "long connection lost"),
    ...overrides.connection,
  });
  ctx.status?.connecting();
  connection.start();
  logger.info(`feishu: connecting to ${domain.label}`);
  return {
    name: "feishu",
    hub,
    transport,
    connection,
    intake,
    async stop() {
      stopping.abort();
      connection.close();
      await hub.shutdown();
    },
  };
}

/** Until bot/v3/info answers, mentions cannot be recognised, so groups are answered by no one. */
function retryIdentity(
  identify: () => Promise<boolean>,
  clock: Clock,
  everyMs: number,
  signal: AbortSignal,
  ctx: Pick<ChannelContext, "logger">,
): void {
  void (async () => {
    while (!signal.aborted) {
      try {
        await sleep(clock, everyMs, signal);
        if (await identify()) return;
      } catch (error) {
        if (!signal.aborted) ctx.logger.error("feishu: identity retry stopped", { error: String(error) });
        return;
      }
    }
  })();
}
