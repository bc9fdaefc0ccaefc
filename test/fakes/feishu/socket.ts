/**
 * The fake's long connection, at the wire: the WebSocket the SDK's WSClient opens at the URL endpoint
 * discovery handed it (a one-time ticket in the query), speaking the SDK's protobuf frames. Pings
 * (control frames carrying the service id) are answered with a pong carrying the client config;
 * events go out as data frames with `type`/`message_id`/`sum`/`seq`/`trace_id` headers, the JSON
 * payload fragmented across `sum` frames when asked; an event counts as delivered only when the
 * client's response frame (same `message_id`, payload `{"code":200}`) comes back, and is sent
 * again (a fresh frame id, as a new delivery) after a timeout or on the next connection otherwise.
 * A connection gets events once it has sent its first frame (the SDK pings as soon as it opens, and
 * attaches its reader a moment later: anything sent before that would be lost in the client).
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import { decodeFrame, encodeFrame, type Frame, headerOf, METHOD_CONTROL, METHOD_DATA } from "./frames.js";

export interface ClientConfig {
  PingInterval: number;
  ReconnectCount: number;
  ReconnectInterval: number;
  ReconnectNonce: number;
}

export interface SocketOptions {
  serviceId: number;
  clientConfig: ClientConfig;
  /** Split an event's payload into frames of at most this many bytes (0: one frame). */
  fragmentBytes: number;
  /** Sent again when no response frame came back within this. */
  ackTimeoutMs: number;
  /** Deliveries of one event before the fake gives up on it. */
  maxDeliveries: number;
  onActivity: () => void;
}

export interface PendingEvent {
  key: string;
  payload: Uint8Array;
  deliveries: number;
  acked: boolean;
  /** Frame ids (message_id headers) this event went out under. */
  frameIds: Set<string>;
  timer?: ReturnType<typeof setTimeout>;
}

export interface Ack {
  frameId: string;
  event: string;
  code: number;
  /** Response headers the SDK adds (biz_rt), kept for assertions. */
  headers: Record<string, string>;
}

export class LongConnection {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 1 << 20 });
  private readonly tickets = new Set<string>();
  readonly sockets = new Set<WebSocket>();
  /** Connections that have pinged: the ones events go to. */
  readonly ready = new Set<WebSocket>();
  readonly events = new Map<string, PendingEvent>();
  readonly acks: Ack[] = [];
  readonly pings: number[] = [];
  /** Frames that did not decode or carried the wrong service id. */
  readonly badFrames: string[] = [];
  connections = 0;
  private lostAcks = 0;
  private seq = 1;
  private nextFrame = 1;

  constructor(private readonly o: SocketOptions) {}

  /** A ticket for one connection, embedded in the URL endpoint discovery answers. */
  issueTicket(): string {
    const ticket = randomBytes(12).toString("hex");
    this.tickets.add(ticket);
    return ticket;
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? "/", "http://fake");
    const ticket = url.searchParams.get("ticket") ?? "";
    if (url.pathname !== "/ws/v2" || !this.tickets.delete(ticket)) {
      socket.end("HTTP/1.1 403 Forbidden\r\n\r\n");
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws));
  }

  /** The next `n` response frames are lost on the way (the platform never hears them). */
  loseAcks(n: number): void {
    this.lostAcks += n;
  }

  /** Queue an event; sent now on the newest connection, or when one opens. */
  deliver(key: string, json: unknown): PendingEvent {
    const event: PendingEvent = {
      key,
      payload: new TextEncoder().encode(JSON.stringify(json)),
      deliveries: 0,
      acked: false,
      frameIds: new Set(),
    };
    this.events.set(key, event);
    this.send(event);
    return event;
  }

  /** Cut every connection (the client is expected to reconnect through endpoint discovery). */
  dropAll(): void {
    for (const ws of this.sockets) ws.terminate();
  }

  close(): void {
    for (const event of this.events.values()) clearTimeout(event.timer);
    for (const ws of this.sockets) ws.terminate();
    this.wss.close();
  }

  private accept(ws: WebSocket): void {
    this.connections += 1;
    this.sockets.add(ws);
    ws.on("message", (data: Buffer) => this.onFrame(ws, data));
    const gone = () => {
      this.sockets.delete(ws);
      this.ready.delete(ws);
    };
    ws.on("close", gone);
    ws.on("error", gone);
  }

  private newest(): WebSocket | undefined {
    return [...this.ready].at(-1);
  }

  private send(event: PendingEvent): void {
    clearTimeout(event.timer);
    const ws = this.newest();
    if (!ws || event.acked || event.deliveries >= this.o.maxDeliveries) return;
    event.deliveries += 1;
    const frameId = `frame-${this.nextFrame++}`;
    event.frameIds.add(frameId);
    const size = this.o.fragmentBytes > 0 ? this.o.fragmentBytes : event.payload.length;
    const parts: Uint8Array[] = [];
    for (let i = 0; i < event.payload.length; i += size) parts.push(event.payload.subarray(i, i + size));
    parts.forEach((payload, seq) => {
      const frame: Frame = {
        SeqID: this.seq++,
        LogID: this.seq,
        service: this.o.serviceId,
        method: METHOD_DATA,
        headers: [
          { key: "type", value: "event" },
          { key: "message_id", value: frameId },
          { key: "sum", value: String(parts.length) },
          { key: "seq", value: String(seq) },
          { key: "trace_id", value: `trace-${frameId}` },
        ],
        payload,
      };
      ws.send(encodeFrame(frame));
    });
    event.timer = setTimeout(() => this.send(event), this.o.ackTimeoutMs);
    event.timer.unref();
  }

  private onFrame(ws: WebSocket, data: Buffer): void {
    this.o.onActivity();
    if (!this.ready.has(ws)) {
      this.ready.add(ws);
      // What was not acknowledged on an earlier connection comes again on this one.
      for (const event of this.events.values()) if (!event.acked) this.send(event);
    }
    let frame: Frame;
    try {
      frame = decodeFrame(data);
    } catch (error) {
      this.badFrames.push(`undecodable: ${String(error)}`);
      return;
    }
    if (frame.service !== this.o.serviceId) {
      this.badFrames.push(`service ${frame.service}`);
      return;
    }
    const type = headerOf(frame, "type");
    if (frame.method === METHOD_CONTROL && type === "ping") {
      this.pings.push(Date.now());
      const pong: Frame = {
        SeqID: 0,
        LogID: 0,
        service: this.o.serviceId,
        method: METHOD_CONTROL,
        headers: [{ key: "type", value: "pong" }],
        payload: new TextEncoder().encode(JSON.stringify(this.o.clientConfig)),
      };
      ws.send(encodeFrame(pong));
      return;
    }
    if (frame.method !== METHOD_DATA) return;
    const frameId = headerOf(frame, "message_id") ?? "";
    const event = [...this.events.values()].find((e) => e.frameIds.has(frameId));
    let code = 0;
    try {
      code = Number((JSON.parse(new TextDecoder().decode(frame.payload)) as { code?: unknown }).code);
    } catch {
      this.badFrames.push(`unreadable response to ${frameId}`);
      return;
    }
    const headers = Object.fromEntries(frame.headers.map((h) => [h.key, h.value]));
    if (this.lostAcks > 0) {
      this.lostAcks -= 1;
      return;
    }
    this.acks.push({ frameId, event: event?.key ?? "", code, headers });
    if (event && code === 200) {
      event.acked = true;
      clearTimeout(event.timer);
    }
  }
}
