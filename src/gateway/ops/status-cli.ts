/**
 * `parley status [--json]`: is the gateway of this data home running, and is it well? It finds the
 * gateway by the data home's lock (the pid of the process holding it), asks it over the status
 * socket, and prints its channels, conversations, agent pool and backlog. Exit codes, for
 * scripts and supervisors: 0 running and healthy, 1 running but degraded (a channel down, the
 * store not answering, or the gateway not answering its socket), 3 not running.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { HOME_LOCK_FILE, processIsAlive } from "../home-lock.js";
import type { OpsSnapshot } from "./snapshot.js";
import { askStatus } from "./status-socket.js";

export const STATUS_EXIT = { healthy: 0, degraded: 1, notRunning: 3 } as const;

export interface StatusIo {
  out: (line: string) => void;
  err: (line: string) => void;
  /** Whether a pid runs (injected so tests need no second process). */
  isAlive?: (pid: number) => boolean;
  timeoutMs?: number;
}

/** What `--json` prints: one object, whatever the state. */
export type StatusReport =
  | { running: false; home: string }
  | { running: true; home: string; pid: number; answering: false; error: string }
  | ({ running: true; home: string; answering: true } & OpsSnapshot);

function lockPid(home: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(join(home, HOME_LOCK_FILE), "utf8").trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    // No lock (or an unreadable one): no gateway holds this home.
    return undefined;
  }
}

export async function statusCommand(home: string, json: boolean, io: StatusIo): Promise<number> {
  const isAlive = io.isAlive ?? processIsAlive;
  const pid = lockPid(home);
  if (pid === undefined || !isAlive(pid)) {
    print(json, io, { running: false, home }, [`parley is not running on ${home}`]);
    return STATUS_EXIT.notRunning;
  }
  const reply = await askStatus(home, io.timeoutMs);
  if (reply.kind !== "snapshot") {
    const error =
      reply.kind === "no_socket"
        ? "its status socket is not there (still starting, or a parley without it)"
        : reply.error;
    print(json, io, { running: true, home, pid, answering: false, error }, [
      `parley is running on ${home} (pid ${pid}) but does not answer: ${error}`,
    ]);
    return STATUS_EXIT.degraded;
  }
  const s = reply.snapshot;
  print(json, io, { running: true, home, answering: true, ...s }, describeSnapshot(s, home));
  return s.healthy ? STATUS_EXIT.healthy : STATUS_EXIT.degraded;
}

function print(json: boolean, io: StatusIo, report: StatusReport, lines: string[]): void {
  if (json) io.out(JSON.stringify(report, null, 2));
  else for (const line of lines) io.out(line);
}

/** The human report: pure, one line per fact. */
export function describeSnapshot(s: OpsSnapshot, home: string): string[] {
  const lines = [
    `parley ${s.version} on ${home}: ${s.healthy ? "running, healthy" : "running, DEGRADED"} (pid ${s.pid}, up ${duration(s.uptimeSeconds)})`,
    `store: ${s.store.open ? "open" : `NOT OPEN (${s.store.error ?? "unknown"})`}`,
    "channels:",
    ...(s.channels.length === 0 ? ["  (none)"] : []),
    ...s.channels.map((c) => {
      const mark = c.state === "connected" ? "✓" : "✗";
      const reason = c.reason ? ` (${c.reason})` : "";
      const since = c.since ? ` since ${c.since}` : "";
      const busy = [
        c.queued > 0 ? `${c.queued} queued` : "",
        c.awaitingApproval > 0 ? `${c.awaitingApproval} awaiting approval` : "",
        c.reconnects > 0 ? `${c.reconnects} reconnect${c.reconnects === 1 ? "" : "s"}` : "",
      ].filter(Boolean);
      return `  ${mark} ${c.name}: ${c.state}${reason}${since}${busy.length ? `; ${busy.join(", ")}` : ""}`;
    }),
    `conversations: ${s.conversations.working} working, ${s.conversations.awaitingApproval} waiting for approval, ${s.conversations.queued} messages queued`,
    s.pool
      ? `agent pool: ${s.pool.processes}/${s.pool.maxProcesses} processes, ${s.pool.sessions} sessions, ${s.pool.waiting} waiting`
      : "agent pool: none (channel-server mode: the agent is the host's)",
    `backlog: ${s.backlog.messages} message${s.backlog.messages === 1 ? "" : "s"} not yet answered${s.backlog.oldestAgeSeconds === null ? "" : `, oldest ${duration(s.backlog.oldestAgeSeconds)}`}`,
  ];
  return lines;
}

function duration(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 3600)} h`;
}
