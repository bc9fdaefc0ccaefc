/**
 * How Slack's deliveries reach Bolt, in either mode, wrapped for two things Bolt does not do:
 *
 * - Accept before ack. Bolt acknowledges an Events API delivery before any listener runs; parley
 *   acknowledges only once the intake journaled the message. Every event_callback therefore reaches
 *   Bolt with a no-op ack, and the real one travels in the listener's context (HELD_ACK): the intake
 *   calls it after journaling (or after deciding to drop the event), and declines it when the
 *   journal could not take the message, so Slack delivers it again. An event no listener claimed
 *   (Bolt's ignoreSelf, say) is acknowledged when Bolt is done with it. Presses and slash commands
 *   keep Bolt's ack: their listeners call it first, inside Slack's 3 s window.
 * - Socket Mode: @slack/socket-mode's own reconnect waits a fixed interval and forgets every failure
 *   once apps.connections.open answers, so a peer that accepts and then closes at once is dialled
 *   every few seconds forever. Its auto-reconnect is off; the kit's minimum-healthy ReconnectGuard
 *   decides when to dial again. The origin reaches apps.connections.open through the receiver's
 *   `installerOptions.clientOptions` (the only path SocketModeReceiver gives its client's options).
 * - HTTP: parley owns the server (its address, its shutdown) and hands each request to Bolt's
 *   HTTPReceiver, whose signature and timestamp check answers 401 to a forgery or a stale replay;
 *   parley counts and audits every such refusal.
 */
import type { Server } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { App, Logger as BoltLogger, Receiver, ReceiverEvent } from "@slack/bolt";
import { HTTPReceiver, SocketModeReceiver } from "@slack/bolt";
import type { Clock, TimerHandle } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { ReconnectGuardOptions } from "../messaging/base/reconnect-guard.js";
import { ReconnectGuard } from "../messaging/base/reconnect-guard.js";
import type { InboundDrop, InboundDrops } from "../messaging/channel/inbound-drops.js";
import { webClientOptions } from "./client.js";

/** The context key under which an event's real acknowledgement reaches the listener. */
export const HELD_ACK = "parleyHeldAck";

export interface HeldAck {
  /** Acknowledge the delivery now (idempotent). */
  ack(): Promise<void>;
  /** Do not acknowledge: the platform should deliver it again. */
  decline(): void;
}

/** Where Bolt's HTTP receiver answers (the Events API request URL's path). */
export const EVENTS_PATH = "/slack/events";

export interface SlackReceiverOptions {
  mode: "socket" | "http";
  appToken?: string;
  signingSecret?: string;
  /** http mode: `host:port`. */
  listen: string;
  apiUrl: string;
  logger: Logger;
  boltLogger: BoltLogger;
  /** Where a delivery no listener claimed is counted (Bolt's ignoreSelf, a kind parley does not read). */
  drops: InboundDrops;
  /** The bot's own ids (auth.test): its echo is told apart from a kind parley does not read. */
  own: { botId: string; botUserId: string };
  clock: Clock;
  reconnect?: Omit<ReconnectGuardOptions, "clock">;
  /** Socket Mode: told when the socket connects and when it drops (http mode has no connection). */
  onState?: (connected: boolean) => void;
}

type Processor = Pick<App, "processEvent">;

export class SlackReceiver implements Receiver {
  private app: Processor | null = null;
  private readonly socket: SocketModeReceiver | null;
  private readonly http: HTTPReceiver | null;
  private server: Server | null = null;
  private readonly guard: ReconnectGuard;
  private redial: TimerHandle | null = null;
  private stopping = false;
  private started = false;
  connected = false;

  constructor(private readonly o: SlackReceiverOptions) {
    this.guard = new ReconnectGuard({ clock: o.clock, ...o.reconnect });
    if (o.mode === "socket") {
      this.http = null;
      this.socket = new SocketModeReceiver({
        appToken: o.appToken ?? "",
        logger: o.boltLogger,
        autoReconnectEnabled: false,
        // A copy: the socket client writes its own retry policy into the object it is given.
        installerOptions: { clientOptions: { ...webClientOptions({ apiUrl: o.apiUrl, logger: o.logger }) } },
      });
      this.watchSocket(this.socket);
    } else {
      this.socket = null;
      this.http = new HTTPReceiver({
        signingSecret: o.signingSecret ?? "",
        endpoints: [EVENTS_PATH],
        logger: o.boltLogger,
        processBeforeResponse: false,
      });
    }
  }

  init(app: App): void {
    this.app = app;
    const proxy = { processEvent: (event: ReceiverEvent) => this.process(event) } as unknown as App;
    (this.socket ?? this.http)?.init(proxy);
  }

