/**
 * What `parley doctor` says about the store: where it is, its schema version and size, a full
 * integrity check, and any message accepted but not yet answered. Read-only (see inspect.ts).
 */
import { storePath } from "../store/index.js";
import { sqliteRepairHint } from "../store/sqlite/engine.js";
import type { StoreInspection } from "../store/sqlite/inspect.js";
import { inspectSqliteStore } from "../store/sqlite/inspect.js";

export type StoreReport = StoreInspection;

/** Inspect the store of the data home `home`. */
export function storeReport(home: string): Promise<StoreReport> {
  return inspectSqliteStore(storePath(home));
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
    lines.push(
      `✗ store: ${where} (${summary}) fails its integrity check: ${shown}. ${sqliteRepairHint(where)}`,
    );
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
  return { lines, healthy };
}
