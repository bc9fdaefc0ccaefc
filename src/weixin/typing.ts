/**
 * The "typing…" indicator: `getconfig` yields a per-peer typing ticket (cached), `sendtyping` status
 * 1 shows it and is refreshed while the turn runs (WeChat drops it after a few seconds), status 2
 * clears it at the end. Decoration only: every failure is logged at debug and otherwise ignored.
 */
import type { Timers } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { IlinkClient } from "./client.js";
import type { PeerState } from "./peers.js";
import { TYPING_OFF, TYPING_ON } from "./wire.js";

/** How often status 1 is sent again while a turn runs. */
export const TYPING_REFRESH_MS = 5_000;
/** A ticket is asked again after this long (Tencent's plugin keeps one at most a day). */
const TICKET_TTL_MS = 12 * 60 * 60_000;

export class Typing {
  private readonly tickets = new Map<string, { ticket: string; at: number }>();
  private readonly running = new Map<string, unknown>();

  constructor(
    private readonly o: {
      client: IlinkClient;
      peers: PeerState;
      timers: Timers & { now(): number };
      logger: Logger;
      refreshMs?: number;
    },
  ) {}

  /** Show typing to `peer` until stop(); a second start for the same peer is one indicator. */
  start(peer: string): void {
    if (this.running.has(peer)) return;
    const every = this.o.refreshMs ?? TYPING_REFRESH_MS;
    const tick = () => {
      void this.send(peer, TYPING_ON);
      this.running.set(peer, this.o.timers.setTimeout(tick, every));
    };
    tick();
  }

  stop(peer: string): void {
    const timer = this.running.get(peer);
    if (timer === undefined) return;
    this.o.timers.clearTimeout(timer);
    this.running.delete(peer);
    void this.send(peer, TYPING_OFF);
  }

  /** Stop every indicator (shutdown). */
  stopAll(): void {
    for (const peer of [...this.running.keys()]) this.stop(peer);
  }

  private async send(peer: string, status: number): Promise<void> {
    try {
      const ticket = await this.ticket(peer);
      if (ticket) await this.o.client.sendTyping(peer, ticket, status);
    } catch (error) {
      this.o.logger.debug("weixin: typing indicator failed (ignored)", { error: String(error) });
    }
  }

  private async ticket(peer: string): Promise<string> {
    const cached = this.tickets.get(peer);
    if (cached && this.o.timers.now() - cached.at < TICKET_TTL_MS) return cached.ticket;
    const answer = await this.o.client.getConfig(peer, this.o.peers.contextToken(peer));
    const ticket = typeof answer.typing_ticket === "string" ? answer.typing_ticket.trim() : "";
    if (ticket) this.tickets.set(peer, { ticket, at: this.o.timers.now() });
    return ticket;
  }
}
