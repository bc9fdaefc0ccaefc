/**
 * Gateway lifecycle: build the shared machinery once (the store, audit, history, sessions over the
 * configured ACP agent, the auto-approve grant), start every configured channel in isolation (each
 * first answers what a restart left unanswered), and shut down quiescently: stop intake and settle
 * turns per channel, then close agent processes, then the store.
 */
import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { AutoApproveGrant } from "../messaging/approval/grant.js";
import { realClock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type {
  ChannelContext,
  ChannelEntry,
  Env,
  GrantControl,
  RunningChannel,
} from "../messaging/channel/contract.js";
import { probeChannel } from "../messaging/channel/contract.js";
import type { AuditSink } from "../messaging/security/audit.js";
import { JsonlAuditSink, TeeAuditSink } from "../messaging/security/audit.js";
import { DenialWindowAuditSink } from "../messaging/security/audit-window.js";
import { agentTitleGenerator } from "../messaging/session/auto-title.js";
import { DEFAULT_CONTEXT_THRESHOLDS } from "../messaging/session/context-thresholds.js";
import { ConversationHistory } from "../messaging/session/history.js";
import { SessionManager } from "../messaging/session/session-manager.js";
import { StoreAuditSink } from "../messaging/store/audit-sink.js";
import type { ParleyStore } from "../messaging/store/port.js";
import { applyRetention, DEFAULT_RETENTION } from "../messaging/store/retention.js";
import type { PipelineProvider } from "../messaging/turn/pipeline.js";
import { AcpProvider } from "../providers/acp.js";
import { AGENT_POOL_DEFAULTS, AgentPool } from "../providers/agent-pool.js";
import { demoAgentCommand } from "../providers/demo-command.js";
import { openStore } from "../store/index.js";
import type { AgentConfig, ParleyConfig } from "./config.js";
import type { HomeLock } from "./home-lock.js";
import { acquireHomeLock } from "./home-lock.js";
import { octal, secureHome } from "./home-permissions.js";
import { CHANNELS } from "./registry.js";

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
}

export interface ChannelFailure {
  name: string;
  error: string;
}

/** The agent to run: the configured one, else the bundled demo agent (with the pool defaults). */
export function resolveAgent(config: ParleyConfig): AgentConfig & { command: string } {
  const pool = {
    ...AGENT_POOL_DEFAULTS,
    contextSoftPct: DEFAULT_CONTEXT_THRESHOLDS.softPct,
    contextHardPct: DEFAULT_CONTEXT_THRESHOLDS.hardPct,
    args: [],
    env: {},
    ...config.agent,
  };
  if (config.agent?.command) return { ...pool, command: config.agent.command };
  const demo = demoAgentCommand();
  return { ...pool, command: demo.command, args: demo.args, env: {} };
}

/**
 * Prefixes of parley's own settings and channel secrets, scrubbed as well as each entry's declared
 * names: a secret a channel reads but forgot to declare must not reach the agent either.
 */
const CHANNEL_SECRET_PREFIXES = [
  "TELEGRAM_",
  "DISCORD_",
  "SLACK_",
  "WEBEX_",
  "WECOM_",
  "TEAMS_",
  "MSTEAMS_",
  "FEISHU_",
  "LARK_",
  "WHATSAPP_",
  "IMESSAGE_",
  "PARLEY_",
];

/** The environment an agent starts from: parley's, minus every channel's declared secrets. */
export function agentBaseEnv(env: Env, channels: readonly ChannelEntry[] = CHANNELS): Record<string, string> {
  const declared = new Set(channels.flatMap((c) => c.secretEnv));
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    const upper = name.toUpperCase();
    if (value === undefined || declared.has(name) || CHANNEL_SECRET_PREFIXES.some((p) => upper.startsWith(p)))
      continue;
    out[name] = value;
  }
  return out;
}

/** What every started channel shares: the context without its own name and settings. */
type SharedContext = Omit<ChannelContext, "name" | "settings">;

