/**
 * Gateway lifecycle: build the shared machinery once (audit, sessions over the configured ACP
 * agent, the auto-approve grant), start every configured channel in isolation, and shut down
 * quiescently: stop intake and settle turns per channel, then close agent processes.
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
import { JsonlAuditSink } from "../messaging/security/audit.js";
import { DenialWindowAuditSink } from "../messaging/security/audit-window.js";
import { agentTitleGenerator } from "../messaging/session/auto-title.js";
import { DEFAULT_CONTEXT_THRESHOLDS } from "../messaging/session/context-thresholds.js";
import { FileSessionStore } from "../messaging/session/file-session-store.js";
import { SessionManager } from "../messaging/session/session-manager.js";
import type { PipelineProvider } from "../messaging/turn/pipeline.js";
import { AcpProvider } from "../providers/acp.js";
import { AGENT_POOL_DEFAULTS, AgentPool } from "../providers/agent-pool.js";
import { demoAgentCommand } from "../providers/demo-command.js";
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

export class Gateway {
  readonly running: RunningChannel[] = [];
  readonly failures: ChannelFailure[] = [];
  private stopping: Promise<void> | null = null;

  private constructor(
    private readonly shared: SharedContext,
    private readonly options: GatewayOptions,
    private readonly audit: { window: DenialWindowAuditSink; file: JsonlAuditSink },
    private readonly store: FileSessionStore,
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
    const jsonl = new JsonlAuditSink(join(o.home, "audit.jsonl"), (error) =>
      o.logger.error("audit write failed", { error: String(error) }),
    );
    // A stranger's every message is refused and audited: one row per sender per window, with a count.
    const audit = new DenialWindowAuditSink(jsonl, realClock);
    // A corrupt store refuses to start with a repair hint rather than silently resetting state.
    const store = await FileSessionStore.openIn(o.home, { logger: o.logger });
    const agent = resolveAgent(o.config);
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
    const sessions = new SessionManager<PipelineProvider>({
      softStopBudgetMs: o.config.softStopBudgetSeconds * 1000,
      logger: o.logger,
      audit,
      createProvider: (_key, seed) =>
        new AcpProvider({
          command: agent.command,
          ...(agent.cwd ? { cwd: agent.cwd } : {}),
          logger: o.logger,
          pool,
          ...(seed.resumeSessionId !== undefined && { resumeSessionId: seed.resumeSessionId }),
          onSessionId: seed.onAgentSessionId,
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
      },
      home: o.home,
      logger: o.logger,
      audit,
      clock: realClock,
      sessions,
      store,
      pipeline: { sessions, audit, logger: o.logger, store },
      grant: o.grant ?? new AutoApproveGrant({ audit, logger: o.logger }),
      titles: agentTitleGenerator(sessions, { audit, logger: o.logger }),
      announce: o.announce,
    };
    const gateway = new Gateway(shared, o, { window: audit, file: jsonl }, store, lock, pool);
    for (const entry of channels) await gateway.startChannel(entry);
    return gateway;
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
      await this.shared.sessions.closeAll();
      await this.pool.close();
      try {
        await this.store.close();
      } catch (error) {
        logger.error("session store close failed", { error: String(error) });
      }
      // The open window's counts are written before the file is flushed.
      this.audit.window.close();
      await this.audit.file.flush();
      try {
        await this.lock.release();
      } catch (error) {
        logger.error("releasing the home lock failed", { error: String(error) });
      }
    })();
    return this.stopping;
  }
}
