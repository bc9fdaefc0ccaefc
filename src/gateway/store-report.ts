/**
 * What `parley doctor` says about the store: where it is, its schema version and size, a full
 * integrity check, and any message accepted but not yet answered; on a shared PostgreSQL store,
 * also the gateways of the cluster and who holds each single connection. Read-only (inspect.ts).
 */
import type { InboundDropTotal } from "../messaging/store/port.js";
import { storePath } from "../store/index.js";
import type { ClusterView, PostgresInspection } from "../store/postgres/inspect.js";
import { inspectPostgresStore } from "../store/postgres/inspect.js";
import { inspectSqliteStore } from "../store/sqlite/inspect.js";

export type StoreReport = PostgresInspection;

/** Inspect the store the gateway would open: the database at `url` when set, else the home's SQLite file. */
export function storeReport(home: string, url?: string, nowMs = Date.now()): Promise<StoreReport> {
  return url ? inspectPostgresStore(url, nowMs) : inspectSqliteStore(storePath(home));
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

function ago(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return "under a minute";
  if (minutes < 120) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h`;
}

/** Doctor's lines for a report; unhealthy when a start would refuse or the data is damaged. */
export function storeReportLines(report: StoreReport, nowMs: number): { lines: string[]; healthy: boolean } {
  const where = report.location;
  if (report.state === "absent") {
    return { lines: [`- store: ${where} not created yet (the first start creates it)`], healthy: true };
  }
  if (report.state === "unreachable") {
    return {
      lines: [`✗ store: ${where} did not answer (${report.problem}); start refuses until it does`],
      healthy: false,
    };
  }
  if (report.state === "corrupt") {
    return {
      lines: [`✗ store: ${where} ${report.problem}; start refuses. ${report.repair}`],
      healthy: false,
    };
  }
  const lines: string[] = [];
  let healthy = true;
  const summary = `schema v${report.schemaVersion}, ${size(report.sizeBytes)}`;
  if (!report.integrity.ok) {
    healthy = false;
    const shown = report.integrity.problems.slice(0, 3).join("; ");
    lines.push(`✗ store: ${where} (${summary}) fails its integrity check: ${shown}. ${report.repair}`);
  } else if (report.schemaVersion > report.latestSchemaVersion) {
    healthy = false;
    lines.push(
      `✗ store: ${where} has schema v${report.schemaVersion}, newer than this parley ` +
        `(v${report.latestSchemaVersion}); start refuses. Run the newer parley.`,
    );
  } else {
    const migrate =
      report.schemaVersion < report.latestSchemaVersion
        ? `; the next start migrates it to v${report.latestSchemaVersion}`
        : "";
    lines.push(`✓ store: ${where} (${summary}, integrity ok${migrate})`);
  }
  if (report.unfinishedIntake > 0) {
    const oldest =
      report.oldestUnfinishedAtMs === null ? "" : `, oldest ${ago(nowMs - report.oldestUnfinishedAtMs)} ago`;
    lines.push(
      `! store: ${report.unfinishedIntake} accepted message(s) not answered yet${oldest}; ` +
        "the next start resumes them",
    );
  }
  lines.push(...inboundDropLines(report.inboundDrops, nowMs));
  if (report.cluster) lines.push(...clusterLines(report.cluster));
  return { lines, healthy };
}

/** Reasons that point at a wire parley misreads, not at a stranger or a redelivery: worth a look. */
const WIRE_TROUBLE: ReadonlySet<string> = new Set(["unknown_shape", "missing_id", "unparseable"]);

/** One line per channel: what it did not turn into messages, by reason, most frequent first. */
function inboundDropLines(drops: readonly InboundDropTotal[], nowMs: number): string[] {
  const byChannel = new Map<string, InboundDropTotal[]>();
  for (const d of drops) byChannel.set(d.channel, [...(byChannel.get(d.channel) ?? []), d]);
  return [...byChannel].map(([channel, rows]) => {
    const total = rows.reduce((n, r) => n + r.count, 0);
    const last = Math.max(...rows.map((r) => r.lastAtMs));
    const reasons = [...rows]
      .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason))
      .map((r) => `${r.reason} ${r.count}`)
      .join(", ");
    const mark = rows.some((r) => WIRE_TROUBLE.has(r.reason)) ? "!" : "-";
    return `${mark} inbound: ${channel} did not take ${total} frame(s): ${reasons} (last ${ago(nowMs - last)} ago)`;
  });
}

function seconds(ms: number): string {
  return `${Math.max(0, Math.round(ms / 1000))} s`;
}

/** The gateways sharing the store, and who holds what must be single (docs/scale-out.md). */
function clusterLines(view: ClusterView): string[] {
  const live = view.members.filter((m) => m.leaseLeftMs > 0);
  const gone = view.members.length - live.length;
  const lines = [
    live.length === 0
      ? "- cluster: no gateway running on this store"
      : `✓ cluster: ${live.length} gateway(s) running: ${live
          .map(
            (m) =>
              `${m.gatewayId} (lease ${seconds(m.leaseLeftMs)} left, ${m.conversations} conversation(s))`,
          )
          .join("; ")}`,
  ];
  if (gone > 0)
    lines.push(`! cluster: ${gone} gateway(s) gone, their leases run out: the others take their work over`);
  for (const h of view.held)
    lines.push(
      h.alive
        ? `- cluster: ${h.resource} held by ${h.gatewayId}`
        : `! cluster: ${h.resource} held by ${h.gatewayId}, which is gone: a running gateway takes it at its next tick`,
    );
  return lines;
}
