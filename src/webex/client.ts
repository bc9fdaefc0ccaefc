/**
 * Webex's network edge, plain REST over fetch and the device websocket over ws (the issue's
 * decision: the official SDK pulls browser meeting/media plugins and hides the frame acks and the
 * cluster routing parley depends on; parley needs about eight REST calls). Every token-bearing
 * request is checked against TokenHosts first; redirects are refused (a 3xx could carry the token's
 * request elsewhere); a 429 is waited out per its Retry-After (bounded). Inbound: U2C host map ->
 * WDM device registration -> websocket authorized with the token; each frame handed up is acked by
 * the caller once handled; the device is deleted on close. The host map is kept: it is how a
 * conversation's URL names the cluster its Hydra ids are encoded with.
 */
import { randomUUID } from "node:crypto";
import WebSocket from "ws";
import { z } from "zod";
import type { Clock } from "../messaging/base/clock.js";
import { realClock, sleep } from "../messaging/base/clock.js";
import { ParleyError } from "../messaging/base/errors.js";
import type { Logger } from "../messaging/base/logger.js";
import { ReconnectGuard } from "../messaging/base/reconnect-guard.js";
import type { WebexEgress } from "./egress.js";
import type { TokenHosts } from "./hosts.js";
import type { WebexAction, WebexCatalog, WebexFrame, WebexMessage } from "./wire.js";
import {
  actionSchema,
  catalogSchema,
  clusterIdOf,
  deviceSchema,
  frameSchema,
  hydraCluster,
  messageSchema,
  personSchema,
  roomSchema,
} from "./wire.js";

/**
 * A call's outcome. A refusal carries Webex's own words and its tracking id (what an administrator
 * quotes to Cisco); a 403 on a send or an edit is the organization's policy (compliance, DLP)
 * refusing it, which no retry would change.
 */
export type WebexResult<T> =
  | { ok: true; data: T }
  | { ok: false; status: number; message: string; trackingId?: string };

/** Webex's error body: `{ message, errors: [{ description }], trackingId }`. */
const errorBodySchema = z.object({ message: z.string().optional(), trackingId: z.string().optional() });

export function readError(
  status: number,
  text: string,
): { ok: false; status: number; message: string; trackingId?: string } {
  let parsed: z.infer<typeof errorBodySchema> = {};
  try {
    const r = errorBodySchema.safeParse(JSON.parse(text));
    if (r.success) parsed = r.data;
  } catch {
    // Not JSON (a proxy's page, a gateway error): the text itself, bounded, is the message.
  }
  return {
    ok: false,
    status,
    message: (parsed.message ?? text).slice(0, 200),
    ...(parsed.trackingId ? { trackingId: parsed.trackingId.slice(0, 100) } : {}),
  };
}

export interface WebexClientOptions {
  token: string;
  apiUrl: string;
  u2cUrl: string;
  /** Empty: discover through the catalog. */
  wdmUrl: string;
  hosts: TokenHosts;
  /** The route out (HTTPS_PROXY honoured); checked after `hosts`, never instead of it. */
  egress: WebexEgress;
  logger: Logger;
  clock?: Clock;
  onFrame: (frame: WebexFrame) => void;
  /** A frame that is not JSON or not a frame: counted and audited by the caller, never silent. */
  onUnreadable: (shape: string) => void;
  /** 429 retries per call before giving up. */
  maxRetries?: number;
  /** A connection that lived shorter than this counts as unhealthy: the backoff grows. */
  minHealthyMs?: number;
  requestTimeoutMs?: number;
  /** Told when the device socket opens (true) and when it closes unasked (false). */
  onState?: (connected: boolean) => void;
}

/** Retry-After is seconds; a missing or silly value waits one second, a huge one is capped. */
const MAX_RETRY_AFTER_MS = 60_000;
/** The reconnect curve: doubling from 1 s, never longer than a minute between attempts. */
const BACKOFF_START_MS = 1000;
const BACKOFF_MAX_MS = 60_000;

