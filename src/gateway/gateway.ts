/**
 * Gateway lifecycle: build the shared machinery once (the store, audit, history, sessions over the
 * configured ACP agent, the auto-approve grant), start every configured channel in isolation (each
 * first answers what a restart left unanswered), and shut down quiescently: stop intake and settle
 * turns per channel, then close agent processes, then the store.
 */
import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { AgentTools } from "../mcp/agent-tools.js";
import { AutoApproveGrant } from "../messaging/approval/grant.js";
import type { Clock } from "../messaging/base/clock.js";
import { realClock } from "../messaging/base/clock.js";
import { ParleyError } from "../messaging/base/errors.js";
import type { Logger } from "../messaging/base/logger.js";
import type {
  ChannelContext,
  ChannelEntry,
  ChannelSettings,
  Env,
  GrantControl,
  RunningChannel,
} from "../messaging/channel/contract.js";
import { probeChannel } from "../messaging/channel/contract.js";
import { Egress } from "../messaging/channel/egress.js";
import { InboundDropLedger } from "../messaging/channel/inbound-drops.js";
import { mirrorStep } from "../messaging/channel/mirror.js";
import type { TurnSink } from "../messaging/channel/turn-sink.js";
import { agentJobRunner } from "../messaging/schedule/agent-runner.js";
import type { JobRunner } from "../messaging/schedule/scheduler.js";
import { Scheduler } from "../messaging/schedule/scheduler.js";
import type { AuditSink } from "../messaging/security/audit.js";
import { JsonlAuditSink, TeeAuditSink } from "../messaging/security/audit.js";
import { DenialWindowAuditSink } from "../messaging/security/audit-window.js";
import { agentTitleGenerator } from "../messaging/session/auto-title.js";
import { ConversationHistory } from "../messaging/session/history.js";
import { SessionManager } from "../messaging/session/session-manager.js";
import { StoreAuditSink } from "../messaging/store/audit-sink.js";
import type { ParleyStore } from "../messaging/store/port.js";
import { applyRetention, DEFAULT_RETENTION } from "../messaging/store/retention.js";
import type { PipelineProvider } from "../messaging/turn/pipeline.js";
import { AcpProvider } from "../providers/acp.js";
import { AgentPool } from "../providers/agent-pool.js";
import { openStore } from "../store/index.js";
import { agentBaseEnv, resolveAgent } from "./agent-setup.js";
import { type ClusterMember, joinCluster, SCHEDULER_LEASE, SINGLE_CONNECTIONS } from "./cluster.js";
import type { LoadedConfig, ParleyConfig } from "./config.js";
import type { HomeLock } from "./home-lock.js";
import { acquireHomeLock } from "./home-lock.js";
import { octal, secureHome } from "./home-permissions.js";
import { GatewayOps } from "./ops/ops.js";
import type { OpsSnapshot } from "./ops/snapshot.js";
import { CHANNELS } from "./registry.js";
import { configuredJobs } from "./schedules-config.js";
import { parleyVersion } from "./version.js";

/** What a channel-server host gets from the gateway to build its sink on. */
export interface HostDeps {
  store: ParleyStore;
  egress: Egress;
  audit: AuditSink;
  logger: Logger;
  home: string;
  config: ParleyConfig;
  grant: GrantControl;
}

/**
 * Channel-server mode: no agent runs here. Authorized messages go to the sink; scheduled prompts
 * run through the host's runner (a wake, not a turn).
 */
export interface HostMode {
  sink: TurnSink;
  runner: JobRunner;
  /** After every channel started (their hubs attached to the sink). */
  started?(): Promise<void>;
  /** First thing at shutdown: stop pushing, deny open prompts. */
  stop?(): Promise<void>;
}

export interface GatewayOptions {
  config: ParleyConfig;
  env: Env;
  home: string;
  logger: Logger;
  announce: (line: string) => void;
  channels?: readonly ChannelEntry[];
  /** Channels whose section a config file set (a prepared but incomplete one is reported). */
  present?: ReadonlySet<string>;
  /** Defaults to the process-wide auto-approve grant behind /yolo. */
  grant?: GrantControl;
  /** Channel-server mode (`parley channel-server`): built once the store and egress exist. */
  host?: (deps: HostDeps) => HostMode;
  /**
   * How an ACP agent starts `parley agent-tools` (send_message, send_file): default this node and
   * the script it runs.
   */
  bridge?: { command: string; args: string[] };
  /** The operations side's time (owner alerts, status times; docs/operations.md): default real time. */
  clock?: Clock;
}

