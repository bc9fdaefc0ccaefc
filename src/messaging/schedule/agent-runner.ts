/**
 * How a scheduled prompt runs in gateway mode: an unattended agent turn on the job's own session
 * (`schedule:<id>`, so a job keeps its context from run to run and never crowds the chat's), its
 * answer delivered to ONE surface, the conversation that scheduled it (or the configured target),
 * through the egress: re-authorized before the turn is spent and again at delivery. Nobody is there
 * to press a button, so a tool that needs approval is denied unless the approval mode or the
 * owner's /yolo grant allows it. A run resumed after a crash first asks the delivery ledger: an
 * answer that already landed is not run or sent again. Layer: messaging.
 */
import type { Logger } from "../base/logger.js";
import type { GrantControl } from "../channel/contract.js";
import { TurnParts } from "../channel/delivery.js";
import type { Egress, EgressDestination } from "../channel/egress.js";
import { describeEgress } from "../channel/egress.js";
import type { AuditSink } from "../security/audit.js";
import type { SessionStore } from "../session/session-store.js";
import type { DeliveryLedger, ScheduledJob } from "../store/port.js";
import { oneLine } from "../text/clip.js";
import type { ApprovalMode } from "../turn/driver.js";
import { failureReason } from "../turn/failure.js";
import type { TurnPipelineDeps } from "../turn/pipeline.js";
import { runTurnPipeline } from "../turn/pipeline.js";
import { SilentRenderer } from "../turn/renderer.js";
import type { JobRunner } from "./scheduler.js";

/** Thrown when a shutdown cut a run short: the run stays claimed, to be resumed after the restart. */
export class RunCutShort extends Error {
  constructor() {
    super("a scheduled run was cut short by a shutdown");
    this.name = "RunCutShort";
  }
}

export interface AgentJobRunnerOptions {
  pipeline: TurnPipelineDeps;
  egress: Pick<Egress, "resolve" | "send">;
  ledger: DeliveryLedger;
  store: Pick<SessionStore, "setOriginLink">;
  audit: AuditSink;
  logger: Logger;
  approvalMode: ApprovalMode;
  grant: Pick<GrantControl, "isActive">;
  /** True once the gateway is stopping: a failed run is then a cut-short one. */
  closing: () => boolean;
}

export function destinationOf(job: ScheduledJob): EgressDestination {
  return job.deliverTo.kind === "link"
    ? { kind: "link", link: job.deliverTo.link, sessionKey: job.sessionKey }
    : { kind: "target", name: job.deliverTo.name };
}

/** The session a job's runs share. */
export function jobSessionKey(job: Pick<ScheduledJob, "id">): string {
  return `schedule:${job.id}`;
}

export function agentJobRunner(o: AgentJobRunnerOptions): JobRunner {
  return {
    run: async (job, run) => {
      const destination = destinationOf(job);
      // Authorized before a turn is spent: a revoked recipient costs no agent time.
      if (!o.egress.resolve(destination, "schedule").ok) return;
      const turnId = `schedule:${job.id}:${run}`;
      const earlier = await o.ledger.parts(turnId);
      if (earlier.some((p) => p.state === "landed")) {
        // A crash between delivery and bookkeeping: the answer is already there.
        o.audit.log("schedule.run", "dropped", { job: job.id, run, reason: "already_delivered" });
        return;
      }
      const key = jobSessionKey(job);
      // send_message inside the run reaches the job's conversation.
      if (job.deliverTo.kind === "link") o.store.setOriginLink(key, job.deliverTo.link);
      const release = await o.pipeline.sessions.acquire(key);
      const result = await runTurnPipeline(o.pipeline, {
        sessionKey: key,
        channelType: "schedule",
        text: job.prompt,
        renderer: new SilentRenderer(),
        release,
        turnId,
        policy: { approvalMode: o.approvalMode, autoApproveSession: () => o.grant.isActive() },
      });
      if (!result.ok && o.closing()) throw new RunCutShort();
      const body = result.ok
        ? result.text.trim() || "(no answer)"
        : `⚠️ This run failed: ${result.error ? failureReason(result.error) : result.stopReason}.`;
      const parts = await TurnParts.open(o.ledger, turnId, {
        channel: "schedule",
        logger: o.logger,
        audit: o.audit,
      });
      const sent = await o.egress.send({
        purpose: "schedule",
        destination,
        text: `⏰ ${oneLine(job.prompt, 80)}\n\n${body}`,
        parts,
      });
      if (sent.status !== "sent")
        o.logger.warn("schedule: a result was not delivered", { job: job.id, outcome: describeEgress(sent) });
    },
  };
}
