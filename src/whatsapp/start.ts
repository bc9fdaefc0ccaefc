/**
 * Starting WhatsApp: the linked device's keys from the data home, the ids parley sent before, the
 * WhatsApp Web version to announce (version.ts), the transport and surface, the hub with the
 * operator as its owner and everyone else guarded, the messages a restart left unanswered, then the
 * connection (which reconnects on its own). An unlinked data home refuses the start, and so does one
 * WhatsApp logged out (its keys are known dead); an unreachable WhatsApp does not (it connects when
 * it can). A final ending (endings.ts) stops the whole channel and is told to the owner on another
 * running channel: the one channel that went quiet cannot say so itself.
 */
import { ParleyError } from "../messaging/base/errors.js";
import type { ChannelContext, RunningChannel } from "../messaging/channel/contract.js";
import { describeEgress } from "../messaging/channel/egress.js";
import { ConversationHub } from "../messaging/channel/hub.js";
import type { WhatsAppFileOptions } from "./attachments.js";
import { mediaOriginFor } from "./attachments.js";
import { openAuthState } from "./auth-state.js";
import type { BackoffOptions, SocketFactory } from "./client.js";
import { baileysSocketFactory, WaConnection } from "./client.js";
import { WHATSAPP_HELP_FOOTER, whatsappCommands, whatsappHandlers } from "./commands.js";
import { SentIds } from "./echo.js";
import { endingText, readEnded } from "./endings.js";
import { GroupMetadataCache } from "./group-cache.js";
import { GroupCooldowns } from "./groups.js";
import { readLinkedAccount } from "./home.js";
import type { Operator } from "./identity.js";
import { Identities, operatorOf } from "./identity.js";
import type { WhatsAppSettings } from "./index.js";
import { WhatsAppIntake, whatsappGuards } from "./intake.js";
import { admissionOf } from "./policy.js";
import { proxyFor } from "./proxy.js";
import { RecentSends } from "./recent-sends.js";
import type { WhatsAppRendererOptions } from "./renderer.js";
import type { WaAddress, WhatsAppExtra } from "./surface.js";
import { WhatsAppSurface } from "./surface.js";
import { WhatsAppTransport } from "./transport.js";
import type { VersionSource } from "./version.js";
import { baileysVersionSource, resolveVersion, versionText } from "./version.js";
import type { GroupMetadata } from "./wire.js";

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
  /** Where the current WhatsApp Web version is asked (default: baileys' fetch of web.whatsapp.com). */
  fetchVersion?: VersionSource;
}

export interface RunningWhatsApp extends RunningChannel {
  hub: ConversationHub<WaAddress, WhatsAppExtra>;
  transport: WhatsAppTransport;
  connection: WaConnection;
  intake: WhatsAppIntake;
  recent: RecentSends;
  groupMetadata: GroupMetadataCache;
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
  // Logged out: the keys are known dead, and connecting with them would only be refused again.
  const ended = readEnded(ctx.home);
  if (ended?.ending === "logged_out")
    throw new ParleyError("CONFIG_INVALID", `WhatsApp: ${endingText("logged_out")}`);
  const auth = await openAuthState(ctx.home);
  const sent = SentIds.open(ctx.home);
  let operator: Operator = operatorOf(account);
  const admission = admissionOf(s);
  const proxy = proxyFor(s.proxyUrl);
  const logger = ctx.logger;
  const version = await resolveVersion(
    s.webVersion,
    overrides.fetchVersion ?? baileysVersionSource(proxy?.dispatcher),
    logger,
  );
  logger.info("whatsapp: WhatsApp Web version", {
    version: versionText(version.version),
    from: version.origin,
  });
  const recent = new RecentSends();
  let intake: WhatsAppIntake | undefined;
  let stopping: Promise<void> | null = null;
  let stopChannel: () => Promise<void> = async () => {};
  const connection: WaConnection = new WaConnection({
    createSocket: overrides.createSocket ?? baileysSocketFactory(s, logger),
    auth,
    clock: ctx.clock,
    logger,
    home: ctx.home,
    socketOptions: {
      version: version.version,
      getMessage: async (key) => recent.get(key),
      cachedGroupMetadata: (jid: string): Promise<GroupMetadata | undefined> => groupMetadata.get(jid),
    },
    ...(overrides.backoff ? { backoff: overrides.backoff } : {}),
    ...(overrides.random ? { random: overrides.random } : {}),
    onOpen: (sock, first) => {
      ctx.status?.connected();
      // The account as the socket reports it (its linked identity may be new).
      if (sock.user?.id) operator = operatorOf({ id: sock.user.id, lid: sock.user.lid ?? operator.lid });
      // Scheduled, never awaited: the round trips must not hold up the connection's own work.
      void intake?.reportGroups(sock, first);
      if (admission.dmPolicy === "allowlist")
        void identities.warm(admission.allowFrom, (pn) => sock.signalRepository.lidMapping.getLIDForPN(pn));
    },
    onClose: (reason) => ctx.status?.disconnected(`connection closed (${reason.code ?? "no code"})`),
    onFatal: (ending, record) => {
      ctx.status?.disconnected(`stopped: ${ending}`);
      ctx.audit.log("whatsapp.connection", "failed", { reason: ending, code: record.code });
      void stopChannel();
      void tellOwner(`⚠️ WhatsApp stopped: ${endingText(ending, record.version)}`);
    },
  });
  const groupMetadata: GroupMetadataCache = new GroupMetadataCache(() => connection.connecting(), logger);
  const identities = new Identities(() => {
    const sock = connection.socket();
    return sock ? (lid) => sock.signalRepository.lidMapping.getPNForLID(lid) : undefined;
  }, logger);
  /** The owner hears it on another running channel; where none can take it, the log says so. */
  const tellOwner = async (text: string): Promise<void> => {
    if (!ctx.egress) {
      logger.warn("whatsapp: no other channel to tell the owner on");
      return;
    }
    const result = await ctx.egress.send({
      purpose: "notice",
      destination: { kind: "owner", except: "whatsapp" },
      text,
    });
    if (result.status !== "sent")
      logger.warn("whatsapp: could not tell the owner on another channel", {
        result: describeEgress(result),
      });
  };
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
    recent,
    phoneOf: (lid) => identities.phoneOf(lid),
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
    groupMetadata,
    operator: () => operator,
  });
  intake = started;
  connection.on("messages.upsert", (batch) => void hub.track(started.onUpsert(batch)));
  connection.on("messages.update", (updates) => started.onUpdate(updates));
  connection.on("lid-mapping.update", (mapping) => started.onLidMapping(mapping));
  connection.on("groups.update", (updates) => started.onGroupsUpdate(updates.map((u) => u.id)));
  connection.on("group-participants.update", (update) => started.onGroupsUpdate([update.id]));
  stopChannel = () => {
    stopping ??= (async () => {
      await started.close();
      // Turns settle while the socket is still up (their last edits go out), then it closes.
      await hub.shutdown();
      await connection.stop();
    })();
    return stopping;
  };
  // Before the first connect: what a restart left unanswered comes before anything newer.
  await hub.resume();
  ctx.status?.connecting();
  connection.start();
  return {
    name: "whatsapp",
    hub,
    transport,
    connection,
    intake: started,
    recent,
    groupMetadata,
    operator: () => operator,
    stop: () => stopChannel(),
  };
}
