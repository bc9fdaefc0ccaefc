/**
 * The long connection: the SDK's WSClient (endpoint discovery at `feishu.domain`, then its protobuf
 * frames over a WebSocket, pings, fragment reassembly, acknowledgements, its own reconnect loop) with
 * an EventDispatcher for `im.message.receive_v1`. The SDK acknowledges an event when our handler
 * returns, and answers "failed" (so Feishu delivers it again) when it throws; the handler therefore
 * returns once the message is journaled and throws only when it could not be.
 *
 * Two guards the SDK leaves off by default are turned on: a handshake timeout, and a liveness
 * watchdog (no frame within `pingTimeoutSeconds` of a ping: the socket is dropped and reconnected).
 * And where the SDK gives up for good (credentials refused at discovery, or its retry budget spent)
 * this restarts it after a growing pause, so a passing outage never leaves the channel deaf.
 */
import * as lark from "@larksuiteoapi/node-sdk";
import type { Clock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { InboundDrops } from "../messaging/channel/inbound-drops.js";
import { sdkLogger } from "./client.js";

export const MESSAGE_EVENT = "im.message.receive_v1";

export interface FeishuConnectionOptions {
  appId: string;
  appSecret: string;
  origin: string;
  http: lark.HttpInstance;
  logger: Logger;
  clock: Clock;
  /** Resolves once the message is journaled (the SDK then acknowledges); rejects to have it redelivered. */
  onMessage(event: unknown): Promise<void>;
  /** Where an event of a type parley does not serve is counted (the SDK would only log it). */
  drops: InboundDrops;
  pingTimeoutSeconds?: number;
  handshakeTimeoutMs?: number;
  /** First pause before restarting a client that gave up, doubled each time up to `restartMaxMs`. */
  restartFirstMs?: number;
  restartMaxMs?: number;
  /** Told when the long connection is ready or back (true) and when it is lost or gave up (false). */
  onState?: (connected: boolean, reason?: string) => void;
}

export type ConnectionState = "idle" | "connecting" | "connected" | "reconnecting" | "failed";

/**
 * The SDK's dispatcher, counting what it would pass over: an event whose type has no handler is
 * answered as the SDK answers it (acknowledged, so Feishu does not resend it) and recorded as an
 * unknown shape. The type is read where the SDK reads it: `header.event_type` in a v2 envelope
 * (`schema` present), `event.type` in a v1 one (@larksuiteoapi/node-sdk@1.74.0 lib/index.js
 * `RequestHandle.parse`).
 */
export class CountingDispatcher extends lark.EventDispatcher {
  constructor(
    params: ConstructorParameters<typeof lark.EventDispatcher>[0],
    private readonly drops: InboundDrops,
  ) {
    super(params);
  }

  override async invoke(data: unknown, params?: { needCheck?: boolean }): Promise<unknown> {
    const type = eventTypeOf(data);
    if (!this.handles.has(type))
      this.drops.record({ reason: "unknown_shape", shape: `event ${type.slice(0, 80)}` });
    return super.invoke(data, params);
  }
}

function eventTypeOf(data: unknown): string {
  const d = (data ?? {}) as {
    schema?: unknown;
    header?: { event_type?: unknown };
    event?: { type?: unknown };
  };
  const type = "schema" in d ? d.header?.event_type : d.event?.type;
  return typeof type === "string" ? type : "(none)";
}

export class FeishuConnection {
  private readonly ws: lark.WSClient;
  private readonly dispatcher: lark.EventDispatcher;
  private restartTimer: unknown = null;
  private restarts = 0;
  private closed = false;

  constructor(private readonly o: FeishuConnectionOptions) {
    const logger = sdkLogger(o.logger);
    this.dispatcher = new CountingDispatcher(
      { logger, loggerLevel: lark.LoggerLevel.warn },
      o.drops,
    ).register({
      [MESSAGE_EVENT]: async (data: unknown) => {
        await o.onMessage(data);
      },
    });
    this.ws = new lark.WSClient({
      appId: o.appId,
      appSecret: o.appSecret,
      domain: o.origin,
      httpInstance: o.http,
      logger,
      loggerLevel: lark.LoggerLevel.warn,
      autoReconnect: true,
      handshakeTimeoutMs: o.handshakeTimeoutMs ?? 15_000,
      wsConfig: { pingTimeout: o.pingTimeoutSeconds ?? 30 },
      onReady: () => {
        this.restarts = 0;
        o.logger.info("feishu: long connection ready");
        o.onState?.(true);
      },
      onReconnecting: () => {
        o.logger.warn("feishu: long connection lost; reconnecting");
        o.onState?.(false, "long connection lost; reconnecting");
      },
      onReconnected: () => {
        this.restarts = 0;
        o.logger.info("feishu: long connection back");
        o.onState?.(true);
      },
      onError: (error) => this.gaveUp(error),
    });
  }

  start(): void {
    this.closed = false;
    void this.ws.start({ eventDispatcher: this.dispatcher });
  }

  get state(): ConnectionState {
    return this.ws.getConnectionStatus().state;
  }

  /** Stop receiving: no new event is read (what is being journaled still finishes). */
  close(): void {
    this.closed = true;
    this.o.clock.clearTimeout(this.restartTimer);
    this.restartTimer = null;
    this.ws.close({ force: true });
  }

  private gaveUp(error: Error): void {
    if (this.closed) return;
    this.o.onState?.(false, "long connection gave up; restarting");
    const first = this.o.restartFirstMs ?? 5_000;
    const wait = Math.min(this.o.restartMaxMs ?? 5 * 60_000, first * 2 ** this.restarts);
    this.restarts += 1;
    this.o.logger.error(
      `feishu: the long connection gave up (${error.message}); starting it again in ${Math.ceil(wait / 1000)}s`,
    );
    this.restartTimer = this.o.clock.setTimeout(() => {
      this.restartTimer = null;
      if (!this.closed) this.start();
    }, wait);
  }
}
