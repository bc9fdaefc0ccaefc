/**
 * One look at the running gateway: its channels and where each stands, the conversations working
 * or waiting for an approval, the agent pool, the messages accepted and not yet answered. /readyz,
 * /metrics and `parley status` all read this one shape, so they never disagree. Counts, states and
 * channel names only: nothing a person wrote, no sender or conversation id.
 */
import type { ChannelFailure } from "../gateway.js";
import type { ChannelStates, ConnectionState } from "./channel-states.js";

export interface ChannelSnapshot {
  name: string;
  /** "failed": it did not start (its section is incomplete, or its start threw). */
  state: ConnectionState | "failed";
  /** ISO time it entered this state (absent for a channel that failed to start). */
  since?: string;
  reason?: string;
  reconnects: number;
  queued: number;
  awaitingApproval: number;
}

export interface PoolSnapshot {
  processes: number;
  sessions: number;
  /** Conversations waiting for a free agent process. */
  waiting: number;
  maxProcesses: number;
}

export interface OpsSnapshot {
  pid: number;
  version: string;
  startedAt: string;
  uptimeSeconds: number;
  store: { open: boolean; error?: string };
  channels: ChannelSnapshot[];
  conversations: { working: number; awaitingApproval: number; queued: number };
  /** Absent in channel-server mode (no agent runs in parley). */
  pool?: PoolSnapshot;
  backlog: { messages: number; oldestAgeSeconds: number | null };
  /** The store is open and every enabled channel is connected. */
  healthy: boolean;
  /** What keeps it from being healthy, one line each ("telegram: disconnected (…)"). */
  notReady: string[];
}

/** What a snapshot is read from: the gateway's parts, behind functions so nothing is cached. */
export interface SnapshotSources {
  pid: number;
  version: string;
  startedAt: number;
  now: () => number;
  states: ChannelStates;
  failures: () => readonly ChannelFailure[];
  /** Accepted, unanswered messages: how many, and the age of the oldest (ms). Throws when the store cannot answer. */
  backlog: () => Promise<{ messages: number; oldestAgeMs: number | null }>;
  pool: () => PoolSnapshot | undefined;
  /** Conversations whose turn (or its bookkeeping) is running now. */
  working: () => number;
  /** Shutting down: nothing is ready any more. */
  stopping: () => boolean;
}

export async function takeSnapshot(s: SnapshotSources): Promise<OpsSnapshot> {
  const now = s.now();
  let store: OpsSnapshot["store"] = { open: true };
  let backlog: OpsSnapshot["backlog"] = { messages: 0, oldestAgeSeconds: null };
  if (s.stopping()) store = { open: false, error: "shutting down" };
  else {
    try {
      const b = await s.backlog();
      backlog = {
        messages: b.messages,
        oldestAgeSeconds: b.oldestAgeMs === null ? null : Math.round(b.oldestAgeMs / 1000),
      };
    } catch (error) {
      // The store cannot answer a read: that is what "not open" means to a supervisor.
      store = { open: false, error: error instanceof Error ? error.message : String(error) };
    }
  }
  const hubs = new Map(s.states.hubs().map((h) => [h.name, h.view]));
  const running: ChannelSnapshot[] = s.states.list().map((c) => ({
    name: c.name,
    state: c.state,
    since: new Date(c.since).toISOString(),
    ...(c.reason !== undefined ? { reason: c.reason } : {}),
    reconnects: c.reconnects,
    queued: hubs.get(c.name)?.queued() ?? 0,
    awaitingApproval: hubs.get(c.name)?.awaitingApproval() ?? 0,
  }));
  const names = new Set(running.map((c) => c.name));
  const failed: ChannelSnapshot[] = s
    .failures()
    .filter((f) => !names.has(f.name))
    .map((f) => ({
      name: f.name,
      state: "failed",
      reason: f.error,
      reconnects: 0,
      queued: 0,
      awaitingApproval: 0,
    }));
  const channels = [...running, ...failed].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const notReady = [
    ...(store.open ? [] : [`store: ${store.error ?? "not open"}`]),
    ...channels
      .filter((c) => c.state !== "connected")
      .map((c) => `${c.name}: ${c.state}${c.reason ? ` (${c.reason})` : ""}`),
  ];
  const pool = s.pool();
  return {
    pid: s.pid,
    version: s.version,
    startedAt: new Date(s.startedAt).toISOString(),
    uptimeSeconds: Math.max(0, Math.round((now - s.startedAt) / 1000)),
    store,
    channels,
    conversations: {
      working: s.working(),
      awaitingApproval: channels.reduce((n, c) => n + c.awaitingApproval, 0),
      queued: channels.reduce((n, c) => n + c.queued, 0),
    },
    ...(pool ? { pool } : {}),
    backlog,
    healthy: notReady.length === 0,
    notReady,
  };
}
