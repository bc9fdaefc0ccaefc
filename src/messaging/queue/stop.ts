/**
 * /stop (alias /cancel): cancel the running turn, drop every queued message and finalize the
 * receipt to Cancelled. Shared handler: returns reply TEXT, takes no platform address.
 */
import type { PendingApprovals } from "../approval/approvals.js";
import type { SessionManager } from "../session/session-manager.js";
import type { QueueControl } from "./mid-turn-router.js";

export const STOP_NOTHING_RUNNING = "Nothing is running.";

export async function stopRunningTurn(
  sessions: SessionManager,
  sessionKey: string,
  opts: {
    router?: QueueControl;
    /** The channel's open prompts: an unanswered one would hold the turn until it times out. */
    approvals?: Pick<PendingApprovals, "denyAll">;
    onError?: (error: unknown) => void;
  },
): Promise<string> {
  // Denied first: a turn parked on a prompt cannot reach its next cancel point until it is answered.
  opts.approvals?.denyAll(sessionKey);
  let dropped = 0;
  if (opts.router) {
    const q = opts.router.receiptQueue(sessionKey);
    // Clear and finalize together under the receipt lock, so a concurrent drain sees both or neither.
    dropped = await q.lock.run(() => q.clearLocked());
  }
  const live = await sessions.hasActiveTurn(sessionKey);
  if (live) {
    // The acknowledgement is immediate; escalation to a hard stop runs after the soft-stop budget.
    sessions.stopTurn(sessionKey).catch((error) => opts.onError?.(error));
  }
  if (!live && dropped === 0) return STOP_NOTHING_RUNNING;
  const parts = [live ? "🛑 Stopping the current turn." : "🛑 No turn was running."];
  if (dropped > 0) parts.push(`Dropped ${dropped} queued message${dropped === 1 ? "" : "s"}.`);
  return parts.join(" ");
}
