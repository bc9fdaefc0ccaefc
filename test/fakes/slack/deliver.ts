/**
 * How the fake hands Slack's deliveries to parley, in either mode:
 * - Socket Mode: a WebSocket at /link (the URL apps.connections.open hands out) that says `hello`,
 *   sends each delivery as an envelope, demands an ack per envelope_id, and sends an unacked one
 *   again (retry_attempt + 1) after `ackTimeoutMs`; it can also send `disconnect`.
 * - the Events API: each delivery POSTed to parley's request URL, signed with the signing secret
 *   (v0 HMAC over timestamp and body); an event not answered 200 in time is sent again with
 *   X-Slack-Retry-Num (Slack does not retry presses or commands).
 * Bounded: at most `maxRetries` redeliveries per delivery; everything stops with close().
 */
import { createHmac } from "node:crypto";
import type { Server } from "node:http";
import type { WebSocket } from "ws";
import { WebSocketServer } from "ws";
import type { FakeSlack, Json } from "./server.js";

export type DeliveryKind = "events_api" | "interactive" | "slash_commands";

export interface Delivery {
  id: string;
  kind: DeliveryKind;
  payload: Json;
  /** How many times it was sent. */
  attempts: number;
  acked: boolean;
  /** HTTP mode: the status of each attempt (0 = no answer in time). */
  statuses: number[];
}

export class SlackDelivery {
  mode: "socket" | "http" = "socket";
  /** HTTP mode: parley's request URL. */
  target = "";
  ackTimeoutMs = 3_000;
  maxRetries = 3;
  /** Called for each new socket after its hello; `close` ends it at once (an accept-then-close peer). */
  onConnect: ((close: () => void) => void) | undefined;
  /** Called as each acknowledgement arrives (before the delivery counts as acked). */
  onAck: ((d: Delivery) => void) | undefined;
  /** Socket connections opened so far (a reconnect opens another). */
  connections = 0;
  readonly all: Delivery[] = [];
  private readonly sockets = new Set<WebSocket>();
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly waiting: Delivery[] = [];
  private seq = 0;
  private closed = false;

  constructor(
    private readonly fake: FakeSlack,
    server: Server,
  ) {
    server.on("upgrade", (req, socket, head) => {
      if (!req.url?.startsWith("/link")) return void socket.destroy();
      this.wss.handleUpgrade(req, socket, head, (ws) => this.onSocket(ws));
    });
  }

  socketUrl(): string {
    return `${this.fake.origin.replace("http", "ws")}/link?ticket=t${++this.seq}`;
  }

  get openSockets(): number {
    return this.sockets.size;
  }

  event(event: Json): Delivery {
    const eventId = `Ev${String(++this.seq).padStart(8, "0")}`;
    return this.send("events_api", {
      token: "verification-token",
      team_id: this.fake.teamId,
      api_app_id: "AFAKE00001",
      event,
      type: "event_callback",
      event_id: eventId,
      event_time: Math.floor(Date.now() / 1000),
    });
  }

  interactive(payload: Json): Delivery {
    return this.send("interactive", payload);
  }

  command(payload: Json): Delivery {
    return this.send("slash_commands", payload);
  }

  /** Send `d` again now, as Slack does when it did not see the acknowledgement. */
  redeliver(d: Delivery): void {
    this.attempt(d);
  }

  /** Slack recycles the connection: `disconnect` on every open socket. */
  disconnect(reason = "refresh_requested"): void {
    for (const ws of this.sockets) ws.send(JSON.stringify({ type: "disconnect", reason }));
  }