/** How often old history, finished journal rows and landed delivery records are pruned. */
const RETENTION_EVERY_MS = 6 * 60 * 60 * 1000;

/** The audit sinks: the store's rows, and the JSONL file when configured; flushed at shutdown. */
interface AuditSinks {
  sink: AuditSink;
  /** Repeated refusals aggregated per sender and window; its open counts are written at shutdown. */
  window: DenialWindowAuditSink;
  store: StoreAuditSink;
  file: JsonlAuditSink | undefined;
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
    private readonly pool: AgentPool,
  ) {}

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
    const store = await openStore(o.home, {
      logger: o.logger,
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
    const audit: AuditSinks = { sink: window, window, store: storeAudit, file };
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
        }),
    });
    const shared: SharedContext = {
      env: o.env,
      defaults: {
        approvalMode: o.config.approvalMode,
        queueMode: o.config.queueMode,
        agentName: "default",
        contextThresholds: { softPct: agent.contextSoftPct, hardPct: agent.contextHardPct },
        rotation: { idleMinutes: o.config.idleResetMinutes, dailyResetHour: o.config.dailyResetHour ?? -1 },
      },
      home: o.home,
      logger: o.logger,
      audit: audit.sink,
      clock: realClock,
      sessions,
      store: store.sessions,
      pipeline: { sessions, audit: audit.sink, logger: o.logger, store: store.sessions, history },
      durable: {
        state: store,
        staleAfterMs: o.config.intake.staleAfterMinutes * 60_000,
        maxAttempts: o.config.intake.maxAttempts,
      },
      grant: o.grant ?? new AutoApproveGrant({ audit: audit.sink, logger: o.logger }),
      titles: agentTitleGenerator(sessions, { audit: audit.sink, logger: o.logger }),
      announce: o.announce,
    };
    const gateway = new Gateway(shared, o, audit, store, lock, pool);
    await gateway.prune();
    gateway.scheduleRetention();
    for (const entry of channels) await gateway.startChannel(entry);
    return gateway;
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
      if (pruned.intake + pruned.deliveries + pruned.transcripts > 0)
        this.shared.logger.info("pruned what is past its retention", { ...pruned });
    } catch (error) {
      this.shared.logger.error("pruning the store failed", { error: String(error) });
    }
  }

  /** One channel's failure is logged with what to do, and the others still start. */
  private async startChannel(entry: ChannelEntry): Promise<void> {
    const settings = this.options.config.channels[entry.name] ?? {};
    const present = this.options.present?.has(entry.name) ?? false;
    const probe = probeChannel(entry, settings, this.shared.env, present);
    const logger = this.shared.logger;
    if (probe.status === "disabled") return;
    if (probe.status === "incomplete") {
      const error = `not started: missing ${probe.missing?.join(", ")} (see ${entry.docs}; run \`parley doctor\`)`;
      this.failures.push({ name: entry.name, error });
      logger.warn(`${entry.name}: ${error}`);
      return;
    }
    try {
      const mod = await entry.load();
      this.running.push(await mod.start({ ...this.shared, name: entry.name, settings }));
      logger.info(`${entry.name}: started`);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.failures.push({ name: entry.name, error: message });
      logger.error(`${entry.name}: failed to start: ${message} (see ${entry.docs})`);
    }
  }

  /** Quiescent and idempotent: channels first (intake, in-flight turns), then the agents. */
  shutdown(): Promise<void> {
    const logger = this.shared.logger;
    this.stopping ??= (async () => {
      for (const channel of [...this.running].reverse()) {
        try {
          await channel.stop();
        } catch (error) {
          logger.error(`${channel.name}: stop failed`, { error: String(error) });
        }
      }
      realClock.clearTimeout(this.retentionTimer);
      await this.shared.sessions.closeAll();
      await this.pool.close();
      // The open window's counts first, then the store's audit rows: the store closes next.
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
