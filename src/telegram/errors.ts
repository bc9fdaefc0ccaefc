/**
 * Reading Telegram's refusals. grammY rejects with an error carrying the Bot API's error_code and
 * description; these predicates are the only place that reads them, so the transport and renderer
 * agree on what "not modified" and "cannot parse" look like. Pure (no SDK import).
 */

/** Telegram's answer to a failed call, as far as the caller needs it. */
export function apiErrorOf(error: unknown): { code: number; description: string } | null {
  const e = error as { error_code?: unknown; description?: unknown } | null;
  if (e && typeof e.error_code === "number")
    return { code: e.error_code, description: String(e.description ?? "") };
  return null;
}

/** An edit that changed nothing is a success: the screen already shows what we meant. */
export function isNotModified(error: unknown): boolean {
  const e = apiErrorOf(error);
  return e !== null && e.code === 400 && e.description.includes("message is not modified");
}

/** Telegram could not parse our HTML; the caller retries as plain text. */
export function isEntityParseError(error: unknown): boolean {
  const e = apiErrorOf(error);
  return e !== null && e.code === 400 && e.description.includes("can't parse entities");
}
