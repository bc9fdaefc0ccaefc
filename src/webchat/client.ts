/**
 * The web chat's network edge: one node:http server serving the page, and WebSocket upgrades through
 * `ws`. Every request needs the per-start token (in the address, once, or in the HttpOnly cookie the
 * page gets for it, so the token can leave the address bar and its history); a wrong token gets 401
 * and never a WebSocket. A socket must come from the page's own origin (or a configured one), sockets
 * are capped per conversation and in total, and each socket's frames are rate-limited. Every refusal
 * is reported for the audit. The gateway's own routes (health, metrics) are answered first and
 * guard themselves.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { Duplex } from "node:stream";
import type { WebSocket } from "ws";
import { WebSocketServer } from "ws";
import type { Logger } from "../messaging/base/logger.js";
import type { HttpRoutes } from "../messaging/channel/ops-port.js";
import type { WebChatLimits } from "./limits.js";
import { DEFAULT_WEBCHAT_LIMITS } from "./limits.js";
import type { ClientFrame, FrameRefusal, ServerFrame } from "./protocol.js";
import { CONVERSATION_ID, MAX_FRAME_BYTES, parseClientFrame } from "./protocol.js";

export interface Connection {
  readonly conversationId: string;
  /** Who the socket authenticated as: the token holder. */
  readonly principal: string;
  send(frame: ServerFrame): void;
}

export interface WebChatServerOptions {
  host: string;
  port: number;
  token: string;
  logger: Logger;
  /** The page for one response; the argument is that response's script nonce. */
  page: (nonce: string) => string;
  /** A page connected; the promise (if any) settles once it was sent its snapshot. */
  onConnect: (conn: Connection) => void | Promise<void>;
  onFrame: (conn: Connection, frame: ClientFrame) => void;
  /**
   * A frame that was refused: malformed, an upload over the limits, or (kind "frame_too_large") a
   * frame over maxPayload, after which ws has already closed the socket and `conn.send` is a no-op.
   */
  onBadFrame: (conn: Connection, refusal: FrameRefusal) => void;
  /** Bound on one client frame (default MAX_FRAME_BYTES); larger frames close the socket (ws enforces it). */
  maxPayloadBytes?: number;
  limits?: Partial<WebChatLimits>;
  /** A refused request, upgrade or frame, for the drop count and the audit (reason code and non-secret detail only). */
  onRefused?: (reason: string, detail: Record<string, string | number>) => void;
  /** Time for the frame rate limit (default Date.now). */
  now?: () => number;
  /** The gateway's routes (health, metrics), answered before the token check; they guard themselves. */
  routes?: HttpRoutes;
}

/** The cookie a page authenticated by its address gets, so the token can leave the address bar. */
export const SESSION_COOKIE = "parley_session";

export const RATE_LIMITED = "Slow down: too many messages at once. Wait a moment and send again.";

export const OWNER_PRINCIPAL = "owner";

function tokenMatches(expected: string, presented: string | null): boolean {
  if (!presented) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

function cookieToken(req: IncomingMessage): string | null {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === SESSION_COOKIE) return value.join("=");
  }
  return null;
}

export class WebChatServer {
  private server: Server | undefined;
  private readonly wss: WebSocketServer;
  private readonly sockets = new Map<string, Set<WebSocket>>();
  private readonly limits: WebChatLimits;
  private readonly now: () => number;
  private open = 0;

  constructor(private readonly o: WebChatServerOptions) {
    this.wss = new WebSocketServer({ noServer: true, maxPayload: o.maxPayloadBytes ?? MAX_FRAME_BYTES });
    this.limits = { ...DEFAULT_WEBCHAT_LIMITS, ...o.limits };
    this.now = o.now ?? Date.now;
  }

  private authorized(req: IncomingMessage, url: URL): boolean {
    return (
      tokenMatches(this.o.token, url.searchParams.get("token")) ||
      tokenMatches(this.o.token, cookieToken(req))
    );
  }

  private refuse(
    socket: Duplex,
    status: string,
    reason: string,
    detail: Record<string, string | number> = {},
  ): void {
    this.o.onRefused?.(reason, detail);
    socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  }

  async start(): Promise<number> {
    const server = createServer((req, res) => this.onRequest(req, res));
    server.on("upgrade", (req, socket, head) => this.onUpgrade(req, socket, head));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.o.port, this.o.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    const address = server.address();
    return typeof address === "object" && address ? address.port : this.o.port;
  }

