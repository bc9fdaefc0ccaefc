/**
 * The conventional proxy variables, decided per URL, for a channel that makes its own connections:
 * HTTPS_PROXY for https/wss, HTTP_PROXY for http/ws (the lowercase name first, as curl reads them),
 * NO_PROXY to go direct, and loopback always direct (a proxy cannot reach this machine's loopback,
 * and a local fake or sidecar must stay local). One decision for every connection a channel makes,
 * so its REST calls and its socket can never disagree about the route. Pure. Layer: messaging (base).
 */
import { ParleyError } from "./errors.js";

export type ProxyEnv = Readonly<Record<string, string | undefined>>;

function read(env: ProxyEnv, name: string): string {
  return (env[name.toLowerCase()] ?? env[name.toUpperCase()] ?? "").trim();
}

/** The proxy the variables name for this scheme, parsed; a bad value is a configuration error. */
function proxyVariable(env: ProxyEnv, secure: boolean): URL | null {
  const name = secure ? "HTTPS_PROXY" : "HTTP_PROXY";
  const raw = read(env, name);
  if (!raw) return null;
  // "proxy.corp:3128" without a scheme means plain http, as curl reads it.
  const withScheme = raw.includes("://") ? raw : `http://${raw}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new ParleyError("CONFIG_INVALID", `${name} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ParleyError("CONFIG_INVALID", `${name} must be an http:// or https:// proxy`);
  return url;
}

/** Loopback by address or name: 127.0.0.0/8, ::1, localhost and its subdomains. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "::1" || host === "localhost" || host.endsWith(".localhost")) return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function defaultPort(protocol: string): string {
  return protocol === "https:" || protocol === "wss:" ? "443" : "80";
}

/**
 * Whether NO_PROXY sends this host direct: `*` for every host; otherwise comma- or space-separated
 * names, each matching itself and its subdomains (a leading `.` or `*.` is the same), optionally
 * with `:port`. Addresses match exactly; CIDR ranges are not read (they never match).
 */
export function noProxyMatches(noProxy: string, hostname: string, port: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  for (const raw of noProxy.toLowerCase().split(/[\s,]+/)) {
    if (!raw) continue;
    if (raw === "*") return true;
    const m = raw.match(/^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/);
    if (!m) continue;
    const entryPort = m[2];
    if (entryPort && entryPort !== port) continue;
    const name = (m[1] ?? "").replace(/^\[|\]$/g, "").replace(/^\*?\./, "");
    if (name && (host === name || host.endsWith(`.${name}`))) return true;
  }
  return false;
}

/** The proxy a connection to `target` goes through, or null for a direct connection. */
export function envProxyFor(target: string | URL, env: ProxyEnv): URL | null {
  const url = typeof target === "string" ? new URL(target) : target;
  const secure = url.protocol === "https:" || url.protocol === "wss:";
  const proxy = proxyVariable(env, secure);
  if (!proxy) return null;
  if (isLoopbackHost(url.hostname)) return null;
  const port = url.port || defaultPort(url.protocol);
  if (noProxyMatches(read(env, "NO_PROXY"), url.hostname, port)) return null;
  return proxy;
}

/** A proxy as logs and doctor show it: scheme, host and port, never its user or password. */
export function describeProxy(proxy: URL): string {
  return `${proxy.protocol}//${proxy.host}`;
}