/** What a loaded config gives Gateway.start (the logger, announce and the rest are the caller's). */
export function fromLoaded(
  loaded: LoadedConfig,
): Pick<GatewayOptions, "config" | "present" | "env" | "home"> {
  return { config: loaded.config, present: loaded.present, env: loaded.env, home: loaded.home };
}

/** Where they always were: doctor and tests import them from here. */
export { agentBaseEnv, resolveAgent };

export interface ChannelFailure {
  name: string;
  error: string;
}

/** What every started channel shares: the context without its own name and settings. */
type SharedContext = Omit<ChannelContext, "name" | "settings" | "drops" | "status">;

const defaultsOf = (config: ParleyConfig): SharedContext["defaults"] => ({
  approvalMode: config.approvalMode,
  queueMode: config.queueMode,
  agentName: "default",
  rotation: { idleMinutes: config.idleResetMinutes, dailyResetHour: config.dailyResetHour ?? -1 },
});

/** What every channel gets in both modes (gateway and channel server). */
function sharedContext(
  o: GatewayOptions,
  store: ParleyStore,
  audit: AuditSinks,
  parts: Pick<SharedContext, "sessions" | "pipeline" | "grant" | "egress" | "schedules" | "routes">,
): SharedContext {
  return {
    ...parts,
    env: o.env,
    defaults: defaultsOf(o.config),
    home: o.home,
    logger: o.logger,
    audit: audit.sink,
    clock: realClock,
    store: store.sessions,
    durable: {
      state: store,
      staleAfterMs: o.config.intake.staleAfterMinutes * 60_000,
      maxAttempts: o.config.intake.maxAttempts,
    },
    announce: o.announce,
  };
}

/** How often old history, finished journal rows and landed delivery records are pruned. */
const RETENTION_EVERY_MS = 6 * 60 * 60 * 1000;

/** The audit sinks: the store's rows, and the JSONL file when configured; flushed at shutdown. */
interface AuditSinks {
  sink: AuditSink;
  /** Repeated refusals aggregated per sender and window; its open counts are written at shutdown. */
  window: DenialWindowAuditSink;
  store: StoreAuditSink;
  file: JsonlAuditSink | undefined;
  /** Inbound frames each channel did not turn into a message: counted, audited, kept for doctor. */
  drops: InboundDropLedger;
  /** Health, metrics, owner alerts and the status socket (ops/ops.ts); the metrics read `sink`. */
  ops: GatewayOps;
}

export class Gateway {
  readonly running: RunningChannel[] = [];
  readonly failures: ChannelFailure[] = [];
  private stopping: Promise<void> | null = null;

  private retentionTimer: unknown = null;

  private constructor(
    private readonly shared: SharedContext,
    private readonly options: GatewayOptions,
    private readonly audit: AuditSinks,
    private readonly store: ParleyStore,
    private readonly lock: HomeLock,
    private readonly parts: {
      pool: AgentPool | undefined;
      egress: Egress;
      scheduler: Scheduler;
      agentTools: AgentTools | undefined;
      host: HostMode | undefined;
      /** Several gateways share the store (PostgreSQL): this one's membership. */
      cluster: ClusterMember | undefined;
    },
  ) {}

  /** The egress every channel's transport is registered with (messages nobody asked for right now). */
  get egress(): Egress {
    return this.parts.egress;
  }

  /** What /readyz and `parley status` report: channels, conversations, the agent pool, the backlog. */
  status(): Promise<OpsSnapshot> {
    return this.audit.ops.snapshot();
  }