  private url(req: IncomingMessage): URL {
    return new URL(req.url ?? "/", "http://localhost");
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    if (this.o.routes?.(req, res)) return;
    const url = this.url(req);
    const headers = {
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    };
    // The browser asks for it on every load: a 401 there is only a console error, and it holds nothing.
    if (req.method === "GET" && url.pathname === "/favicon.ico") {
      res.writeHead(204, headers).end();
      return;
    }
    if (!this.authorized(req, url)) {
      this.o.onRefused?.("bad_token", { request: "page" });
      res
        .writeHead(401, { ...headers, "content-type": "text/plain; charset=utf-8" })
        .end("401: missing or wrong token\n");
      return;
    }
    if (req.method !== "GET" || url.pathname !== "/") {
      res.writeHead(404, { ...headers, "content-type": "text/plain; charset=utf-8" }).end("not found\n");
      return;
    }
    const nonce = randomBytes(16).toString("base64");
    res
      .writeHead(200, {
        ...headers,
        "content-type": "text/html; charset=utf-8",
        // Only the page's own nonce-bearing script runs: no inline handlers, no remote loads.
        "content-security-policy": `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'`,
        // The page drops the token from its address; reloads and its socket authenticate with this.
        "set-cookie": `${SESSION_COOKIE}=${this.o.token}; HttpOnly; SameSite=Strict; Path=/`,
      })
      .end(this.o.page(nonce));
  }

  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = this.url(req);
    const conversationId = url.searchParams.get("c") ?? "";
    if (url.pathname !== "/ws" || !this.authorized(req, url))
      return void this.refuse(socket, "401 Unauthorized", "bad_token");
    // A browser always names the page a socket comes from: another site's page (or a sandboxed
    // "null" one) must not drive the agent with the operator's cookie. A client that is not a
    // browser sends no Origin and has only its token.
    const origin = req.headers.origin;
    if (origin !== undefined) {
      const own = `http://${req.headers.host ?? ""}`;
      const ownTls = `https://${req.headers.host ?? ""}`;
      if (origin !== own && origin !== ownTls && !this.limits.allowedOrigins.includes(origin))
        return void this.refuse(socket, "403 Forbidden", "foreign_origin", { origin: origin.slice(0, 100) });
    }
    if (!CONVERSATION_ID.test(conversationId))
      return void this.refuse(socket, "400 Bad Request", "bad_conversation");
    if (this.open >= this.limits.maxSockets)
      return void this.refuse(socket, "503 Service Unavailable", "too_many_sockets", { open: this.open });
    if ((this.sockets.get(conversationId)?.size ?? 0) >= this.limits.maxSocketsPerConversation)
      return void this.refuse(socket, "429 Too Many Requests", "too_many_conversation_sockets", {
        conversation: conversationId,
      });
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onSocket(ws, conversationId));
  }

  private onSocket(ws: WebSocket, conversationId: string): void {
    let set = this.sockets.get(conversationId);
    if (!set) {
      set = new Set();
      this.sockets.set(conversationId, set);
    }
    set.add(ws);
    this.open += 1;
    const bucket = { tokens: this.limits.frameBurst, at: this.now() };
    const conn: Connection = {
      conversationId,
      principal: OWNER_PRINCIPAL,
      send: (frame) => {
        if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame));
      },
    };
    ws.on("close", () => {
      set?.delete(ws);
      if (set?.size === 0) this.sockets.delete(conversationId);
      this.open -= 1;
    });
    ws.on("error", (error: Error & { code?: string }) => {
      this.o.logger.warn("webchat socket error", { error: String(error) });
      // ws closes with 1009 on its own; the drop is still recorded like any refused frame.
      if (error.code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH")
        this.o.onBadFrame(conn, { kind: "frame_too_large", reason: "the message is too large to receive" });
    });
    ws.on("message", (data) => {
      // A token bucket per socket: a burst is fine, a flood is answered and dropped, not processed.
      const now = this.now();
      bucket.tokens = Math.min(
        this.limits.frameBurst,
        bucket.tokens + ((now - bucket.at) / 1000) * this.limits.framesPerSecond,
      );
      bucket.at = now;
      if (bucket.tokens < 1) {
        this.o.onRefused?.("rate_limited", { conversation: conversationId });
        conn.send({ type: "error", message: RATE_LIMITED });
        return;
      }
      bucket.tokens -= 1;
      const parsed = parseClientFrame(String(data));
      if ("refusal" in parsed) this.o.onBadFrame(conn, parsed.refusal);
      else this.o.onFrame(conn, parsed.frame);
    });
    Promise.resolve(this.o.onConnect(conn)).catch((error: unknown) => {
      this.o.logger.error("webchat: greeting a page failed", { error: String(error) });
      conn.send({ type: "error", message: "Could not load this conversation; reload the page." });
    });
  }

  /** Send a frame to every open page of a conversation. */
  broadcast(conversationId: string, frame: ServerFrame): void {
    const payload = JSON.stringify(frame);
    for (const ws of this.sockets.get(conversationId) ?? []) if (ws.readyState === ws.OPEN) ws.send(payload);
  }

  hasConversation(conversationId: string): boolean {
    return (this.sockets.get(conversationId)?.size ?? 0) > 0;
  }

  async stop(): Promise<void> {
    for (const set of this.sockets.values()) for (const ws of set) ws.close(1001, "server shutting down");
    this.wss.close();
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}
