/**
 * `whatsapp.proxyUrl`: one HTTP(S) proxy for everything WhatsApp-bound. The socket and baileys'
 * media uploads take a node `http.Agent` (https-proxy-agent tunnels with CONNECT); the media parley
 * downloads itself goes through undici's fetch with a ProxyAgent dispatcher (Node's own fetch takes
 * no agent). Without a proxy, nothing here is used.
 */
import type { Agent } from "node:https";
import createHttpsProxyAgent from "https-proxy-agent";
import { ProxyAgent, fetch as undiciFetch } from "undici";

export interface WaProxy {
  /** For the socket (`agent`) and baileys' uploads (`fetchAgent`). */
  agent: Agent;
  /** For parley's own media downloads. */
  fetch: typeof fetch;
  /** undici's dispatcher, for a fetch made by baileys (the WhatsApp Web version). */
  dispatcher: ProxyAgent;
}

export function proxyFor(proxyUrl: string | undefined): WaProxy | undefined {
  if (!proxyUrl) return undefined;
  const dispatcher = new ProxyAgent(proxyUrl);
  return {
    dispatcher,
    agent: createHttpsProxyAgent(proxyUrl) as unknown as Agent,
    // undici's fetch is the same WHATWG fetch Node ships; only its dispatcher differs.
    fetch: ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
      undiciFetch(input as never, { ...(init as object), dispatcher } as never)) as unknown as typeof fetch,
  };
}
