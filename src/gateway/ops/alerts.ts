/**
 * Owner alerts: the operator hears of trouble in a chat they read, once per incident, and once
 * more when it is over. Three incidents: a channel disconnected for longer than
 * alerts.channelDownMinutes (told on every OTHER connected channel: the one that is down cannot
 * carry it), the agent failing alerts.agentFailures turns in a row, and a start after an unclean
 * stop (the previous process died holding the data home's lock). Each raise and recovery is
 * audited with how many owners heard it; one nobody could be told is logged as well. Time comes
 * from the injected clock, so a test moves minutes without waiting them.
 */
import type { Clock } from "../../messaging/base/clock.js";
import type { Logger } from "../../messaging/base/logger.js";
import type { AuditSink } from "../../messaging/security/audit.js";
import type { TurnResult } from "../../messaging/turn/pipeline.js";
import type { AlertSettings } from "../config.js";
import type { StateChange } from "./channel-states.js";

export type Incident = "channel_down" | "agent_failing" | "unclean_stop";

/** Sends one notice to the owner of every connected channel but `except`; resolves how many got it. */
export type OwnerNotifier = (text: string, except?: string) => Promise<number>;

export interface OwnerAlertsOptions {
  settings: AlertSettings;
  clock: Clock;
  notify: OwnerNotifier;
  audit: AuditSink;
  logger: Logger;
  /** Told of every raise and recovery (the metrics count them). */
  onAlert?: (incident: Incident, phase: "raised" | "recovered") => void;
}

/** The alert texts: pure, so their wording is tested on its own. */
export const alertText = {
  channelDown: (channel: string, minutes: number, reason: string | undefined) =>
    `⚠️ parley: ${channel} has been disconnected for ${wholeMinutes(minutes)}${reason ? ` (${reason})` : ""}. Messages sent there are not arriving.`,
  channelBack: (channel: string, downMs: number) =>
    `✅ parley: ${channel} is connected again (it was down for ${wholeMinutes(downMs / 60_000)}).`,
  agentFailing: (failures: number) =>
    `⚠️ parley: the agent failed ${failures} turns in a row. Run \`parley doctor\` on the gateway's machine to see why.`,
  agentBack: () => "✅ parley: the agent answered again.",
  uncleanStop: (pid: number) =>
    `⚠️ parley restarted after an unclean stop: the previous process (pid ${pid}) ended without shutting down. Messages it had accepted are answered now; its log says why it died.`,
};

function wholeMinutes(minutes: number): string {
  const n = Math.max(1, Math.round(minutes));
  return `${n} minute${n === 1 ? "" : "s"}`;
}

interface Down {
  since: number;
  reason: string | undefined;
  timer: unknown;
  raised: boolean;
}

export class OwnerAlerts {
  private readonly down = new Map<string, Down>();
  private failures = 0;
  private agentRaised = false;
  private closed = false;
  /** Sends in flight, so a shutdown can wait for them. */
  private readonly sending = new Set<Promise<void>>();

  constructor(private readonly o: OwnerAlertsOptions) {}

  /** Where a channel stands now (from the channel-state table). */
  channelChanged(change: StateChange): void {
    if (!this.o.settings.enabled || this.closed) return;
    const known = this.down.get(change.name);
    if (change.to === "disconnected") {
      if (known) {
        known.reason = change.reason;
        return;
      }
      const entry: Down = { since: change.at, reason: change.reason, timer: null, raised: false };
      this.down.set(change.name, entry);
      // Counted from when it went down (a channel already down while starting counts from then).
      const wait = Math.max(
        0,
        this.o.settings.channelDownMinutes * 60_000 - (this.o.clock.now() - change.at),
      );
      entry.timer = this.o.clock.setTimeout(() => this.raiseChannel(change.name, entry), wait);
      return;
    }
    // Connecting again is not connected: the outage goes on until it is.
    if (change.to !== "connected" || !known) return;
    this.o.clock.clearTimeout(known.timer);
    this.down.delete(change.name);
    if (known.raised)
      this.tell(
        "channel_down",
        "recovered",
        alertText.channelBack(change.name, change.at - known.since),
        change.name,
        change.name,
      );
  }

  /** A channel left (stopped, moved to another gateway): whatever it had open is dropped quietly. */
  channelRemoved(name: string): void {
    const known = this.down.get(name);
    if (!known) return;
    this.o.clock.clearTimeout(known.timer);
    this.down.delete(name);
  }

  /** Every turn's end: errors in a row count; a good turn ends the run (a /stop counts neither way). */
  turnEnded(result: TurnResult): void {
    if (!this.o.settings.enabled || this.closed) return;
    if (result.stopReason === "cancelled") return;
    if (result.stopReason === "error") {
      this.failures += 1;
      if (!this.agentRaised && this.failures >= this.o.settings.agentFailures) {
        this.agentRaised = true;
        this.tell("agent_failing", "raised", alertText.agentFailing(this.failures));
      }
      return;
    }
    this.failures = 0;
    if (this.agentRaised) {
      this.agentRaised = false;
      this.tell("agent_failing", "recovered", alertText.agentBack());
    }
  }

  /** The lock of a process that is gone was taken over at this start: told once, when channels are up. */
  uncleanStop(pid: number): void {
    if (!this.o.settings.enabled || this.closed) return;
    this.tell("unclean_stop", "raised", alertText.uncleanStop(pid), undefined, undefined, { pid });
  }

  /** No alert after this; waits for the ones on their way. */
  async close(): Promise<void> {
    this.closed = true;
    for (const d of this.down.values()) this.o.clock.clearTimeout(d.timer);
    this.down.clear();
    await Promise.allSettled([...this.sending]);
  }

  private raiseChannel(name: string, entry: Down): void {
    if (this.closed || this.down.get(name) !== entry) return;
    entry.raised = true;
    const minutes = (this.o.clock.now() - entry.since) / 60_000;
    this.tell("channel_down", "raised", alertText.channelDown(name, minutes, entry.reason), name, name);
  }

  private tell(
    incident: Incident,
    phase: "raised" | "recovered",
    text: string,
    except?: string,
    channel?: string,
    extra: Record<string, number> = {},
  ): void {
    this.o.onAlert?.(incident, phase);
    const sent = (async () => {
      let delivered = 0;
      try {
        delivered = await this.o.notify(text, except);
      } catch (error) {
        this.o.logger.error("ops: sending an owner alert failed", { incident, error: String(error) });
      }
      const fields = { incident, phase, delivered, ...(channel ? { channel } : {}), ...extra };
      if (delivered > 0) {
        this.o.audit.log("ops.alert", "sent", fields);
        this.o.logger.warn(`alert ${phase}: ${text}`);
      } else {
        // Nobody could be told (no other channel connected, no owner known there): the log is all there is.
        this.o.audit.log("ops.alert", "refused", { ...fields, reason: "no_owner_reachable" });
        this.o.logger.error(`alert ${phase}, but no channel owner could be told: ${text}`);
      }
    })();
    this.sending.add(sent);
    void sent.finally(() => this.sending.delete(sent));
  }
}
