/** The typed failures of an iLink call; none of them carries the token or a request body. */

/** iLink refused the call: a nonzero `ret`/`errcode` in a 200 body, or a non-2xx status. */
export class IlinkApiError extends Error {
  constructor(
    readonly endpoint: string,
    /** The errcode (or ret) iLink answered; the HTTP status when the body never said. */
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = "IlinkApiError";
  }
}

/** `-14`: the bot's session expired. Every call now pauses (pause.ts); a relink may be needed. */
export class SessionExpiredError extends IlinkApiError {
  constructor(endpoint: string) {
    super(endpoint, -14, `iLink ${endpoint}: the bot's session expired (-14); relink may be needed`);
    this.name = "SessionExpiredError";
  }
}

/** Refused locally: the session is paused after a `-14`, so the call never left. */
export class SessionPausedError extends Error {
  constructor(
    readonly endpoint: string,
    readonly untilMs: number,
  ) {
    super(
      `iLink ${endpoint} not sent: the session is paused after -14 until ${new Date(untilMs).toISOString()}`,
    );
    this.name = "SessionPausedError";
  }
}

/** A send refused before it left (no context token, a peer the policy does not admit). */
export class WeixinSendRefused extends Error {
  constructor(
    readonly reason: "no_context_token" | "not_admitted" | "not_connected",
    message: string,
  ) {
    super(message);
    this.name = "WeixinSendRefused";
  }
}
