/**
 * A Connector call that did not succeed. Raised, never returned: every caller treats a return as
 * proof of delivery, so a swallowed failure is how a gateway records an answer nobody received.
 * Callers that can live without the call (typing, a cosmetic edit, an acknowledgement) catch it at
 * their own call site, where that tolerance is a decision. The message names the status and the
 * operation, never a URL (a serviceUrl names the tenant's region, a token never appears at all).
 */
import { ParleyError } from "../messaging/base/errors.js";

export class TeamsSendError extends ParleyError {
  constructor(
    /** The Connector's HTTP status; 0 when it was never reached (refused here, or the network). */
    readonly status: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super("DELIVERY_FAILED", message, options);
    this.name = "TeamsSendError";
  }

  /**
   * The Connector will never take this conversation again (the user blocked the bot or removed the
   * app): 403 and 404. Not 401 (our own credential) and not 429/5xx (transient).
   */
  get retiresRoute(): boolean {
    return this.status === 403 || this.status === 404;
  }
}

/** The status of a failed Connector call, whatever wrapped it on the way up through the SDK. */
export function teamsSendErrorOf(error: unknown): TeamsSendError | undefined {
  let cursor: unknown = error;
  for (let depth = 0; depth < 6 && cursor; depth += 1) {
    if (cursor instanceof TeamsSendError) return cursor;
    cursor = cursor instanceof Error ? cursor.cause : undefined;
  }
  return undefined;
}
