/**
 * Where each personal conversation is reached. The Bot Framework offers no lookup: the serviceUrl
 * arrives on an inbound activity and the bot must remember it, so the route (conversation ->
 * serviceUrl, account ids, and the authorized identity that owns it) is written to the durable
 * store after authorization (install events too) and read by every proactive path: a /link mirror,
 * the auto-approve lapse notice, a send nobody asked for. Forgotten only when the Connector refuses
 * the conversation for good (403/404); a row whose serviceUrl is no longer an allowed Connector
 * host is ignored at load, so narrowing teams.connectorHosts takes effect on what was stored.
 */
import { z } from "zod";
import type { Logger } from "../messaging/base/logger.js";
import type { JsonValue, RouteStore } from "../messaging/store/port.js";

/** One personal conversation: where it is, who it is with, and who the bot is there. */
export interface TeamsAddress {
  conversationId: string;
  serviceUrl: string;
  tenantId?: string;
  /** The user's Teams account id (29:…): whom the bot's messages are addressed to. */
  userAccountId: string;
  /** The identity the allow-list authorized (UPN, e-mail or AAD object id, lowercased). */
  identity: string;
  /** The bot's account id (28:…). */
  botId: string;
}

export const addressSchema = z.object({
  conversationId: z.string().min(1),
  serviceUrl: z.string().min(1),
  tenantId: z.string().optional(),
  userAccountId: z.string().min(1),
  identity: z.string().min(1),
  botId: z.string().min(1),
});

const CHANNEL = "teams";

export class TeamsRoutes {
  private readonly known = new Map<string, TeamsAddress>();

  constructor(
    private readonly store: RouteStore | undefined,
    private readonly o: { admits(serviceUrl: URL): boolean; logger: Logger },
  ) {}

  /** Read every stored route once, before intake opens (proactive checks are synchronous). */
  async load(): Promise<void> {
    for (const row of (await this.store?.list(CHANNEL)) ?? []) {
      const parsed = addressSchema.safeParse(row.address);
      if (!parsed.success || !this.allowed(parsed.data.serviceUrl)) {
        this.o.logger.warn(
          "teams: a stored route was ignored (unreadable, or not an allowed Connector host)",
        );
        continue;
      }
      if (!this.known.has(parsed.data.conversationId))
        this.known.set(parsed.data.conversationId, parsed.data as TeamsAddress);
    }
  }

  private allowed(serviceUrl: string): boolean {
    try {
      return this.o.admits(new URL(serviceUrl));
    } catch {
      return false;
    }
  }

  /** After authorization only. A lost write costs a proactive path, never the message itself. */
  async remember(a: TeamsAddress): Promise<void> {
    const before = this.known.get(a.conversationId);
    // Re-inserted so the map stays in order of last use (ownedBy reads the newest first).
    this.known.delete(a.conversationId);
    this.known.set(a.conversationId, a);
    if (before && JSON.stringify(before) === JSON.stringify(a)) return;
    try {
      await this.store?.put({
        channel: CHANNEL,
        conversation: a.conversationId,
        address: a as unknown as JsonValue,
        owner: a.identity,
      });
    } catch (error) {
      this.o.logger.error("teams: storing a route failed", { error: String(error) });
    }
  }

  /** The Connector refused the conversation for good: it is no longer a destination. */
  async forget(conversationId: string): Promise<void> {
    this.known.delete(conversationId);
    try {
      await this.store?.forget(CHANNEL, conversationId);
    } catch (error) {
      this.o.logger.error("teams: forgetting a route failed", { error: String(error) });
    }
  }

  get(conversationId: string): TeamsAddress | undefined {
    return this.known.get(conversationId);
  }

  /** The conversation an identity was last reached in. */
  ownedBy(identity: string): TeamsAddress | undefined {
    return [...this.known.values()].reverse().find((a) => a.identity === identity);
  }
}
