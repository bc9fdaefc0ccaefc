/**
 * The long connection's health, as the operator sees it: healthy once subscribed, otherwise why not.
 * A wrong secret is only ever visible here (WeCom has no cheap "whoami" to check it at start), so the
 * running channel records each verdict in the data home and `parley doctor` reads it back. Only the
 * classification is kept: WeCom's error messages can echo what was sent, and are never stored.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export type HealthReason =
  /** WeCom refused the subscribe frame: the bot id or the secret is wrong. */
  | "subscribe_refused"
  /** Another connection subscribed with the same bot; WeCom disconnected this one. */
  | "kicked"
  /** The socket could not be opened (DNS, TLS, a refused connection). */
  | "unreachable"
  /** The socket closed before or after subscribing; reconnecting. */
  | "closed"
  /** Pings went unanswered; the connection was dropped and is being reopened. */
  | "heartbeat_lost";

export type WeComHealth =
  | { state: "connecting"; at: number }
  | { state: "healthy"; at: number }
  | { state: "unhealthy"; reason: HealthReason; at: number };

/** What each reason means to an operator, and what to do about it. */
export const HEALTH_REASONS: Readonly<Record<HealthReason, string>> = {
  subscribe_refused: "WeCom refused the subscription: check WECOM_BOT_ID and WECOM_SECRET (retrying)",
  kicked: "another connection subscribed with this bot and WeCom disconnected this one (not reconnecting)",
  unreachable: "the long-connection endpoint could not be reached (retrying)",
  closed: "the connection closed (reconnecting)",
  heartbeat_lost: "pings went unanswered; the connection is being reopened",
};

export function describeHealth(h: WeComHealth): string {
  if (h.state === "healthy") return "healthy (subscribed)";
  if (h.state === "connecting") return "connecting";
  return `unhealthy: ${HEALTH_REASONS[h.reason]}`;
}

const FILE = "wecom-health.json";

export function healthFile(home: string): string {
  return join(home, "state", FILE);
}

/** Record the verdict (atomic, owner-only); a failure to write is the caller's to log. */
export function writeHealth(home: string, h: WeComHealth): void {
  const dir = join(home, "state");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = healthFile(home);
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(h)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}

/** The last recorded verdict, or undefined when none was (or it does not read). */
export function readHealth(home: string): WeComHealth | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(healthFile(home), "utf8"));
  } catch {
    return undefined;
  }
  const h = raw as Partial<WeComHealth> & { reason?: unknown };
  if (typeof h.at !== "number") return undefined;
  if (h.state === "healthy" || h.state === "connecting") return { state: h.state, at: h.at };
  if (h.state === "unhealthy" && typeof h.reason === "string" && h.reason in HEALTH_REASONS)
    return { state: "unhealthy", reason: h.reason as HealthReason, at: h.at };
  return undefined;
}

/** A bot id shown by its ends only: enough to tell two bots apart, not enough to be the credential. */
export function maskId(id: string): string {
  const chars = Array.from(id);
  if (chars.length <= 6) return "•".repeat(chars.length);
  const head = chars.slice(0, 3).join("");
  const tail = chars.slice(-2).join("");
  return `${head}…${tail}`;
}