  static async start(o: GatewayOptions): Promise<Gateway> {
    await mkdir(o.home, { recursive: true, mode: 0o700 });
    // Tokens, sessions and the audit log are this user's alone, whoever created the files.
    for (const p of secureHome(o.home))
      o.logger.warn(`tightened ${p.path} from ${octal(p.mode)} to owner-only: another account could read it`);
    // Before anything reads state: a second gateway on this home would overwrite the first's writes.
    const lock = await acquireHomeLock(o.home, {
      onStale: (pid) => o.logger.warn(`taking over the lock of a parley that is gone (pid ${pid})`),
    });
    try {
      return await Gateway.startLocked(o, lock);
    } catch (error) {
      await lock.release();
      throw error;
    }
  }

  private static async startLocked(o: GatewayOptions, lock: HomeLock): Promise<Gateway> {
    // A corrupt store refuses to start (StoreCorruptError names the file and the repair) rather
    // than silently resetting state; an older install's JSON files are imported once.
    // A database URL: the store several gateways share (docs/scale-out.md); else SQLite in the home.
    const url = o.config.store.url ?? o.env.PARLEY_DATABASE_URL;
    const store = await openStore(o.home, {
      logger: o.logger,
      ...(url ? { url, applicationName: "parley" } : {}),
      onImport: (r) =>
        o.logger.info("imported the state of an older install", {
          sessions: r.sessions,
          renamed: r.renamed.join(", "),
          unreadable: [...r.resumeProblems.keys()].join(", "),
        }),
    });
    try {
      return await Gateway.startWithStore(o, lock, store);
    } catch (error) {
      await store
        .close()
        .catch((e: unknown) => o.logger.error("closing the store failed", { error: String(e) }));
      throw error;
    }
  }