export class WebexClient {
  private ws: WebSocket | null = null;
  private deviceUrl: string | null = null;
  private closing = false;
  private readonly guard: ReconnectGuard;
  private reconnectTimer: unknown = null;
  readonly clock: Clock;
  /** What doctor and the log show: the WDM host used and whether it was pinned. */
  wdmHost = "";
  wdmPinned = false;
  botId = "";
  botEmails: string[] = [];
  /** The bot's display name: how its mention starts a message in a space. */
  botName = "";
  /** The U2C host map read at the last (re)connect: each conversation URL's cluster. */
  private catalog: WebexCatalog | null = null;

  constructor(private readonly o: WebexClientOptions) {
    this.clock = o.clock ?? realClock;
    this.guard = new ReconnectGuard({
      clock: this.clock,
      minHealthyMs: o.minHealthyMs ?? 30_000,
      baseMs: BACKOFF_START_MS,
      maxMs: BACKOFF_MAX_MS,
    });
  }

  // ── REST ─────────────────────────────────────────────────────────────────────────────────────

  async request<T>(
    method: string,
    url: string,
    parse: (v: unknown) => T,
    body?: unknown,
  ): Promise<WebexResult<T>> {
    if (!this.o.hosts.allows(url)) {
      // Never sent: the token would leave the allowed hosts.
      this.o.logger.error("webex: refused to send the token to a host outside the allowed ones", {
        host: safeHost(url),
      });
      return { ok: false, status: 0, message: "host not allowed" };
    }
    for (let attempt = 0; ; attempt++) {
      const res = await fetch(url, {
        method,
        redirect: "manual",
        signal: AbortSignal.timeout(this.o.requestTimeoutMs ?? 30_000),
        headers: {
          authorization: `Bearer ${this.o.token}`,
          // A form sets its own multipart boundary.
          ...(body === undefined || body instanceof FormData ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: body instanceof FormData ? body : JSON.stringify(body) }),
        ...this.route(url),
      } as RequestInit).catch((error: unknown) => ({ error }));
      if ("error" in res) return { ok: false, status: 0, message: String(res.error) };
      if (res.status === 429 && attempt < (this.o.maxRetries ?? 3)) {
        await res.body?.cancel();
        await sleep(this.clock, retryAfterMs(res.headers.get("retry-after")));
        continue;
      }
      if (!res.ok) return readError(res.status, await res.text().catch(() => ""));
      const json = res.status === 204 ? {} : await res.json().catch(() => ({}));
      try {
        return { ok: true, data: parse(json) };
      } catch (error) {
        return { ok: false, status: res.status, message: `unexpected response: ${String(error)}` };
      }
    }
  }

  /** fetch's dispatcher for this URL when it is not the default (a proxy, a test's CA). */
  private route(url: string): { dispatcher?: unknown } {
    const dispatcher = this.o.egress.dispatcher(url);
    return dispatcher ? { dispatcher } : {};
  }

  private api(path: string): string {
    return `${this.o.apiUrl}${path}`;
  }

  me() {
    return this.request("GET", this.api("/people/me"), (v) => personSchema.parse(v));
  }

  createMessage(body: { roomId: string; markdown: string; attachments?: unknown[] }) {
    return this.request("POST", this.api("/messages"), (v) => messageSchema.parse(v), body);
  }

  /** One file per message (Webex's rule), with an optional caption. */
  uploadMessage(roomId: string, file: { name: string; mime: string; bytes: Uint8Array }, markdown: string) {
    const form = new FormData();
    form.set("roomId", roomId);
    if (markdown) form.set("markdown", markdown);
    form.set("files", new Blob([file.bytes], { type: file.mime }), file.name);
    return this.request("POST", this.api("/messages"), (v) => messageSchema.parse(v), form);
  }

  editMessage(messageId: string, body: { roomId: string; markdown: string }) {
    return this.request(
      "PUT",
      this.api(`/messages/${encodeURIComponent(messageId)}`),
      (v) => messageSchema.parse(v),
      body,
    );
  }

  getMessage(messageId: string): Promise<WebexResult<WebexMessage>> {
    return this.request("GET", this.api(`/messages/${encodeURIComponent(messageId)}`), (v) =>
      messageSchema.parse(v),
    );
  }

  getRoom(roomId: string) {
    return this.request("GET", this.api(`/rooms/${encodeURIComponent(roomId)}`), (v) => roomSchema.parse(v));
  }

