/**
 * Where the bot token may go: https hosts under Webex's own domains, or an origin the operator set in
 * trusted configuration (plain http only on loopback, for a local fake or proxy). A host the U2C
 * catalog supplies passes the same check, so a poisoned catalog cannot lead the token elsewhere.
 */

export const WEBEX_DOMAINS = ["webex.com", "wbx2.com", "ciscospark.com"] as const;

const LOOPBACK = new Set(["127.0.0.1", "::1", "[::1]", "localhost"]);

function parse(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

export function isLoopback(url: string): boolean {
  const u = parse(url);
  return u !== null && LOOPBACK.has(u.hostname);
}

function underWebex(host: string): boolean {
  return WEBEX_DOMAINS.some((d) => host === d || host.endsWith(`.${d}`));
}

/** Why a WDM pin is refused, or null: https under a Webex domain, or loopback. */
export function pinProblem(url: string): string | null {
  const u = parse(url);
  if (!u) return "not a URL";
  if (LOOPBACK.has(u.hostname)) return null;
  if (u.protocol !== "https:") return "a WDM pin must be https";
  if (!underWebex(u.hostname)) return `a WDM pin must be under ${WEBEX_DOMAINS.join(", ")}`;
  return null;
}

/** The token-bearing request policy: the configured origins plus https Webex hosts. */
export class TokenHosts {
  private readonly trusted: Set<string>;

  constructor(configuredOrigins: readonly string[]) {
    this.trusted = new Set();
    for (const url of configuredOrigins) {
      const u = parse(url);
      // Plain http in trusted config only on loopback: elsewhere the token would cross the wire in clear.
      if (u && (u.protocol === "https:" || LOOPBACK.has(u.hostname))) this.trusted.add(u.origin);
    }
  }

  allows(url: string): boolean {
    const u = parse(url);
    if (!u) return false;
    if (this.trusted.has(u.origin)) return true;
    return u.protocol === "https:" && underWebex(u.hostname);
  }
}
