/**
 * The at-a-glance progress marker on the message a turn answers: ⏳ while the turn runs, then ✅
 * when something was delivered and the turn did not fail, else ⚠️. A reaction is decoration: one
 * that does not land is logged, never a failed turn.
 */
import type { Logger } from "../messaging/base/logger.js";
import type { WhatsAppTransport } from "./transport.js";
import { decodeKey } from "./transport.js";

export const REACTION_WORKING = "⏳";
export const REACTION_DONE = "✅";
export const REACTION_FAILED = "⚠️";

export class ProgressReaction {
  constructor(
    private readonly t: WhatsAppTransport,
    private readonly chat: string,
    /** The answered message's key, encoded; absent: nothing to react on. */
    private readonly messageId: string | undefined,
    private readonly logger: Logger,
  ) {}

  working(): void {
    void this.react(REACTION_WORKING);
  }

  finished(ok: boolean): Promise<void> {
    return this.react(ok ? REACTION_DONE : REACTION_FAILED);
  }

  private async react(emoji: string): Promise<void> {
    if (!this.messageId) return;
    try {
      await this.t.react(this.chat, decodeKey(this.chat, this.messageId), emoji);
    } catch (error) {
      this.logger.debug("whatsapp: reaction failed", { error: String(error) });
    }
  }
}
