/**
 * Reading Feishu's refusals. The SDK answers a call with the platform's `{code, msg, data}` body (code
 * 0 = success) when the HTTP status is 2xx, and rejects with its HTTP client's error (the body and
 * headers on `response`) otherwise; a tenant token it could not get is a plain Error naming the
 * code. This is the only place that reads those shapes, so every caller agrees on what a rate limit
 * and a rejected credential look like. Pure (no SDK import).
 */

/** A call Feishu refused: its code and message (never a token or a URL). */
export class FeishuApiError extends Error {
  constructor(
    readonly code: number,
    readonly msg: string,
    /** The HTTP status, when the refusal came as one. */
    readonly status?: number,
    /** How long Feishu asked us to wait (`x-ogw-ratelimit-reset`), in ms. */
    readonly retryAfterMs?: number,
  ) {
    super(
      `Feishu refused the call: code ${code}${msg ? `, ${msg}` : ""}${status ? ` (HTTP ${status})` : ""}`,
    );
    this.name = "FeishuApiError";
  }
}

/**
 * Frequency limits: 99991400 is the gateway's (per app, per API), 230020 the messaging one (per chat,
 * "This operation triggers the frequency limit"). Either may come as HTTP 429 or, from older APIs, 400.
 */
const RATE_LIMIT_CODES: ReadonlySet<number> = new Set([99991400, 230020]);
/** The app id or secret is wrong (10003, 10014), or the token they yield is refused (99991661-3). */
const CREDENTIAL_CODES: ReadonlySet<number> = new Set([10003, 10014, 99991661, 99991663, 99991664]);

interface HttpFailure {
  isAxiosError?: unknown;
  response?: { status?: unknown; data?: unknown; headers?: Record<string, unknown> };
  message?: unknown;
}

/** The body of a successful HTTP exchange that Feishu still refused, as an error; null when code is 0. */
export function refusalOf(body: unknown): FeishuApiError | null {
  const b = body as { code?: unknown; msg?: unknown } | null;
  if (typeof b?.code !== "number") return new FeishuApiError(-1, "an answer without a code");
  if (b.code === 0) return null;
  return new FeishuApiError(b.code, String(b.msg ?? ""));
}

/** Any rejection from the SDK as a FeishuApiError when it carries Feishu's answer, else null. */
export function apiErrorOf(error: unknown): FeishuApiError | null {
  if (error instanceof FeishuApiError) return error;
  const e = error as HttpFailure | null;
  const response = e?.response;
  if (response && typeof response.status === "number") {
    const data = response.data as { code?: unknown; msg?: unknown } | undefined;
    const reset = Number(response.headers?.["x-ogw-ratelimit-reset"]);
    return new FeishuApiError(
      typeof data?.code === "number" ? data.code : -1,
      String(data?.msg ?? ""),
      response.status,
      Number.isFinite(reset) && reset >= 0 ? reset * 1000 : undefined,
    );
  }
  // The SDK's token manager: "failed to get tenant_access_token, code: 10014, msg: app secret invalid".
  const m = /failed to get \w+, code: (-?\d+), msg: (.*)$/.exec(String(e?.message ?? ""));
  if (m) return new FeishuApiError(Number(m[1]), m[2] ?? "");
  return null;
}

export function isRateLimited(error: FeishuApiError): boolean {
  return error.status === 429 || RATE_LIMIT_CODES.has(error.code);
}

export function isCredentialRejected(error: FeishuApiError): boolean {
  return CREDENTIAL_CODES.has(error.code);
}