  /** Hold an event's acknowledgement for the intake; everything else passes through. */
  private async process(event: ReceiverEvent): Promise<void> {
    const app = this.app;
    if (!app) {
      // Bolt's receivers deliver only after init: counted should that ever change.
      this.o.drops.record({ reason: "not_ready" });
      return;
    }
    if ((event.body as { type?: unknown }).type !== "event_callback") return this.passThrough(app, event);
    let done = false;
    let declined = false;
    const held: HeldAck = {
      ack: async () => {
        if (done) return;
        done = true;
        await event.ack();
      },
      decline: () => {
        declined = true;
      },
    };
    try {
      await app.processEvent({
        ...event,
        ack: async () => {},
        customProperties: { ...event.customProperties, [HELD_ACK]: held },
      });
    } finally {
      if (!done && !declined) this.o.drops.record(unclaimedDrop(event.body, this.o.own));
      if (!declined)
        await held
          .ack()
          .catch((error: unknown) => this.o.logger.warn("slack ack failed", { error: String(error) }));
    }
  }

  /**
   * A press, a command, anything else: Bolt's ack as is, its listener calls it. One no listener
   * claimed (a kind parley does not read) is counted and acknowledged, so Slack does not hold it open.
   */
  private async passThrough(app: Processor, event: ReceiverEvent): Promise<void> {
    let acked = false;
    await app.processEvent({
      ...event,
      ack: async (response?: unknown) => {
        acked = true;
        await event.ack(response as never);
      },
    });
    if (acked) return;
    this.o.drops.record(unclaimedDrop(event.body, this.o.own));
    await event
      .ack()
      .catch((error: unknown) => this.o.logger.warn("slack ack failed", { error: String(error) }));
  }

  async start(): Promise<void> {
    this.stopping = false;
    if (this.socket) {
      await this.socket.client.start();
      this.started = true;
      return;
    }
    const [host, port] = splitListen(this.o.listen);
    const http = this.http as HTTPReceiver;
    const server = createServer((req, res) => {
      res.on("finish", () => {
        // Bolt answers 401 to a bad signature and to a stale timestamp: nothing was started.
        if (res.statusCode === 401)
          this.o.drops.record({
            reason: "signature_or_timestamp",
            operation: "slack_http",
            outcome: "denied",
            fields: { path: req.url ?? "" },
          });
      });
      try {
        http.requestListener(req, res);
      } catch {
        // Any other path: Bolt defers it to the caller, and parley serves nothing else.
        if (!res.headersSent) res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    this.server = server;
    this.started = true;
    this.connected = true;
  }

  /** The HTTP server's bound address (tests listen on port 0). */
  address(): { host: string; port: number } | null {
    const a = this.server?.address() as AddressInfo | null | undefined;
    return a ? { host: a.address, port: a.port } : null;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.o.clock.clearTimeout(this.redial);
    this.redial = null;
    if (this.socket) await this.socket.client.disconnect().catch(() => undefined);
    const server = this.server;
    this.server = null;
    if (server)
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    this.connected = false;
  }

  private watchSocket(receiver: SocketModeReceiver): void {
    const client = receiver.client;
    client.on("connected", () => {
      this.connected = true;
      this.guard.opened();
      this.o.onState?.(true);
    });
    client.on("disconnected", () => {
      this.connected = false;
      if (this.stopping || !this.started) return;
      this.o.onState?.(false);
      this.dialLater();
    });
  }

  /** A connection closed (or a dial failed): one pending redial at most, after the guard's delay. */
  private dialLater(): void {
    if (this.redial !== null || this.stopping) return;
    this.guard.closed();
    const delay = this.guard.delayMs();
    if (delay > 0) this.o.logger.info("slack socket reconnect backoff", { ms: delay });
    this.redial = this.o.clock.setTimeout(() => {
      this.redial = null;
      if (this.stopping || !this.socket) return;
      this.socket.client.start().catch((error: unknown) => {
        this.o.logger.warn("slack socket reconnect failed", { error: String(error) });
        if (!this.connected) this.dialLater();
      });
    }, delay);
  }
}

/**
 * Why no listener took a delivery: the bot's own message (Bolt's ignoreSelf drops it before any
 * listener), or a kind parley does not read (named by its type, an event's inner type included).
 */
export function unclaimedDrop(body: unknown, own: { botId: string; botUserId: string }): InboundDrop {
  const b = (body ?? {}) as {
    type?: unknown;
    command?: unknown;
    event?: { type?: unknown; subtype?: unknown };
  };
  const e = (b.event ?? {}) as { type?: unknown; user?: unknown; bot_id?: unknown; subtype?: unknown };
  if ((own.botId !== "" && e.bot_id === own.botId) || (own.botUserId !== "" && e.user === own.botUserId))
    return { reason: "bot_echo", fields: { event: String(e.type ?? "") } };
  const outer =
    typeof b.type === "string" ? b.type : typeof b.command === "string" ? "slash_command" : "(untyped)";
  const inner =
    typeof e.type === "string" ? `/${e.type}${typeof e.subtype === "string" ? `/${e.subtype}` : ""}` : "";
  return { reason: "unknown_shape", shape: `${outer}${inner}` };
}

function splitListen(listen: string): [string, number] {
  const at = listen.lastIndexOf(":");
  return at < 0 ? ["127.0.0.1", Number(listen)] : [listen.slice(0, at), Number(listen.slice(at + 1))];
}
