/**
 * Schema pieces every channel's config section is built from, so the same kind of setting is
 * validated the same way everywhere: id lists, the API origin, the owner, the mid-turn mode. A bad
 * value is a configuration error naming its key, never a silently narrowed or widened list.
 */
import { z } from "zod";

/**
 * A list of platform ids as strings. JSON numbers past 2^53 have already lost digits, so a number
 * is accepted only when it is a safe integer; `pattern` rejects what could never match a sender.
 */
export function idList(pattern: RegExp, what: string) {
  return z
    .array(
      z
        .union([
          z.string().trim(),
          z.number().int().refine(Number.isSafeInteger, "id too large for a JSON number: quote it"),
        ])
        .transform(String)
        .refine((id) => pattern.test(id), `not a ${what}`),
    )
    .default([]);
}

/** An http(s) API origin; a trailing slash is dropped (SDKs join paths themselves). */
export function apiOrigin(fallback: string) {
  return z
    .string()
    .trim()
    .regex(/^https?:\/\/[^\s]+$/, "not an http(s) URL")
    .transform((url) => url.replace(/\/+$/, ""))
    .default(fallback);
}

/** Unset: the gateway-wide queueMode. */
export const queueModeSetting = z.enum(["steer", "queue"]).optional();

/**
 * The channel's owner: the one person who may arm auto-approve and see host-wide listings. Unset,
 * the sole allow-listed id is the owner; with several and none named, nobody is.
 */
export function ownerOf(settings: {
  owner?: string | undefined;
  allowedUserIds: readonly string[];
}): string | undefined {
  if (settings.owner) return settings.allowedUserIds.includes(settings.owner) ? settings.owner : undefined;
  return settings.allowedUserIds.length === 1 ? settings.allowedUserIds[0] : undefined;
}