  private static async startWithStore(
    o: GatewayOptions,
    lock: HomeLock,
    store: ParleyStore,
  ): Promise<Gateway> {
    const onAuditError = (error: unknown) => o.logger.error("audit write failed", { error: String(error) });
    const storeAudit = new StoreAuditSink(store.audit, onAuditError);
    const file = o.config.audit.jsonl
      ? new JsonlAuditSink(join(o.home, "audit.jsonl"), onAuditError)
      : undefined;
    // A stranger's every message is refused and audited: one row per sender per window, with a count.
    const window = new DenialWindowAuditSink(
      file ? new TeeAuditSink([storeAudit, file]) : storeAudit,
      realClock,
    );
    const drops = new InboundDropLedger({ audit: window, logger: o.logger, store: store.inboundDrops });
    const ops = new GatewayOps({
      home: o.home,
      metricsToken: o.env.PARLEY_METRICS_TOKEN,
      alerts: o.config.alerts,
      clock: o.clock ?? realClock,
      logger: o.logger,
      version: parleyVersion(),
    });
    const audit: AuditSinks = { sink: ops.tapAudit(window), window, store: storeAudit, file, drops, ops };
    const history = new ConversationHistory({
      transcripts: store.transcripts,
      flags: store.sessions,
      now: () => realClock.now(),
      logger: o.logger,
    });
    const agent = resolveAgent(o.config);
    // Agent session ids do not travel between agents: one is resumed only by the agent that issued it.
    const agentIdentity = [agent.command, ...agent.args].join(" ");
    const channels = o.channels ?? CHANNELS;
    const grant = o.grant ?? new AutoApproveGrant({ audit: audit.sink, logger: o.logger });
    const egress = new Egress({
      audit: audit.sink,
      store: store.sessions,
      targets: o.config.targets,
      logger: o.logger,
    });
    const host = o.host?.({
      store,
      egress,
      audit: audit.sink,
      logger: o.logger,
      home: o.home,
      config: o.config,
      grant,
    });
    if (host)
      return Gateway.startHost(o, lock, store, audit, {
        agentIdentity,
        channels,
        grant,
        egress,
        host,
        history,
      });
    // One pool for every conversation: sessions share a bounded set of agent processes.
    const pool = new AgentPool({
      agent: {
        command: agent.command,
        args: agent.args,
        env: agent.env,
        baseEnv: agentBaseEnv(o.env, channels),
        cwd: resolve(agent.cwd ?? process.cwd()),
      },
      maxProcesses: agent.maxProcesses,
      maxSessionsPerProcess: agent.maxSessionsPerProcess,
      logger: o.logger,
    });
    // Agents started before the first message: their cold start is most of a first answer's wait.
    // Unused ones exit after the idle timeout; a failure is only logged (the first message retries).
    pool
      .prewarm(pool.maxProcesses, agent.idleTimeoutSeconds * 1000)
      .catch((error: unknown) => o.logger.warn("agent prewarm failed", { error: String(error) }));
    const agentTools = o.config.agentTools.enabled
      ? await AgentTools.start({
          home: o.home,
          egress,
          store: store.sessions,
          audit: audit.sink,
          logger: o.logger,
          agentCwd: resolve(agent.cwd ?? process.cwd()),
          bridge: o.bridge ?? { command: process.execPath, args: process.argv[1] ? [process.argv[1]] : [] },
        }).catch((error: unknown) => {
          // The agent still answers; it only cannot message anyone on its own.
          o.logger.warn("agent tools unavailable (send_message, send_file)", { error: String(error) });
          return undefined;
        })
      : undefined;
    const persistFailed = (error: unknown) =>
      o.logger.warn("persisting the agent session failed", { error: String(error) });
    const sessions = new SessionManager<PipelineProvider>({
      softStopBudgetMs: o.config.softStopBudgetSeconds * 1000,
      logger: o.logger,
      audit: audit.sink,
      // Kept with the conversation, so a restarted gateway resumes its agent session (session/load).
      onAgentSessionId: (key, agentSessionId) =>
        void store.agentSessions.set(key, { agent: agentIdentity, agentSessionId }).catch(persistFailed),
      memory: {
        recall: async (key) => {
          const ref = await store.agentSessions.get(key);
          return ref?.agent === agentIdentity ? ref.agentSessionId : undefined;
        },
        forget: (key) => void store.agentSessions.clear(key).catch(persistFailed),
      },
      createProvider: (key, seed) =>
        new AcpProvider({
          command: agent.command,
          ...(agent.cwd ? { cwd: agent.cwd } : {}),
          logger: o.logger,
          pool,
          ...(seed.resumeSessionId !== undefined && { resumeSessionId: seed.resumeSessionId }),
          onSessionId: seed.onAgentSessionId,
          // When the session could not be restored: its last messages, from the history.
          replayContext: () => history.replayFor(key),
          idleTimeoutMs: agent.idleTimeoutSeconds * 1000,
          silenceNoticeMs: agent.silenceNoticeSeconds * 1000,
          ...(agentTools ? { mcpServers: () => agentTools.serversFor(key) } : {}),
        }),
    });
    const pipeline = {
      sessions,
      audit: audit.sink,
      logger: o.logger,
      store: store.sessions,
      history,
      postTurn: [mirrorStep({ store: store.sessions, egress, logger: o.logger }), ops.postTurn],
      onFirstText: ops.onFirstText,
    };
    let stopping = () => false;
    const scheduler = new Scheduler({
      store: store.jobs,
      clock: realClock,
      logger: o.logger,
      audit: audit.sink,
      runner: agentJobRunner({
        pipeline,
        egress,
        ledger: store.deliveries,
        store: store.sessions,
        audit: audit.sink,
        logger: o.logger,
        approvalMode: o.config.approvalMode,
        grant,
        closing: () => stopping(),
      }),
    });
    const shared: SharedContext = {
      ...sharedContext(o, store, audit, {
        sessions,
        pipeline,
        grant,
        egress,
        schedules: scheduler,
        routes: ops.routes,
      }),
      defaults: {
        ...defaultsOf(o.config),
        contextThresholds: { softPct: agent.contextSoftPct, hardPct: agent.contextHardPct },
      },
      titles: agentTitleGenerator(sessions, { audit: audit.sink, logger: o.logger }),
    };
    let gatewayRef: Gateway | undefined;
    const cluster = await joinCluster(
      o,
      store,
      () => void gatewayRef?.shutdown(),
      // A grant supplied from outside (a library user's own) is theirs to share.
      grant instanceof AutoApproveGrant ? grant : undefined,
    );
    if (cluster && shared.durable) shared.durable = { ...shared.durable, ownership: cluster };
    ops.attach({
      audit: audit.sink,
      egress,
      store,
      sessions,
      pool,
      failures: () => gatewayRef?.failures ?? [],
      uncleanStopOf: lock.tookOverFrom,
    });
    const gateway = new Gateway(shared, o, audit, store, lock, {
      pool,
      egress,
      scheduler,
      agentTools,
      host: undefined,
      cluster,
    });
    gatewayRef = gateway;
    stopping = () => gateway.stopping !== null;
    await gateway.boot(channels);
    return gateway;
  }

