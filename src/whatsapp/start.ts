/**
 * Starting WhatsApp: the linked device's keys from the data home, the ids parley sent before, the
 * transport and surface, the hub with the operator as its owner and everyone else guarded, the
 * messages a restart left unanswered, then the connection (which reconnects on its own). An
 * unlinked data home refuses the start; an unreachable WhatsApp does not (it connects when it can).
 */
import { ParleyError } from "../messaging/base/errors.js";
import type { ChannelContext, RunningChannel } from "../messaging/channel/contract.js";
import { ConversationHub } from "../messaging/channel/hub.js";
import type { WhatsAppFileOptions } from "./attachments.js";
import { mediaOriginFor } from "./attachments.js";
import { openAuthState } from "./auth-state.js";
import type { BackoffOptions, SocketFactory } from "./client.js";
import { baileysSocketFactory, WaConnection } from "./client.js";
import { WHATSAPP_HELP_FOOTER, whatsappCommands, whatsappHandlers } from "./commands.js";
import { SentIds } from "./echo.js";
import { GroupCooldowns } from "./groups.js";
import { readLinkedAccount } from "./home.js";
import type { Operator } from "./identity.js";
import { Identities, operatorOf } from "./identity.js";
import type { WhatsAppSettings } from "./index.js";
import { WhatsAppIntake, whatsappGuards } from "./intake.js";
import { admissionOf } from "./policy.js";
import { proxyFor } from "./proxy.js";
import type { WhatsAppRendererOptions } from "./renderer.js";
import type { WaAddress, WhatsAppExtra } from "./surface.js";
import { WhatsAppSurface } from "./surface.js";
import { WhatsAppTransport } from "./transport.js";

/** Knobs tests (and embedders) may turn; the gateway passes none. */
export interface WhatsAppStartOverrides {
  /** The socket to use instead of baileys' real one (the test fake implements the same port). */
  createSocket?: SocketFactory;
  backoff?: Partial<BackoffOptions>;
  random?: () => number;
  renderer?: Partial<WhatsAppRendererOptions>;
  approvalTimeoutMs?: number;
  files?: Partial<Omit<WhatsAppFileOptions, "origin">>;
  /** How long a send waits for the connection before it fails (default 30 s). */
  sendWaitMs?: number;
}

export interface RunningWhatsApp extends RunningChannel {
  hub: ConversationHub<WaAddress, WhatsAppExtra>;
  transport: WhatsAppTransport;
  connection: WaConnection;
  intake: WhatsAppIntake;
  operator(): Operator | null;
}

export async function start(
  ctx: ChannelContext<WhatsAppSettings>,
  overrides: WhatsAppStartOverrides = {},
): Promise<RunningWhatsApp> {
  const s = ctx.settings;
  const account = readLinkedAccount(ctx.home);
  if (!account)
    throw new ParleyError(
      "CONFIG_INVALID",
      "no WhatsApp account is linked: run `parley whatsapp link` first",
    );
  const auth = await openAuthState(ctx.home);
  const sent = SentIds.open(ctx.home);
  let operator: Operator = operatorOf(account);
  const admission = admissionOf(s);
  const proxy = proxyFor(s.proxyUrl);
  const logger = ctx.logger;
  let intake: WhatsAppIntake | undefined;
  const connection = new WaConnection({
    createSocket: overrides.createSocket ?? baileysSocketFactory(s, logger),
    auth,
    clock: ctx.clock,
    logger,
    ...(overrides.backoff ? { backoff: overrides.backoff } : {}),
    ...(overrides.random ? { random: overrides.random } : {}),
    onOpen: (sock, first) => {
      // The account as the socket reports it (its linked identity may be new).
      if (sock.user?.id) operator = operatorOf({ id: sock.user.id, lid: sock.user.lid ?? operator.lid });
      // Scheduled, never awaited: the round trip must not hold up the connection's own work.
      if (first) void intake?.reportGroups(sock);
    },
    onFatal: (ending) =>
      ctx.audit.log("whatsapp.connection", "failed", {
        reason: ending,
      }),
  });
  const identities = new Identities(() => {
    const sock = connection.socket();
    return sock ? (lid) => sock.signalRepository.lidMapping.getPNForLID(lid) : undefined;
  }, logger);
  const transport = new WhatsAppTransport({
    audit: ctx.audit,
    drops: ctx.drops,
    // A send waits for the connection a little (a start, a short reconnect) before it fails.
    socket: () => connection.whenOpen(overrides.sendWaitMs ?? 30_000),
    operator: () => operator,
    admission,
    sent,
    files: {
      origin: mediaOriginFor(s.webSocketUrl),
      timers: ctx.clock,
      ...(proxy ? { fetch: proxy.fetch } : {}),
      ...overrides.files,
    },
    logger,
  });
  const cooldowns = new GroupCooldowns(ctx.clock);
  const surface = new WhatsAppSurface(
    {
      transport,
      agentName: ctx.defaults.agentName,
      dmScope: s.dmScope,
      ...(overrides.renderer ? { renderer: overrides.renderer } : {}),
      onUnpromptedDelivered: (group) => cooldowns.spoke(group, s.groups[group]?.cooldownSeconds ?? 0),
      unpromptedMaySpeak: (group) => !cooldowns.cooling(group),
      ...(ctx.durable ? { resumedAgeMs: ctx.durable.staleAfterMs } : {}),
    },
    ctx,
  );
  const hub = new ConversationHub<WaAddress, WhatsAppExtra>({
    surface,
    commands: whatsappCommands(),
    ctx,
    // The linked account is the one owner: /yolo, listings, every command that acts.
    isOwner: (userId) => userId === operator.userId,
    queueMode: s.queueMode,
    approvalTimeoutMs: overrides.approvalTimeoutMs,
    helpFooter: WHATSAPP_HELP_FOOTER,
    handlers: whatsappHandlers(ctx.audit),
    guards: whatsappGuards(s, () => operator),
  });
  const started = new WhatsAppIntake({
    transport,
    surface,
    hub,
    ctx,
    settings: s,
    admission,
    identities,
    cooldowns,
    sent,
    operator: () => operator,
  });
  intake = started;
  connection.on("messages.upsert", (batch) => void hub.track(started.onUpsert(batch)));
  connection.on("messages.update", (updates) => started.onUpdate(updates));
  connection.on("lid-mapping.update", (mapping) => started.onLidMapping(mapping));
  // Before the first connect: what a restart left unanswered comes before anything newer.
  await hub.resume();
  connection.start();
  return {
    name: "whatsapp",
    hub,
    transport,
    connection,
    intake: started,
    operator: () => operator,
    async stop() {
      await started.close();
      // Turns settle while the socket is still up (their last edits go out), then it closes.
      await hub.shutdown();
      await connection.stop();
    },
  };
}
