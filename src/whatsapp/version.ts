/**
 * Which WhatsApp Web version the socket announces. WhatsApp refuses a version it considers outdated
 * with a 405 at connect, and baileys' built-in default (`DEFAULT_CONNECTION_CONFIG.version`,
 * lib/Defaults/index.js) ages with the release; so by default the current one is asked of WhatsApp
 * Web itself at start through baileys' `fetchLatestWaWebVersion` (lib/Utils/generics.js: the
 * `client_revision` of web.whatsapp.com/sw.js), bounded in time, falling back to the built-in
 * default when it fails. `whatsapp.webVersion` may pin one instead ("pinned": baileys' default;
 * "2.3000.1234567890": that one) and then nothing is fetched.
 */
import type { WAVersion } from "@whiskeysockets/baileys";
import type { Logger } from "../messaging/base/logger.js";

/** baileys' answer shape: the version, and whether it is the fetched one. */
export interface FetchedVersion {
  version: WAVersion;
  isLatest: boolean;
  error?: unknown;
}

/** Asks for the current version; the signal aborts it when it takes too long. */
export type VersionSource = (signal: AbortSignal) => Promise<FetchedVersion>;

/** How long the start waits for WhatsApp Web's answer before it takes the built-in default. */
export const VERSION_FETCH_TIMEOUT_MS = 5000;

export const PINNED = "pinned";
export const LATEST = "latest";

/** "2.3000.1234567890" as a version, or null. */
export function parseVersion(text: string): WAVersion | null {
  const m = /^(\d{1,4})\.(\d{1,6})\.(\d{1,12})$/.exec(text);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

export function versionText(v: WAVersion): string {
  return v.join(".");
}

/** baileys' own pinned default, loaded with the SDK (this module stays free of it until asked). */
export async function pinnedVersion(): Promise<WAVersion> {
  const { DEFAULT_CONNECTION_CONFIG } = await import("@whiskeysockets/baileys");
  return DEFAULT_CONNECTION_CONFIG.version;
}

/** The real source: baileys' fetch of WhatsApp Web's service worker (through the proxy's dispatcher). */
export function baileysVersionSource(dispatcher?: unknown): VersionSource {
  return async (signal) => {
    const { fetchLatestWaWebVersion } = await import("@whiskeysockets/baileys");
    // baileys spreads its options into fetch: the signal bounds it, the dispatcher routes it.
    return fetchLatestWaWebVersion({ signal, ...(dispatcher ? { dispatcher } : {}) } as RequestInit);
  };
}

export interface ResolvedVersion {
  version: WAVersion;
  /** Where it came from: WhatsApp Web, the built-in default (asked for or after a failure), the setting. */
  origin: "fetched" | "pinned" | "fallback" | "configured";
}

/** The version for this start, per the setting; a failed or slow fetch falls back, and says so. */
export async function resolveVersion(
  setting: string,
  source: VersionSource,
  log: Logger,
  timeoutMs = VERSION_FETCH_TIMEOUT_MS,
): Promise<ResolvedVersion> {
  const configured = parseVersion(setting);
  if (configured) return { version: configured, origin: "configured" };
  const pinned = await pinnedVersion();
  if (setting === PINNED) return { version: pinned, origin: "pinned" };
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const fetched = await source(controller.signal);
    if (fetched.isLatest) return { version: fetched.version, origin: "fetched" };
    log.warn("whatsapp: could not ask WhatsApp Web for its current version; using baileys' built-in one", {
      version: versionText(pinned),
      error: describe(fetched.error),
    });
  } catch (error) {
    log.warn("whatsapp: could not ask WhatsApp Web for its current version; using baileys' built-in one", {
      version: versionText(pinned),
      error: describe(error),
    });
  } finally {
    clearTimeout(timer);
  }
  return { version: pinned, origin: "fallback" };
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "object" && error !== null && "message" in error) return String(error.message);
  return String(error);
}
