/**
 * The gateway's operations side, composed in one place: the channel-state table, the Prometheus
 * metrics, the owner alerts, the health routes mounted on the web chat's server and the status
 * socket `parley status` asks. The gateway builds it before its audit sink (the metrics read the
 * audit stream), attaches its parts once they exist, hands each channel its status port, and
 * closes it first at shutdown (a channel stopping on purpose raises no alert).
 */
import type { Clock } from "../../messaging/base/clock.js";
import type { Logger } from "../../messaging/base/logger.js";
import type { Egress } from "../../messaging/channel/egress.js";
import { describeEgress } from "../../messaging/channel/egress.js";
import type { ChannelStatus, HttpRoutes } from "../../messaging/channel/ops-port.js";
import type { AuditSink } from "../../messaging/security/audit.js";
import { TeeAuditSink } from "../../messaging/security/audit.js";
import type { SessionManager } from "../../messaging/session/session-manager.js";
import type { ParleyStore } from "../../messaging/store/port.js";
import type { PostTurnStep } from "../../messaging/turn/pipeline.js";
import type { AgentPool } from "../../providers/agent-pool.js";
import type { AlertSettings } from "../config.js";
import type { ChannelFailure } from "../gateway.js";
import { OwnerAlerts } from "./alerts.js";
import { ChannelStates } from "./channel-states.js";
import { opsRoutes } from "./http.js";
import { GatewayMetrics } from "./metrics.js";
import type { OpsSnapshot } from "./snapshot.js";
import { takeSnapshot } from "./snapshot.js";
import { StatusSocket } from "./status-socket.js";

/** An unclean stop is told once the channels have had this long to connect (or sooner, once they all did). */
const UNCLEAN_NOTICE_WAIT_MS = 30_000;

export interface GatewayOpsOptions {
  home: string;
  /** PARLEY_METRICS_TOKEN, from the environment or $PARLEY_HOME/.env. */
  metricsToken: string | undefined;
  alerts: AlertSettings;
  clock: Clock;
  logger: Logger;
  version: string;
  pid?: number;
}

/** The gateway's parts the operations side reads, once they exist. */
export interface OpsParts {
  audit: AuditSink;
  egress: Egress;
  store: ParleyStore;
  sessions: Pick<SessionManager, "activeKeys" | "isBusy">;
  pool: AgentPool | undefined;
  failures: () => readonly ChannelFailure[];
  /** The pid whose stale lock this start took over: the previous run did not stop cleanly. */
  uncleanStopOf: number | undefined;
}

export class GatewayOps {
  readonly metrics = new GatewayMetrics();
  readonly states: ChannelStates;
  readonly routes: HttpRoutes;
  private readonly startedAt: number;
  private parts: OpsParts | undefined;
  private alerts: OwnerAlerts | undefined;
  private socket: StatusSocket | undefined;
  private stopping = false;
  private unclean: { pid: number; timer: unknown } | undefined;

  constructor(private readonly o: GatewayOpsOptions) {
    this.startedAt = o.clock.now();
    this.states = new ChannelStates(o.clock, o.logger);
    this.states.onChange((change) => {
      this.metrics.channelChanged(change);
      this.alerts?.channelChanged(change);
      if (this.unclean && !this.states.list().some((c) => c.state === "connecting")) this.tellUnclean();
    });
    this.routes = opsRoutes({
      token: o.metricsToken,
      snapshot: () => this.snapshot(),
      metrics: (snap) => this.metrics.render(snap),
      metricsContentType: this.metrics.contentType,
      // Through the gateway's audit once attached; a request before that is refused all the same.
      audit: { log: (...args) => this.parts?.audit.log(...args) },
      logger: o.logger,
    });
  }

  /** The audit sink the gateway uses: its own, with the metrics reading along. */
  tapAudit(sink: AuditSink): AuditSink {
    return new TeeAuditSink([sink, this.metrics.auditTap()]);
  }

  attach(parts: OpsParts): void {
    this.parts = parts;
    this.alerts = new OwnerAlerts({
      settings: this.o.alerts,
      clock: this.o.clock,
      notify: (text, except) => this.notifyOwners(text, except),
      audit: parts.audit,
      logger: this.o.logger,
      onAlert: (incident, phase) => this.metrics.alert(incident, phase),
    });
  }