  getAction(actionId: string): Promise<WebexResult<WebexAction>> {
    return this.request("GET", this.api(`/attachment/actions/${encodeURIComponent(actionId)}`), (v) =>
      actionSchema.parse(v),
    );
  }

  /** HEAD a file (name, type, size, scan state): the token goes only where TokenHosts allows. */
  async head(url: string): Promise<{ status: number; headers: Headers | null }> {
    if (!this.o.hosts.allows(url)) return { status: 0, headers: null };
    const res = await fetch(url, {
      method: "HEAD",
      redirect: "manual",
      signal: AbortSignal.timeout(this.o.requestTimeoutMs ?? 30_000),
      headers: { authorization: `Bearer ${this.o.token}` },
      ...this.route(url),
    } as RequestInit).catch(() => null);
    return res ? { status: res.status, headers: res.headers } : { status: 0, headers: null };
  }

  /** The token as a download header, for a URL the caller admitted (files.ts). */
  authHeader(): Record<string, string> {
    return { authorization: `Bearer ${this.o.token}` };
  }

  // ── the device websocket ─────────────────────────────────────────────────────────────────────

  /** Who we are, then the catalog, the device and the socket; resolves once the socket is open. */
  async connect(): Promise<void> {
    const me = await this.me();
    if (!me.ok) throw new ParleyError("CONFIG_INVALID", `webex: the token was refused (${me.status})`);
    this.botId = me.data.id;
    this.botEmails = me.data.emails.map((e) => e.toLowerCase());
    this.botName = me.data.displayName ?? "";
    await this.open();
  }

  /**
   * The U2C catalog as the SDK asks for it (`/catalog?format=hostmap`, webex-core services
   * `_fetchNewServiceHostmap`): its service links name the WDM service and its host map names each
   * host's cluster. Read even when WDM is pinned: without it no conversation's cluster is known.
   */
  private async readCatalog(): Promise<WebexCatalog> {
    const got = await this.request("GET", `${this.o.u2cUrl}/catalog?format=hostmap`, (v) =>
      catalogSchema.parse(v),
    );
    if (!got.ok)
      throw new ParleyError(
        "CONFIG_INVALID",
        `webex: the U2C catalog could not be read (${got.status}: ${got.message}); it names each conversation's cluster`,
      );
    return got.data;
  }

  private wdm(catalog: WebexCatalog): string {
    if (this.o.wdmUrl) {
      this.wdmPinned = true;
      return this.o.wdmUrl;
    }
    const wdm = catalog.serviceLinks.wdm;
    if (!wdm) throw new ParleyError("CONFIG_INVALID", "webex: the U2C catalog names no WDM service");
    // The catalog is data from the network: its host passes the same check as any other.
    if (!this.o.hosts.allows(wdm))
      throw new ParleyError("CONFIG_INVALID", "webex: the catalog's WDM host is not allowed");
    return wdm.replace(/\/+$/, "");
  }

  /**
   * The Hydra cluster segment of a conversation URL (`us` for the original US cluster), found the way
   * the SDK's getHydraClusterString does: the host map's cluster id of the URL's host, cut to its first
   * three parts. Undefined when the host map does not know the host.
   */
  clusterOf(conversationUrl: string): string | undefined {
    const id = this.catalog ? clusterIdOf(this.catalog, conversationUrl) : undefined;
    return id === undefined ? undefined : hydraCluster(id);
  }

