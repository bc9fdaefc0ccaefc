/**
 * One conversation's outbound calls, bound to its stored address: every send, edit and typing
 * indicator goes through here, so a Connector refusal that means "never again" (403/404: the user
 * blocked the bot or removed the app) retires the route in one place, whichever path hit it. The
 * failure is still thrown: a caller that can live without the call catches it itself.
 */
import type { Logger } from "../messaging/base/logger.js";
import type { AuditSink } from "../messaging/security/audit.js";
import type { OutboundActivity, TeamsReference } from "./client.js";
import { teamsSendErrorOf } from "./errors.js";
import type { TeamsAddress, TeamsRoutes } from "./routes.js";

/** What the outbox needs of the client (TeamsClient; a recording double in unit tests). */
export interface TeamsSender {
  send(r: TeamsReference, activity: OutboundActivity): Promise<string>;
  update(r: TeamsReference, id: string, activity: OutboundActivity): Promise<void>;
  typing(r: TeamsReference): Promise<void>;
}

export function referenceOf(a: TeamsAddress): TeamsReference {
  return {
    conversationId: a.conversationId,
    serviceUrl: a.serviceUrl,
    ...(a.tenantId ? { tenantId: a.tenantId } : {}),
    userAccountId: a.userAccountId,
    botId: a.botId,
  };
}

export function textActivity(text: string): OutboundActivity {
  return { type: "message", text, textFormat: "markdown" };
}

export function attachmentsActivity(attachments: unknown[]): OutboundActivity {
  return { type: "message", attachments: attachments as OutboundActivity["attachments"] };
}

export class TeamsOutbox {
  constructor(
    private readonly o: {
      sender: TeamsSender;
      address: TeamsAddress;
      routes?: TeamsRoutes | undefined;
      audit: AuditSink;
      logger: Logger;
    },
  ) {}

  get address(): TeamsAddress {
    return this.o.address;
  }

  async send(activity: OutboundActivity): Promise<string> {
    return this.guard(() => this.o.sender.send(referenceOf(this.o.address), activity));
  }

  async update(id: string, activity: OutboundActivity): Promise<void> {
    await this.guard(() => this.o.sender.update(referenceOf(this.o.address), id, activity));
  }

  async typing(): Promise<void> {
    await this.guard(() => this.o.sender.typing(referenceOf(this.o.address)));
  }

  private async guard<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      const failure = teamsSendErrorOf(error);
      if (failure?.retiresRoute && this.o.routes?.get(this.o.address.conversationId)) {
        this.o.audit.log("teams_route", "revoked", { reason: `connector_${failure.status}` });
        await this.o.routes.forget(this.o.address.conversationId);
      }
      throw error;
    }
  }
}