  /** Each turn's end: counted, and watched for an agent failing turn after turn. */
  readonly postTurn: PostTurnStep = {
    name: "ops",
    run: (result) => {
      this.metrics.turnEnded(result);
      this.alerts?.turnEnded(result);
    },
  };

  readonly onFirstText = (channel: string, elapsedMs: number): void =>
    this.metrics.firstText(channel, elapsedMs);

  /** The status port of a channel about to start. */
  statusFor(name: string): ChannelStatus {
    return this.states.forChannel(name);
  }

  channelStarted(name: string): void {
    this.states.started(name);
  }

  /** It failed to start, or stopped (its connection moved to another gateway). */
  channelGone(name: string): void {
    this.states.remove(name);
    this.alerts?.channelRemoved(name);
  }

  /** Every channel started: the status socket opens, and an unclean stop is told once channels connect. */
  async started(): Promise<void> {
    this.socket = new StatusSocket(this.o.home, () => this.snapshot(), this.o.logger);
    try {
      await this.socket.start();
    } catch (error) {
      this.o.logger.warn("ops: the status socket could not open; `parley status` cannot reach this gateway", {
        error: String(error),
      });
      this.socket = undefined;
    }
    const pid = this.parts?.uncleanStopOf;
    if (pid === undefined) return;
    this.unclean = { pid, timer: this.o.clock.setTimeout(() => this.tellUnclean(), UNCLEAN_NOTICE_WAIT_MS) };
    if (!this.states.list().some((c) => c.state === "connecting")) this.tellUnclean();
  }

  snapshot(): Promise<OpsSnapshot> {
    const parts = this.parts;
    return takeSnapshot({
      pid: this.o.pid ?? process.pid,
      version: this.o.version,
      startedAt: this.startedAt,
      now: () => this.o.clock.now(),
      states: this.states,
      failures: () => parts?.failures() ?? [],
      backlog: async () => {
        if (!parts) throw new Error("starting");
        const rows = await parts.store.intake.unfinished();
        return {
          messages: rows.length,
          oldestAgeMs: rows.length === 0 ? null : Math.max(...rows.map((r) => r.ageMs)),
        };
      },
      pool: () => {
        const pool = parts?.pool;
        if (!pool) return undefined;
        const stats = pool.stats();
        return {
          processes: stats.processes,
          sessions: stats.sessions,
          waiting: stats.waiting,
          maxProcesses: pool.maxProcesses,
        };
      },
      working: () => {
        const sessions = parts?.sessions;
        return sessions ? sessions.activeKeys().filter((key) => sessions.isBusy(key)).length : 0;
      },
      stopping: () => this.stopping,
    });
  }

  /** First thing at shutdown: no alert from channels stopping on purpose; the socket closes. */
  async close(): Promise<void> {
    this.stopping = true;
    if (this.unclean) this.o.clock.clearTimeout(this.unclean.timer);
    this.unclean = undefined;
    await this.alerts?.close();
    await this.socket?.close();
  }

  private tellUnclean(): void {
    const unclean = this.unclean;
    if (!unclean) return;
    this.unclean = undefined;
    this.o.clock.clearTimeout(unclean.timer);
    this.alerts?.uncleanStop(unclean.pid);
  }

  /** One notice to the owner of every connected channel but `except`; how many landed. */
  private async notifyOwners(text: string, except: string | undefined): Promise<number> {
    const parts = this.parts;
    if (!parts) return 0;
    let delivered = 0;
    for (const channel of this.states.list()) {
      if (channel.name === except || channel.state !== "connected") continue;
      // A channel with no single owner known (a webhook bot, a web chat nobody opened) is skipped.
      if (!parts.egress.transportFor(channel.name)?.ownerTarget()) continue;
      const result = await parts.egress.send({
        purpose: "notice",
        destination: { kind: "owner", except: except ?? "", on: channel.name },
        text,
      });
      if (result.status === "sent") delivered += 1;
      else
        this.o.logger.warn(`ops: an alert did not reach the ${channel.name} owner`, {
          result: describeEgress(result),
        });
    }
    return delivered;
  }
}
