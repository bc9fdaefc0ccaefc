/**
 * Sends and edits Webex refused, per turn. A 403 on a send or an edit is the organization's policy
 * (compliance, DLP, a space's moderation) refusing those words: sending them again as a new message
 * would only be refused again, so the renderer does not, and the reader is told once, with Webex's
 * tracking id (what an administrator quotes to Cisco). Every policy refusal is audited; other
 * failures (an edit cap, a deleted message, a network error) are only logged, since their
 * fallbacks (a fresh message) may still land. A failed call is a WebexRefusal: `postAnew` is what
 * the LiveSurface's `refused` tells the kit.
 */
import type { Logger } from "../messaging/base/logger.js";
import type { AuditSink } from "../messaging/security/audit.js";

export interface Refusal {
  ok: false;
  status: number;
  message: string;
  trackingId?: string;
}

/** Webex answers a send or an edit its organization's policy forbids with 403. */
export function isPolicyRefusal(res: { ok: boolean; status?: number }): boolean {
  return !res.ok && res.status === 403;
}

/**
 * A send or an edit that did not land. `postAnew`: a new message may still land what it carried;
 * `policy`: the organization's policy refused these words.
 */
export class WebexRefusal extends Error {
  constructor(
    message: string,
    readonly postAnew: boolean,
    readonly policy = false,
  ) {
    super(message);
    this.name = "WebexRefusal";
  }
}

export class TurnRefusals {
  /** The latest failure, when it was the organization's policy (a later other failure clears it). */
  private policy: Refusal | null = null;
  private readonly told = new Set<string>();
  /** Words the policy refused this turn: offered again they would only be refused again. */
  private readonly refused = new Set<string>();

  constructor(private readonly o: { roomId: string; logger: Logger; audit?: AuditSink }) {}

  /** Record a failed send or edit (of `body`); true when it was the organization's policy. */
  note(res: Refusal, what: "send" | "edit" | "card", body?: string): boolean {
    this.o.logger.warn("webex: Webex refused a message", {
      what,
      status: res.status,
      ...(res.trackingId ? { trackingId: res.trackingId } : {}),
    });
    this.policy = isPolicyRefusal(res) ? res : null;
    if (!this.policy) return false;
    if (body !== undefined) this.refused.add(body);
    this.o.audit?.log("webex.send", "refused", {
      room: this.o.roomId,
      what,
      status: res.status,
      reason: "policy",
      ...(res.trackingId ? { trackingId: res.trackingId } : {}),
    });
    return true;
  }

  /** Whether the policy already refused these words this turn. */
  blocked(body: string): boolean {
    return this.refused.has(body);
  }

  /** The notice for `about`, once per turn, when the latest failure was a policy refusal (else null). */
  notice(about: "answer" | "prompt"): string | null {
    if (!this.policy || this.told.has(about)) return null;
    this.told.add(about);
    const id = this.policy.trackingId ? ` (Webex tracking id ${this.policy.trackingId})` : "";
    return about === "answer"
      ? `⚠️ Webex refused part of this answer: your organization's policy blocked it, so it was not sent again${id}.`
      : `⚠️ Webex refused to show a permission request: your organization's policy blocked it, so the request was denied${id}.`;
  }
}
