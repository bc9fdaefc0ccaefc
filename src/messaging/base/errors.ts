/**
 * Typed errors. Messages never carry tokens or full URLs: a message may reach a log line or a chat.
 */
export type ParleyErrorCode =
  | "UNKNOWN_OUTPUT_KIND"
  | "MALFORMED_EVENT"
  | "PROVIDER_SPAWN_FAILED"
  | "PROVIDER_PROTOCOL"
  | "PROVIDER_EXITED"
  | "PROVIDER_TIMEOUT"
  | "CONFIG_INVALID"
  | "STORE_CORRUPT"
  | "STORE_TOO_NEW"
  | "DELIVERY_FAILED"
  | "REFUSED"
  | "CHANNEL_API";

export class ParleyError extends Error {
  readonly code: ParleyErrorCode;
  constructor(code: ParleyErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ParleyError";
    this.code = code;
  }
}

/** A platform API call failed; `retryAfter` is seconds when the platform said so. */
export class ChannelApiError extends ParleyError {
  readonly channel: string;
  readonly method: string;
  readonly status: number;
  readonly retryAfter: number | undefined;
  constructor(
    channel: string,
    method: string,
    status: number,
    message: string,
    options?: { retryAfter?: number; cause?: unknown },
  ) {
    super("CHANNEL_API", `${channel}.${method} failed (${status}): ${message}`, options);
    this.name = "ChannelApiError";
    this.channel = channel;
    this.method = method;
    this.status = status;
    this.retryAfter = options?.retryAfter;
  }
}