  private async open(): Promise<void> {
    // A reconnect registers afresh: the previous device is deleted, not left behind per drop.
    await this.deleteDevice();
    this.catalog = await this.readCatalog();
    const wdm = this.wdm(this.catalog);
    this.wdmHost = safeHost(wdm);
    const device = await this.request("POST", `${wdm}/devices`, (v) => deviceSchema.parse(v), {
      deviceName: "parley",
      deviceType: "DESKTOP",
      localizedModel: "nodeJS",
      model: "nodeJS",
      name: "parley",
      systemName: "parley",
      systemVersion: "1",
    });
    if (!device.ok)
      throw new ParleyError("CONFIG_INVALID", `webex: device registration failed (${device.status})`);
    this.deviceUrl = device.data.url;
    const wsUrl = device.data.webSocketUrl;
    const httpForm = wsUrl.replace(/^ws/, "http");
    if (!this.o.hosts.allows(httpForm))
      throw new ParleyError("CONFIG_INVALID", "webex: the socket host is not allowed");
    // Closed while registering (a shutdown racing a reconnect): no socket is opened after close().
    if (this.closing) return this.deleteDevice();
    const ws = new WebSocket(wsUrl, {
      followRedirects: false,
      maxPayload: 1024 * 1024,
      ...this.o.egress.socketOptions(wsUrl),
    });
    this.ws = ws;
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => {
        ws.send(
          JSON.stringify({
            id: randomUUID(),
            type: "authorization",
            data: { token: `Bearer ${this.o.token}` },
          }),
        );
        resolve();
      });
      ws.once("error", reject);
    });
    this.guard.opened();
    this.o.onState?.(true);
    // A socket error is followed by its close, which reconnects; logged so it is never silent.
    ws.on("error", (error) => this.o.logger.warn("webex: device socket error", { error: String(error) }));
    ws.on("message", (data) => this.onMessage(String(data)));
    ws.on("close", () => {
      if (this.ws === ws) this.ws = null;
      if (this.closing) return;
      this.guard.closed();
      this.o.onState?.(false);
      this.scheduleReconnect();
    });
  }

  /**
   * The next attempt after the guard's delay: a connection that closed soon after opening, or an
   * attempt that failed outright, doubles the wait (capped), so an accept-then-close peer or a WDM
   * outage is never hammered; a connection that lived past minHealthyMs reconnects at once.
   */
  private scheduleReconnect(): void {
    if (this.closing || this.reconnectTimer !== null) return;
    const delay = this.guard.delayMs();
    this.o.logger.warn("webex: device socket closed; reconnecting", { inMs: delay });
    this.reconnectTimer = this.clock.setTimeout(() => {
      this.reconnectTimer = null;
      if (this.closing) return;
      this.open().catch((error: unknown) => {
        this.o.logger.error("webex: reconnect failed", { error: String(error) });
        // A failed attempt counts as an unhealthy connection: the curve grows and another is armed.
        this.guard.closed();
        this.scheduleReconnect();
      });
    }, delay);
  }

  private onMessage(raw: string): void {
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      this.o.onUnreadable("not_json");
      return;
    }
    const frame = frameSchema.safeParse(json);
    if (frame.success) this.o.onFrame(frame.data);
    else this.o.onUnreadable(shapeOf(json));
  }

  /** Tell the socket a frame was handled: unacked frames are delivered again. */
  ack(frameId: string): void {
    this.ws?.send(JSON.stringify({ type: "ack", messageId: frameId }));
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.reconnectTimer !== null) this.clock.clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const ws = this.ws;
    this.ws = null;
    if (ws && ws.readyState !== WebSocket.CLOSED) {
      await new Promise<void>((resolve) => {
        ws.once("close", () => resolve());
        ws.close();
      });
    }
    await this.deleteDevice();
  }

  /** The registration is per connection: left behind, Webex would keep a dead device per restart. */
  private async deleteDevice(): Promise<void> {
    const url = this.deviceUrl;
    if (!url) return;
    this.deviceUrl = null;
    const res = await this.request("DELETE", url, () => null);
    if (!res.ok) this.o.logger.warn("webex: deleting the device failed", { status: res.status });
  }
}

export function retryAfterMs(header: string | null): number {
  const seconds = Number(header);
  if (!Number.isFinite(seconds) || seconds < 0) return 1000;
  return Math.min(seconds * 1000, MAX_RETRY_AFTER_MS);
}

/** What an unreadable frame looked like, for the drop count: its type or its top-level keys, no values. */
function shapeOf(json: unknown): string {
  if (json === null || typeof json !== "object") return typeof json;
  const type = (json as { type?: unknown }).type;
  if (typeof type === "string") return `type:${type.slice(0, 40)}`;
  return `keys:${Object.keys(json).sort().join(",").slice(0, 80)}`;
}

/** A URL's host only: log lines never carry a path (ids) or a query. */
export function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "(bad url)";
  }
}
