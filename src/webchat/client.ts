/**
 * The web chat's network edge: one node:http server serving the page, and WebSocket upgrades through
 * `ws`. Every request needs the per-start token; a wrong token gets 401 and never a WebSocket.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { Duplex } from "node:stream";
import type { WebSocket } from "ws";
import { WebSocketServer } from "ws";
import type { Logger } from "../messaging/base/logger.js";
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
}

export const OWNER_PRINCIPAL = "owner";

function tokenMatches(expected: string, presented: string | null): boolean {
  if (!presented) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

export class WebChatServer {
  private server: Server | undefined;
  private readonly wss: WebSocketServer;
  private readonly sockets = new Map<string, Set<WebSocket>>();

  constructor(private readonly o: WebChatServerOptions) {
    this.wss = new WebSocketServer({ noServer: true, maxPayload: o.maxPayloadBytes ?? MAX_FRAME_BYTES });
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
    const url = this.url(req);
    const headers = {
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    };
    if (!tokenMatches(this.o.token, url.searchParams.get("token"))) {
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
      })
      .end(this.o.page(nonce));
  }

  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = this.url(req);
    const conversationId = url.searchParams.get("c") ?? "";
    if (url.pathname !== "/ws" || !tokenMatches(this.o.token, url.searchParams.get("token"))) {
      socket.end("HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    if (!CONVERSATION_ID.test(conversationId)) {
      socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onSocket(ws, conversationId));
  }

  private onSocket(ws: WebSocket, conversationId: string): void {
    let set = this.sockets.get(conversationId);
    if (!set) {
      set = new Set();
      this.sockets.set(conversationId, set);
    }
    set.add(ws);
    const conn: Connection = {
      conversationId,
      principal: OWNER_PRINCIPAL,
      send: (frame) => {
        if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame));
      },
    };
    ws.on("close", () => set?.delete(ws));
    ws.on("error", (error: Error & { code?: string }) => {
      this.o.logger.warn("webchat socket error", { error: String(error) });
      // ws closes with 1009 on its own; the drop is still recorded like any refused frame.
      if (error.code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH")
        this.o.onBadFrame(conn, { kind: "frame_too_large", reason: "the message is too large to receive" });
    });
    ws.on("message", (data) => {
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
    return this.sockets.has(conversationId);
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