  /**
   * Channel-server mode: the same channels, store and egress, no agent. The session manager stays
   * (the hub keys conversations through it) but can start no agent.
   */
  private static async startHost(
    o: GatewayOptions,
    lock: HomeLock,
    store: ParleyStore,
    audit: AuditSinks,
    m: {
      agentIdentity: string;
      channels: readonly ChannelEntry[];
      grant: GrantControl;
      egress: Egress;
      host: HostMode;
      history: ConversationHistory;
    },
  ): Promise<Gateway> {
    const sessions = new SessionManager<PipelineProvider>({
      softStopBudgetMs: o.config.softStopBudgetSeconds * 1000,
      logger: o.logger,
      audit: audit.sink,
      createProvider: () => {
        throw new ParleyError("REFUSED", "no agent runs in channel-server mode: the agent is the host's");
      },
    });
    const scheduler = new Scheduler({
      store: store.jobs,
      clock: realClock,
      logger: o.logger,
      audit: audit.sink,
      runner: m.host.runner,
    });
    const shared: SharedContext = {
      ...sharedContext(o, store, audit, {
        sessions,
        pipeline: {
          sessions,
          audit: audit.sink,
          logger: o.logger,
          store: store.sessions,
          history: m.history,
        },
        grant: m.grant,
        egress: m.egress,
        schedules: scheduler,
        routes: audit.ops.routes,
      }),
      sink: m.host.sink,
    };
    const gateway = new Gateway(shared, o, audit, store, lock, {
      pool: undefined,
      egress: m.egress,
      scheduler,
      agentTools: undefined,
      host: m.host,
      cluster: undefined,
    });
    audit.ops.attach({
      audit: audit.sink,
      egress: m.egress,
      store,
      sessions,
      pool: undefined,
      failures: () => gateway.failures,
      uncleanStopOf: lock.tookOverFrom,
    });
    await gateway.boot(m.channels);
    await m.host.started?.();
    return gateway;
  }

  /** Prune, start every channel (registering its transport), then the scheduled prompts. */
  private async boot(channels: readonly ChannelEntry[]): Promise<void> {
    // Refused before any channel starts: a bad schedule must not leave channels running.
    const configured = configuredJobs(this.options.config, realClock.now(), this.shared.logger);
    await this.prune();
    this.scheduleRetention();
    for (const entry of channels) await this.startChannel(entry);
    // After the channels: a due job needs its conversation's transport to deliver to.
    if (this.parts.cluster) {
      // Several gateways: the stored and configured schedules run on one of them, elected.
      await this.parts.cluster.elect(SCHEDULER_LEASE, {
        elected: () => this.parts.scheduler.start(configured),
        deposed: async () => this.parts.scheduler.halt(),
      });
      // Jobs added, run or cancelled on any gateway reach every other within a tick (and the leader runs them).
      this.parts.cluster.onTick(() => this.parts.scheduler.refresh());
    } else await this.parts.scheduler.start(configured);
    await this.audit.ops.started();
  }

  private scheduleRetention(): void {
    this.retentionTimer = realClock.setTimeout(() => {
      void this.prune().finally(() => {
        if (!this.stopping) this.scheduleRetention();
      });
    }, RETENTION_EVERY_MS);
  }

  /** Forget what is past its retention (history, finished journal rows, landed deliveries). */
  private async prune(): Promise<void> {
    try {
      const pruned = await applyRetention(
        this.store,
        { ...DEFAULT_RETENTION, transcriptsRetainDays: this.options.config.transcripts.retainDays },
        realClock.now(),
      );
      if (pruned.intake + pruned.deliveries + pruned.transcripts + pruned.inbox > 0)
        this.shared.logger.info("pruned what is past its retention", { ...pruned });
    } catch (error) {
      this.shared.logger.error("pruning the store failed", { error: String(error) });
    }
  }

