/**
 * How Webex's connections leave the machine: HTTPS_PROXY (and HTTP_PROXY, NO_PROXY) honoured for
 * the REST calls, the file downloads and the device websocket, through the kit's one per-URL
 * decision so the three can never take different routes. fetch goes through undici's ProxyAgent
 * (Node's fetch takes a dispatcher, never an http.Agent); ws through https-proxy-agent, which
 * tunnels with CONNECT and then speaks TLS to Webex inside the tunnel, so the proxy sees only the
 * host name and never the token. The host check (TokenHosts) runs before any of this: a proxy
 * changes the route, never where the token may go.
 */
import type { Agent as HttpAgent } from "node:http";
import createHttpsProxyAgent from "https-proxy-agent";
import type { Dispatcher } from "undici";
import { Agent, ProxyAgent } from "undici";
import type { ProxyEnv } from "../messaging/base/env-proxy.js";
import { describeProxy, envProxyFor } from "../messaging/base/env-proxy.js";

export interface WebexEgressOptions {
  env: ProxyEnv;
  /** An extra trusted CA (PEM) for Webex's TLS: only tests pass one (their fake's own certificate). */
  ca?: string;
}

export class WebexEgress {
  private readonly dispatchers = new Map<string, Dispatcher>();
  private readonly agents = new Map<string, HttpAgent>();

  constructor(private readonly o: WebexEgressOptions) {}

  /** The proxy for this URL (null: direct); throws on a malformed proxy variable. */
  proxyFor(url: string): URL | null {
    return envProxyFor(url, this.o.env);
  }

  /** What start() logs and doctor shows: the proxy Webex's API goes through, without credentials. */
  describe(apiUrl: string): string {
    const proxy = this.proxyFor(apiUrl);
    return proxy ? `through ${describeProxy(proxy)}` : "direct";
  }

  /** fetch's `dispatcher` for this URL; undefined means Node's default (direct, system CAs). */
  dispatcher(url: string): Dispatcher | undefined {
    const proxy = this.proxyFor(url);
    const key = proxy?.href ?? "direct";
    if (!proxy && !this.o.ca) return undefined;
    let found = this.dispatchers.get(key);
    if (!found) {
      const tls = this.o.ca ? { ca: this.o.ca } : {};
      found = proxy ? new ProxyAgent({ uri: proxy.href, requestTls: tls }) : new Agent({ connect: tls });
      this.dispatchers.set(key, found);
    }
    return found;
  }

  /** The websocket's options for this URL: a CONNECT tunnel when proxied. */
  socketOptions(url: string): { agent?: HttpAgent; ca?: string } {
    const proxy = this.proxyFor(url);
    const ca = this.o.ca ? { ca: this.o.ca } : {};
    if (!proxy) return ca;
    let agent = this.agents.get(proxy.href);
    if (!agent) {
      agent = createHttpsProxyAgent(proxy.href) as unknown as HttpAgent;
      this.agents.set(proxy.href, agent);
    }
    return { agent, ...ca };
  }

  /** Idle proxy connections closed: nothing keeps the process alive after stop. */
  async close(): Promise<void> {
    await Promise.all([...this.dispatchers.values()].map((d) => d.close().catch(() => undefined)));
    this.dispatchers.clear();
    for (const agent of this.agents.values()) agent.destroy?.();
    this.agents.clear();
  }
}
