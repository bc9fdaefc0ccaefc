/**
 * /healthz, /readyz and /metrics, mounted on the web chat's HTTP server ahead of its own routes.
 * /healthz says only "the process serves" and needs nothing. /readyz and /metrics tell more (which
 * channel is down, how busy the agent is), so they need `Authorization: Bearer
 * <PARLEY_METRICS_TOKEN>`; with no token configured they answer loopback peers only. Tokens are
 * compared in constant time, and every refusal is audited.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../messaging/base/logger.js";
import type { HttpRoutes } from "../../messaging/channel/ops-port.js";
import type { AuditSink } from "../../messaging/security/audit.js";
import type { OpsSnapshot } from "./snapshot.js";

export const OPS_PATHS = ["/healthz", "/readyz", "/metrics"] as const;

export interface OpsRoutesOptions {
  /** PARLEY_METRICS_TOKEN; empty or absent: loopback peers only. */
  token: string | undefined;
  snapshot: () => Promise<OpsSnapshot>;
  metrics: (snapshot: OpsSnapshot) => Promise<string>;
  metricsContentType: string;
  audit: AuditSink;
  logger: Logger;
}

const HEADERS = { "cache-control": "no-store", "x-content-type-options": "nosniff" };

/** Equal-length digests: the comparison takes the same time whatever was presented, its length included. */
export function tokenMatches(expected: string, presented: string): boolean {
  const a = createHash("sha256").update(expected).digest();
  const b = createHash("sha256").update(presented).digest();
  return timingSafeEqual(a, b);
}

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 (how a dual-stack server sees a v4 peer). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  return v4 === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** The bearer token of a request, or undefined when it has none. */
function bearerOf(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (typeof header !== "string") return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

export type AccessDecision = { ok: true } | { ok: false; status: 401 | 403; reason: string };

/**
 * Who may read /readyz and /metrics. A request that came through a proxy (a forwarding header) is
 * not a loopback peer whatever socket it arrived on: the proxy would otherwise open them to anyone.
 */
export function decideAccess(req: IncomingMessage, token: string | undefined): AccessDecision {
  if (token) {
    const presented = bearerOf(req);
    if (presented === undefined) return { ok: false, status: 401, reason: "no_token" };
    return tokenMatches(token, presented) ? { ok: true } : { ok: false, status: 401, reason: "bad_token" };
  }
  const forwarded = req.headers["x-forwarded-for"] !== undefined || req.headers.forwarded !== undefined;
  if (isLoopback(req.socket.remoteAddress) && !forwarded) return { ok: true };
  return { ok: false, status: 403, reason: forwarded ? "forwarded_without_token" : "not_loopback" };
}

export function opsRoutes(o: OpsRoutesOptions): HttpRoutes {
  const token = o.token?.trim() || undefined;
  return (req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (!(OPS_PATHS as readonly string[]).includes(path)) return false;
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { ...HEADERS, allow: "GET, HEAD", "content-type": "text/plain" }).end("405\n");
      return true;
    }
    // A supervisor's liveness probe: 200 while this process serves, and nothing else said.
    if (path === "/healthz") {
      res.writeHead(200, { ...HEADERS, "content-type": "text/plain; charset=utf-8" }).end("ok\n");
      return true;
    }
    const access = decideAccess(req, token);
    if (!access.ok) {
      o.audit.log("ops.http", "refused", { path, reason: access.reason, status: access.status });
      res
        .writeHead(access.status, {
          ...HEADERS,
          "content-type": "text/plain; charset=utf-8",
          ...(access.status === 401 ? { "www-authenticate": 'Bearer realm="parley"' } : {}),
        })
        .end(
          access.status === 401
            ? "401: this needs Authorization: Bearer <PARLEY_METRICS_TOKEN>\n"
            : "403: set PARLEY_METRICS_TOKEN to reach this from another machine\n",
        );
      return true;
    }
    void answer(path, res, o).catch((error: unknown) => {
      o.logger.error("ops: answering a health request failed", { path, error: String(error) });
      if (!res.headersSent) res.writeHead(500, { ...HEADERS, "content-type": "text/plain" });
      res.end("500\n");
    });
    return true;
  };
}

async function answer(path: string, res: ServerResponse, o: OpsRoutesOptions): Promise<void> {
  const snapshot = await o.snapshot();
  if (path === "/readyz") {
    const body = snapshot.healthy
      ? { ready: true }
      : { ready: false, notReady: snapshot.notReady, channels: snapshot.channels, store: snapshot.store };
    res
      .writeHead(snapshot.healthy ? 200 : 503, { ...HEADERS, "content-type": "application/json" })
      .end(`${JSON.stringify(body)}\n`);
    return;
  }
  const text = await o.metrics(snapshot);
  res.writeHead(200, { ...HEADERS, "content-type": o.metricsContentType }).end(text);
}
