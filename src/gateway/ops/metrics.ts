/**
 * The gateway's Prometheus metrics, through prom-client, on a registry of its own (several
 * gateways in one process, as tests run them, must not count into each other). Counters move as
 * things happen (a turn ends, an approval is decided, a delivery fails, a channel comes back);
 * gauges are set from one snapshot at each scrape. No label carries a person's words or any id:
 * the only label values are channel names and fixed words (outcome, verdict, kind).
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { AuditFields, AuditOutcome, AuditSink } from "../../messaging/security/audit.js";
import type { TurnResult } from "../../messaging/turn/pipeline.js";
import type { StateChange } from "./channel-states.js";
import type { OpsSnapshot } from "./snapshot.js";

/** How a turn ended, as the turns counter labels it. */
export type TurnOutcome = "answered" | "failed" | "cancelled" | "delivery_failed";

export function turnOutcome(result: TurnResult): TurnOutcome {
  if (result.stopReason === "cancelled") return "cancelled";
  if (result.stopReason === "error") return "failed";
  return result.ok ? "answered" : "delivery_failed";
}

// Seconds. A first token lands in well under a second to tens of seconds (a cold agent, a tool
// before the first words); a whole turn runs from a second to many minutes of tool work.
const FIRST_TOKEN_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60];
const TURN_BUCKETS = [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800];

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly turns: Counter<"channel" | "outcome">;
  private readonly firstToken: Histogram<"channel">;
  private readonly duration: Histogram<"channel">;
  private readonly deliveriesFailed: Counter<"channel" | "kind">;
  private readonly approvals: Counter<"verdict">;
  private readonly reconnects: Counter<"channel">;
  private readonly alerts: Counter<"incident" | "phase">;
  private readonly connected: Gauge<"channel">;
  private readonly queue: Gauge<"channel">;
  private readonly awaiting: Gauge<"channel">;
  private readonly working: Gauge;
  private readonly backlog: Gauge;
  private readonly oldest: Gauge;
  private readonly processes: Gauge;
  private readonly sessions: Gauge;
  private readonly waiting: Gauge;
  private readonly storeOpen: Gauge;

  constructor() {
    const registers = [this.registry];
    this.turns = new Counter({
      name: "parley_turns_total",
      help: "Agent turns that ended, by channel and how they ended (answered, failed, cancelled, delivery_failed).",
      labelNames: ["channel", "outcome"],
      registers,
    });
    this.firstToken = new Histogram({
      name: "parley_turn_first_token_seconds",
      help: "Time from a turn's start to the first answer text shown, by channel.",
      labelNames: ["channel"],
      buckets: FIRST_TOKEN_BUCKETS,
      registers,
    });
    this.duration = new Histogram({
      name: "parley_turn_duration_seconds",
      help: "How long turns ran, start to end, by channel.",
      labelNames: ["channel"],
      buckets: TURN_BUCKETS,
      registers,
    });
    this.deliveriesFailed = new Counter({
      name: "parley_deliveries_failed_total",
      help: "Messages that did not (fully) land: a turn's answer (kind=turn) or a message nobody asked for right now (kind=proactive).",
      labelNames: ["channel", "kind"],
      registers,
    });
    this.approvals = new Counter({
      name: "parley_approvals_total",
      help: "Tool permission requests decided, by verdict (approved, auto_approved, denied).",
      labelNames: ["verdict"],
      registers,
    });
    this.reconnects = new Counter({
      name: "parley_channel_reconnects_total",
      help: "Times a channel came back after it was disconnected.",
      labelNames: ["channel"],
      registers,
    });
    this.alerts = new Counter({
      name: "parley_owner_alerts_total",
      help: "Owner alerts raised and recoveries told, by incident.",
      labelNames: ["incident", "phase"],
      registers,
    });
    const gauge = (name: string, help: string) => new Gauge({ name, help, registers });
    const perChannel = (name: string, help: string) =>
      new Gauge({ name, help, labelNames: ["channel"] as const, registers });
    this.connected = perChannel("parley_channel_connected", "1 while the channel is connected, else 0.");
    this.queue = perChannel("parley_queue_depth", "Messages held behind a running turn, by channel.");
    this.awaiting = perChannel(
      "parley_conversations_awaiting_approval",
      "Conversations with an approval prompt open, by channel.",
    );
    this.working = gauge("parley_conversations_working", "Conversations whose turn is running now.");
    this.backlog = gauge("parley_intake_backlog_messages", "Messages accepted and not yet answered.");
    this.oldest = gauge(
      "parley_intake_backlog_oldest_age_seconds",
      "Age of the oldest message accepted and not yet answered (0 when there is none).",
    );
    this.processes = gauge("parley_agent_processes", "Agent processes running.");
    this.sessions = gauge("parley_agent_sessions", "Agent sessions open on those processes.");
    this.waiting = gauge("parley_agent_waiting", "Conversations waiting for a free agent process.");
    this.storeOpen = gauge("parley_store_open", "1 while the store answers reads, else 0.");
    collectDefaultMetrics({ register: this.registry });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  turnEnded(result: TurnResult): void {
    const channel = result.channelType;
    this.turns.inc({ channel, outcome: turnOutcome(result) });
    this.duration.observe({ channel }, result.elapsedMs / 1000);
    if (result.deliveryFailed) this.deliveriesFailed.inc({ channel, kind: "turn" });
  }

  firstText(channel: string, elapsedMs: number): void {
    this.firstToken.observe({ channel }, elapsedMs / 1000);
  }

  channelChanged(change: StateChange): void {
    this.connected.set({ channel: change.name }, change.to === "connected" ? 1 : 0);
    if (change.reconnected) this.reconnects.inc({ channel: change.name });
  }

  alert(incident: string, phase: "raised" | "recovered"): void {
    this.alerts.inc({ incident, phase });
  }

  /**
   * What the metrics read of the audit stream, decided where it happens: the turn driver's verdict
   * on each tool request (one row per request; a timed-out prompt's own row is not counted twice),
   * and the proactive sends that failed.
   */
  auditTap(): AuditSink {
    return {
      log: (operation: string, outcome: AuditOutcome, fields?: AuditFields) => {
        if (operation === "tool_permission" && fields?.caller === "turn_driver") {
          if (outcome === "approved" || outcome === "auto_approved" || outcome === "denied")
            this.approvals.inc({ verdict: outcome });
          return;
        }
        if (operation !== "channel.proactive_send") return;
        const reason = fields?.reason;
        const failed = outcome === "failed" || reason === "send_failed" || reason === "unconfirmed";
        if (failed && typeof fields?.channel === "string")
          this.deliveriesFailed.inc({ channel: fields.channel, kind: "proactive" });
      },
    };
  }

  /** The text a scrape gets: the gauges set from this snapshot, then everything. */
  async render(snapshot: OpsSnapshot): Promise<string> {
    this.storeOpen.set(snapshot.store.open ? 1 : 0);
    this.connected.reset();
    this.queue.reset();
    this.awaiting.reset();
    for (const c of snapshot.channels) {
      this.connected.set({ channel: c.name }, c.state === "connected" ? 1 : 0);
      this.queue.set({ channel: c.name }, c.queued);
      this.awaiting.set({ channel: c.name }, c.awaitingApproval);
    }
    this.working.set(snapshot.conversations.working);
    this.backlog.set(snapshot.backlog.messages);
    this.oldest.set(snapshot.backlog.oldestAgeSeconds ?? 0);
    this.processes.set(snapshot.pool?.processes ?? 0);
    this.sessions.set(snapshot.pool?.sessions ?? 0);
    this.waiting.set(snapshot.pool?.waiting ?? 0);
    return this.registry.metrics();
  }
}
