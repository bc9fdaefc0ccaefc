/**
 * Where each running channel stands: connecting, connected or disconnected (with the channel's
 * token-free reason), since when, and how often it came back. Channels report through the
 * ChannelStatus port; one that never reports counts as connected once its start returned (a
 * webhook receiver has no connection to lose). Listeners (the metrics, the owner alerts) hear every
 * change. A channel that stops or moves to another gateway leaves the table: it is no longer this
 * gateway's to be ready for.
 */
import type { Clock } from "../../messaging/base/clock.js";
import type { Logger } from "../../messaging/base/logger.js";
import type { ChannelStatus, HubView } from "../../messaging/channel/ops-port.js";

export type ConnectionState = "connecting" | "connected" | "disconnected";

export interface ChannelState {
  name: string;
  state: ConnectionState;
  /** When it entered this state (epoch ms). */
  since: number;
  /** Why it is not connected (the channel's own words, token-free). */
  reason?: string;
  /** Times it came back after being disconnected. */
  reconnects: number;
}

export interface StateChange {
  name: string;
  from: ConnectionState | undefined;
  to: ConnectionState;
  reason?: string;
  at: number;
  /** Connected again after being disconnected (through any number of attempts). */
  reconnected?: true;
}

interface Entry extends ChannelState {
  /** The channel said something itself (otherwise its start decides). */
  reported: boolean;
  /** False until its start returned: a report before then is kept, the table shows it after. */
  running: boolean;
  /** Disconnected since it was last connected: its next connect is a reconnect. */
  wasDown: boolean;
  hub?: HubView;
}

export class ChannelStates {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners: ((change: StateChange) => void)[] = [];

  constructor(
    private readonly clock: Pick<Clock, "now">,
    private readonly logger: Logger,
  ) {}

  onChange(listener: (change: StateChange) => void): void {
    this.listeners.push(listener);
  }

  /** The port handed to one channel's start (a fresh entry: a restart of the channel starts over). */
  forChannel(name: string): ChannelStatus {
    const entry: Entry = {
      name,
      state: "connecting",
      since: this.clock.now(),
      reconnects: 0,
      reported: false,
      running: false,
      wasDown: false,
    };
    this.entries.set(name, entry);
    const live = () => this.entries.get(name) === entry;
    return {
      connecting: () => live() && this.move(entry, "connecting"),
      connected: () => live() && this.move(entry, "connected"),
      disconnected: (reason) => live() && this.move(entry, "disconnected", reason),
      hub: (view) => {
        if (live()) entry.hub = view;
      },
    };
  }

  /** Its start returned: a channel that reported nothing is taken as connected. */
  started(name: string): void {
    const entry = this.entries.get(name);
    if (!entry) return;
    entry.running = true;
    if (!entry.reported) {
      entry.state = "connected";
      entry.since = this.clock.now();
    }
    // Its first appearance: listeners learn where it stands now (what it reported while starting).
    this.emit({ name, from: undefined, to: entry.state, at: entry.since, ...reasonOf(entry) });
  }

  /** It failed to start, stopped, or moved to another gateway: no longer in the table. */
  remove(name: string): void {
    this.entries.delete(name);
  }

  /** The running channels, by name. */
  list(): ChannelState[] {
    return [...this.entries.values()]
      .filter((e) => e.running)
      .map(({ name, state, since, reason, reconnects }) => ({
        name,
        state,
        since,
        reconnects,
        ...(reason !== undefined ? { reason } : {}),
      }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  state(name: string): ConnectionState | undefined {
    const entry = this.entries.get(name);
    return entry?.running ? entry.state : undefined;
  }

  /** The hubs of the running channels, for their counts. */
  hubs(): { name: string; view: HubView }[] {
    return [...this.entries.values()].flatMap((e) =>
      e.running && e.hub ? [{ name: e.name, view: e.hub }] : [],
    );
  }

  private move(entry: Entry, to: ConnectionState, reason?: string): boolean {
    entry.reported = true;
    // A repeat changes nothing (a second "down" keeps the first one's time: the outage began then).
    if (entry.state === to) {
      if (reason !== undefined) entry.reason = reason;
      return true;
    }
    const from = entry.state;
    if (to === "disconnected") entry.wasDown = true;
    const reconnected = to === "connected" && entry.wasDown;
    if (reconnected) {
      entry.reconnects += 1;
      entry.wasDown = false;
    }
    entry.state = to;
    entry.since = this.clock.now();
    if (to === "connected") delete entry.reason;
    else if (reason !== undefined) entry.reason = reason;
    if (entry.running)
      this.emit({
        name: entry.name,
        from,
        to,
        at: entry.since,
        ...reasonOf(entry),
        ...(reconnected ? { reconnected } : {}),
      });
    return true;
  }

  private emit(change: StateChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (error) {
        // A listener is metrics or alerts: its failure must not reach the channel that reported.
        this.logger.error("ops: a channel-state listener failed", { error: String(error) });
      }
    }
  }
}

function reasonOf(entry: Entry): { reason?: string } {
  return entry.reason !== undefined ? { reason: entry.reason } : {};
}
