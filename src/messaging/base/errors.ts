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
  | "PROMPT_NOT_SHOWN"
  | "REFUSED";

export class ParleyError extends Error {
  readonly code: ParleyErrorCode;
  constructor(code: ParleyErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ParleyError";
    this.code = code;
  }
}