  /** Resolves once `d` was acknowledged (bounded). */
  async acked(d: Delivery, timeoutMs = 5_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!d.acked) {
      if (Date.now() > until) throw new Error(`delivery ${d.id} not acknowledged in ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  private send(kind: DeliveryKind, payload: Json): Delivery {
    const d: Delivery = { id: `env-${++this.seq}`, kind, payload, attempts: 0, acked: false, statuses: [] };
    this.all.push(d);
    this.attempt(d);
    return d;
  }

  private attempt(d: Delivery): void {
    if (this.closed) return;
    if (this.mode === "http") return void this.post(d);
    const ws = [...this.sockets][0];
    if (!ws) {
      // No connection: Slack keeps it until one opens.
      this.waiting.push(d);
      return;
    }
    d.attempts += 1;
    ws.send(
      JSON.stringify({
        envelope_id: d.id,
        type: d.kind,
        payload: d.payload,
        accepts_response_payload: d.kind !== "events_api",
        ...(d.kind === "events_api"
          ? { retry_attempt: d.attempts - 1, retry_reason: d.attempts > 1 ? "http_timeout" : "" }
          : {}),
      }),
    );
    this.later(() => {
      if (!d.acked && d.attempts <= this.maxRetries) this.attempt(d);
    });
  }

  private later(fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, this.ackTimeoutMs);
    this.timers.add(t);
  }

  private onSocket(ws: WebSocket): void {
    this.sockets.add(ws);
    this.connections += 1;
    ws.on("close", () => this.sockets.delete(ws));
    ws.on("message", (raw) => {
      let msg: { envelope_id?: string };
      try {
        msg = JSON.parse(String(raw)) as { envelope_id?: string };
      } catch {
        return;
      }
      const d = this.all.find((x) => x.id === msg.envelope_id);
      if (!d) return;
      this.onAck?.(d);
      d.acked = true;
    });
    ws.send(
      JSON.stringify({ type: "hello", num_connections: this.sockets.size, debug_info: { host: "fake" } }),
    );
    let dropped = false;
    this.onConnect?.(() => {
      dropped = true;
      this.sockets.delete(ws);
      ws.close(1001, "going away");
    });
    if (!dropped) for (const d of this.waiting.splice(0)) this.attempt(d);
  }

  // ── the Events API ───────────────────────────────────────────────────────────────────────

  /** The body and content type Slack sends for a delivery. */
  private bodyOf(d: Delivery): { body: string; type: string } {
    if (d.kind === "events_api") return { body: JSON.stringify(d.payload), type: "application/json" };
    const form = new URLSearchParams();
    if (d.kind === "interactive") form.set("payload", JSON.stringify(d.payload));
    else for (const [k, v] of Object.entries(d.payload)) form.set(k, String(v));
    return { body: form.toString(), type: "application/x-www-form-urlencoded" };
  }

  private async post(d: Delivery): Promise<void> {
    d.attempts += 1;
    const { body, type } = this.bodyOf(d);
    const retry: Record<string, string> =
      d.attempts > 1
        ? { "x-slack-retry-num": String(d.attempts - 1), "x-slack-retry-reason": "http_timeout" }
        : {};
    let status = 0;
    try {
      status = await this.signedPost(body, { type, headers: retry, timeoutMs: this.ackTimeoutMs });
    } catch {
      status = 0;
    }
    d.statuses.push(status);
    if (status === 200) {
      this.onAck?.(d);
      d.acked = true;
    } else if (d.kind === "events_api" && d.attempts <= this.maxRetries && !this.closed) this.attempt(d);
  }

  /** POST `body` to parley's request URL, signed (or forged: another secret, an old timestamp). */
  async signedPost(
    body: string,
    o: {
      type?: string;
      headers?: Record<string, string>;
      secret?: string;
      timestampSec?: number;
      timeoutMs?: number;
    } = {},
  ): Promise<number> {
    const ts = String(o.timestampSec ?? Math.floor(Date.now() / 1000));
    const signature = createHmac("sha256", o.secret ?? this.fake.signingSecret)
      .update(`v0:${ts}:${body}`)
      .digest("hex");
    const res = await fetch(this.target, {
      method: "POST",
      headers: {
        "content-type": o.type ?? "application/json",
        "x-slack-request-timestamp": ts,
        "x-slack-signature": `v0=${signature}`,
        ...o.headers,
      },
      body,
      signal: AbortSignal.timeout(o.timeoutMs ?? 5_000),
    });
    await res.body?.cancel();
    return res.status;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const ws of this.sockets) ws.terminate();
    this.wss.close();
  }
}