  /** One channel's failure is logged with what to do, and the others still start. */
  private async startChannel(entry: ChannelEntry): Promise<void> {
    const settings = this.options.config.channels[entry.name] ?? {};
    const present = this.options.present?.has(entry.name) ?? false;
    const probe = probeChannel(entry, settings, this.shared.env, present, this.shared.home);
    const logger = this.shared.logger;
    if (probe.status === "disabled") return;
    if (probe.status === "incomplete") {
      const error = `not started: missing ${probe.missing?.join(", ")} (see ${entry.docs}; run \`parley doctor\`)`;
      this.failures.push({ name: entry.name, error });
      logger.warn(`${entry.name}: ${error}`);
      return;
    }
    const single = SINGLE_CONNECTIONS[entry.name];
    if (this.parts.cluster && single) {
      // Only the gateway elected for the connection runs the channel; it moves when that one dies.
      await this.parts.cluster.elect(single, {
        elected: () => this.launchChannel(entry, settings),
        deposed: () => this.haltChannel(entry.name),
      });
      return;
    }
    await this.launchChannel(entry, settings);
  }

  private async launchChannel(entry: ChannelEntry, settings: ChannelSettings): Promise<void> {
    const logger = this.shared.logger;
    if (this.stopping) return;
    try {
      const mod = await entry.load();
      const running = await mod.start({
        ...this.shared,
        name: entry.name,
        settings,
        drops: this.audit.drops.forChannel(entry.name),
        status: this.audit.ops.statusFor(entry.name),
      });
      this.running.push(running);
      this.audit.ops.channelStarted(entry.name);
      if (running.transport) this.parts.egress.register(running.transport);
      logger.info(`${entry.name}: started`);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.failures.push({ name: entry.name, error: message });
      this.audit.ops.channelGone(entry.name);
      logger.error(`${entry.name}: failed to start: ${message} (see ${entry.docs})`);
    }
  }

  /** A channel whose single connection moved to another gateway: stopped here (its work stays journaled). */
  private async haltChannel(name: string): Promise<void> {
    // A shutdown stops every channel itself (leaving the cluster deposes after that).
    if (this.stopping) return;
    const index = this.running.findIndex((c) => c.name === name);
    if (index < 0) return;
    const [channel] = this.running.splice(index, 1);
    this.audit.ops.channelGone(name);
    try {
      await channel?.stop();
      this.shared.logger.info(`${name}: stopped (its connection moved to another gateway)`);
    } catch (error) {
      this.shared.logger.error(`${name}: stop failed`, { error: String(error) });
    }
  }

  /** Quiescent and idempotent: channels first (intake, in-flight turns), then the agents. */
  shutdown(): Promise<void> {
    const logger = this.shared.logger;
    this.stopping ??= (async () => {
      // First: a channel stopping on purpose is no outage to alert anyone of.
      await this.audit.ops.close();
      this.parts.scheduler.halt();
      await this.parts.host?.stop?.();
      for (const channel of [...this.running].reverse()) {
        try {
          await channel.stop();
        } catch (error) {
          logger.error(`${channel.name}: stop failed`, { error: String(error) });
        }
      }
      realClock.clearTimeout(this.retentionTimer);
      // Before the agents close: what this gateway held is released for the others at once.
      try {
        await this.parts.cluster?.leave();
      } catch (error) {
        logger.error("leaving the cluster failed; the others take over when the lease runs out", {
          error: String(error),
        });
      }
      await this.parts.agentTools?.close();
      await this.shared.sessions.closeAll();
      // Runs the close cut short stay claimed: the next start resumes them.
      await this.parts.scheduler.stop();
      await this.parts.pool?.close();
      // The drop counts and the open window's counts first, then the store's audit rows: the store closes next.
      await this.audit.drops.flush();
      this.audit.window.close();
      await this.audit.store.flush();
      try {
        await this.store.close();
      } catch (error) {
        logger.error("store close failed", { error: String(error) });
      }
      await this.audit.file?.flush();
      try {
        await this.lock.release();
      } catch (error) {
        logger.error("releasing the home lock failed", { error: String(error) });
      }
    })();
    return this.stopping;
  }
}
