/**
 * What a channel tells the gateway's operations side (health, metrics, owner alerts, `parley
 * status`) without knowing it exists: whether its platform connection is up, and a view of its hub
 * that counts what it holds. Counts only, never a message's words or a sender's id: what reaches
 * a metrics scrape or a status line must not carry what people wrote. Layer: messaging.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

/** How a hub looks from outside: numbers, read when someone asks. */
export interface HubView {
  /** Messages held behind a running turn (the receipts' queues), over every conversation. */
  queued(): number;
  /** Conversations with an approval prompt open right now. */
  awaitingApproval(): number;
}

/**
 * One channel's connectedness. A channel that never reports counts as connected while it runs (a
 * webhook receiver has no connection of its own to lose); one that holds a connection reports
 * `connecting` before its first attempt and every change after it.
 */
export interface ChannelStatus {
  connecting(): void;
  connected(): void;
  /** `reason` is token-free and names no person (a status code, an error's name). */
  disconnected(reason: string): void;
  /** The channel's hub, asked for its counts when someone looks. */
  hub(view: HubView): void;
}

/**
 * Requests the gateway answers on a channel's HTTP server before the channel's own handling (the
 * web chat serves /healthz, /readyz and /metrics this way). True when it answered the request.
 */
export type HttpRoutes = (req: IncomingMessage, res: ServerResponse) => boolean;
