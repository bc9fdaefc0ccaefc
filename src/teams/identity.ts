/**
 * The bot's own credential: MSAL (the SDK's token library) configured so the app password can reach
 * the configured login origin and nothing else. Three settings make that hold rather than hope:
 * the authority's OAuth endpoints are given to MSAL (`authorityMetadata`), so the token endpoint
 * comes from parley's configuration, not from a document a server answered; the authority's host
 * is a known authority, so MSAL skips its instance discovery (a request to Microsoft about a host
 * the operator named); and MSAL's HTTP goes through `LoginNetwork`, which refuses any URL outside
 * the login origin before a byte (or the client secret in a POST body) leaves.
 */
import type { INetworkModule, NetworkRequestOptions, NetworkResponse } from "@azure/msal-node";
import { ConfidentialClientApplication, LogLevel } from "@azure/msal-node";
import type { Clock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";

/** Answers from the login server are a token or an error document; anything larger is refused. */
const MAX_ANSWER_BYTES = 256 * 1024;

/** MSAL's HTTP, pinned to one origin, no redirects, bounded in time and size. */
export class LoginNetwork implements INetworkModule {
  constructor(
    private readonly origin: string,
    private readonly o: { clock: Clock; logger: Logger; timeoutMs?: number; fetch?: typeof fetch },
  ) {}

  sendGetRequestAsync<T>(url: string, options?: NetworkRequestOptions): Promise<NetworkResponse<T>> {
    return this.send<T>("GET", url, options);
  }

  sendPostRequestAsync<T>(url: string, options?: NetworkRequestOptions): Promise<NetworkResponse<T>> {
    return this.send<T>("POST", url, options);
  }

  private async send<T>(
    method: string,
    url: string,
    options?: NetworkRequestOptions,
  ): Promise<NetworkResponse<T>> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw new Error("the login server was asked for an invalid URL");
    }
    if (target.origin !== this.origin || target.username || target.password) {
      // Never the URL in the message: it is not ours, and an error can reach a chat.
      this.o.logger.error("teams: a login request outside teams.loginUrl was refused", { method });
      throw new Error("refused: MSAL asked for a URL outside teams.loginUrl");
    }
    const abort = new AbortController();
    const timer = this.o.clock.setTimeout(() => abort.abort(), this.o.timeoutMs ?? 30_000);
    try {
      const res = await (this.o.fetch ?? fetch)(target, {
        method,
        headers: options?.headers ?? {},
        ...(method === "POST" && options?.body !== undefined ? { body: options.body } : {}),
        redirect: "manual",
        signal: abort.signal,
      });
      const text = await res.text();
      if (text.length > MAX_ANSWER_BYTES) throw new Error("the login server's answer is too large");
      let body: unknown = {};
      try {
        body = text ? JSON.parse(text) : {};
      } catch {
        body = {};
      }
      return { status: res.status, headers: Object.fromEntries(res.headers.entries()), body: body as T };
    } finally {
      this.o.clock.clearTimeout(timer);
    }
  }
}

export interface BotCredentialOptions {
  appId: string;
  password: string;
  /** `${loginUrl}/${tenant}`: the authority (MultiTenant: botframework.com). */
  authority: string;
  clock: Clock;
  logger: Logger;
  fetch?: typeof fetch;
}

/** The OAuth endpoints of an authority, as the Microsoft identity platform lays them out. */
export function authorityMetadata(authority: string): string {
  return JSON.stringify({
    token_endpoint: `${authority}/oauth2/v2.0/token`,
    authorization_endpoint: `${authority}/oauth2/v2.0/authorize`,
    issuer: `${authority}/v2.0`,
    jwks_uri: `${authority}/discovery/v2.0/keys`,
  });
}

/** The MSAL client the SDK's credentials factory acquires the bot's Connector tokens with. */
export function botCredential(o: BotCredentialOptions): ConfidentialClientApplication {
  const origin = new URL(o.authority).origin;
  return new ConfidentialClientApplication({
    auth: {
      clientId: o.appId,
      clientSecret: o.password,
      authority: o.authority,
      knownAuthorities: [new URL(o.authority).host],
      authorityMetadata: authorityMetadata(o.authority),
    },
    system: {
      networkClient: new LoginNetwork(origin, {
        clock: o.clock,
        logger: o.logger,
        ...(o.fetch ? { fetch: o.fetch } : {}),
      }),
      loggerOptions: {
        // MSAL's own lines carry no secret at Warning and above; PII logging stays off.
        logLevel: LogLevel.Warning,
        piiLoggingEnabled: false,
        loggerCallback: (level, message) => {
          if (level <= LogLevel.Error) o.logger.warn("teams: MSAL", { message });
        },
      },
    },
  });
}
