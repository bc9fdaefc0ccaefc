/**
 * The connection to WhatsApp: baileys' socket built from parley's settings (the socket URL, the
 * proxy, the auth state in the data home, no "online" presence so the operator's phone still
 * notifies, no full history sync), and one connection that outlives its sockets. A dropped socket
 * is replaced with backoff; the backoff resets only after a socket stayed up a minimum healthy
 * time, so a connection that opens and dies at once keeps backing off instead of hammering
 * WhatsApp. Two endings are final and never retried: logged out (the device was removed on the
 * phone: the keys are dead, forgotten here, and the operator must link again) and connection
 * replaced (another client took this device's session: retrying would fight it for ever).
 */
import type { AuthenticationState } from "@whiskeysockets/baileys";
import {
  Browsers,
  DisconnectReason,
  makeCacheableSignalKeyStore,
  makeWASocket,
} from "@whiskeysockets/baileys";
import type { Clock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { FileAuthState } from "./auth-state.js";
import type { WhatsAppSettings } from "./index.js";
import { proxyFor } from "./proxy.js";
import type { WaEventName, WaEvents, WaSocket } from "./wire.js";

export type SocketFactory = (auth: AuthenticationState) => WaSocket;

/** baileys' logger interface, onto parley's: its chatter is debug, its errors are warnings. */
export interface BaileysLogger {
  level: string;
  child(obj: Record<string, unknown>): BaileysLogger;
  trace(obj: unknown, msg?: string): void;
  debug(obj: unknown, msg?: string): void;
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
}

export function baileysLogger(log: Logger): BaileysLogger {
  const line = (obj: unknown, msg?: string) => {
    const text = msg ?? (typeof obj === "string" ? obj : "");
    const fields = typeof obj === "object" && obj !== null ? { detail: safeDetail(obj) } : {};
    return [`whatsapp (baileys): ${text}`, fields] as const;
  };
  const self: BaileysLogger = {
    level: "warn",
    child: () => self,
    trace: () => {},
    debug: () => {},
    info: (obj, msg) => log.debug(...line(obj, msg)),
    warn: (obj, msg) => log.debug(...line(obj, msg)),
    error: (obj, msg) => log.warn(...line(obj, msg)),
  };
  return self;
}

/** A log field from baileys' object: its error's message only (never keys, never message bodies). */
function safeDetail(obj: object): string {
  const err = (obj as { err?: unknown; error?: unknown }).err ?? (obj as { error?: unknown }).error;
  return err instanceof Error ? err.message : "";
}

/** The real socket: baileys' makeWASocket pointed at the configured URL, through the proxy. */
export function baileysSocketFactory(
  settings: Pick<WhatsAppSettings, "webSocketUrl" | "proxyUrl">,
  log: Logger,
): SocketFactory {
  const logger = baileysLogger(log);
  const proxy = proxyFor(settings.proxyUrl);
  return (auth) =>
    makeWASocket({
      waWebSocketUrl: settings.webSocketUrl,
      auth: { creds: auth.creds, keys: makeCacheableSignalKeyStore(auth.keys, logger) },
      logger,
      browser: Browsers.macOS("Desktop"),
      ...(proxy ? { agent: proxy.agent, fetchAgent: proxy.agent } : {}),
      // "Online" would silence the operator's phone: WhatsApp stops notifying while a device is online.
      markOnlineOnConnect: false,
      syncFullHistory: false,
      generateHighQualityLinkPreview: false,
      getMessage: async () => undefined,
    });
}

export type FatalEnding = "logged_out" | "replaced";

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** A socket must stay open this long before a later drop starts the backoff from the beginning. */
  minHealthyMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 1000, maxMs: 60_000, minHealthyMs: 60_000 };

export interface ConnectionOptions {
  createSocket: SocketFactory;
  auth: FileAuthState;
  clock: Clock;
  logger: Logger;
  backoff?: Partial<BackoffOptions>;
  /** [0, 1): the jitter that keeps many gateways from reconnecting in step. */
  random?: () => number;
  onOpen?(sock: WaSocket, first: boolean): void;
  onQr?(qr: string): void;
  onFatal?(ending: FatalEnding): void;
}

type Listener = { event: WaEventName; fn: (arg: never) => void };

export type ConnectionState = "connecting" | "open" | "waiting" | "stopped";

export class WaConnection {
  private sock: WaSocket | null = null;
  private readonly listeners: Listener[] = [];
  private opened = false;
  private attempts = 0;
  private openedAt: number | null = null;
  private timer: unknown = null;
  private current: ConnectionState = "waiting";
  private readonly backoff: BackoffOptions;

  constructor(private readonly o: ConnectionOptions) {
    this.backoff = { ...DEFAULT_BACKOFF, ...o.backoff };
  }

  get state(): ConnectionState {
    return this.current;
  }

  /** How many sockets were made (the first connect included). */
  sockets = 0;

  /** The socket while it is open; null otherwise (a send then fails and says so). */
  socket(): WaSocket | null {
    return this.current === "open" ? this.sock : null;
  }

  /**
   * The open socket, waiting up to `timeoutMs` for one (a send right after a start, or during a
   * short reconnect, waits instead of failing); rejects when none opens in time or it stopped.
   */
  whenOpen(timeoutMs: number): Promise<WaSocket> {
    const open = this.socket();
    if (open) return Promise.resolve(open);
    if (this.current === "stopped") return Promise.reject(new Error("WhatsApp is disconnected (stopped)"));
    return new Promise((resolve, reject) => {
      const waiter = { resolve, reject, timer: null as unknown };
      waiter.timer = this.o.clock.setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error("WhatsApp is not connected"));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  private readonly waiters = new Set<{
    resolve: (sock: WaSocket) => void;
    reject: (error: Error) => void;
    timer: unknown;
  }>();

  private settleWaiters(sock: WaSocket | null): void {
    for (const w of [...this.waiters]) {
      this.o.clock.clearTimeout(w.timer);
      if (sock) w.resolve(sock);
      else w.reject(new Error("WhatsApp is disconnected (stopped)"));
    }
    this.waiters.clear();
  }

  /** The socket being set up or open, for what is asked before `open` (a pairing code). */
  connecting(): WaSocket | null {
    return this.sock;
  }

  /** Listen on every socket, the present one and each replacement. */
  on<E extends WaEventName>(event: E, fn: (arg: WaEvents[E]) => void): void {
    this.listeners.push({ event, fn: fn as (arg: never) => void });
    this.sock?.ev.on(event, fn);
  }

  start(): void {
    if (this.current === "stopped") return;
    this.connect();
  }

  async stop(): Promise<void> {
    this.current = "stopped";
    this.settleWaiters(null);
    if (this.timer !== null) this.o.clock.clearTimeout(this.timer);
    this.timer = null;
    const sock = this.sock;
    this.sock = null;
    if (sock) {
      this.detach(sock);
      await Promise.resolve(sock.end(undefined)).catch(() => undefined);
    }
  }

  private connect(): void {
    this.current = "connecting";
    this.sockets += 1;
    const sock = this.o.createSocket(this.o.auth.state);
    this.sock = sock;
    sock.ev.on("creds.update", () => {
      this.o.auth
        .saveCreds()
        .catch((error: unknown) =>
          this.o.logger.error("whatsapp: saving the keys failed", { error: String(error) }),
        );
    });
    sock.ev.on("connection.update", (update) => this.onUpdate(sock, update));
    for (const l of this.listeners) sock.ev.on(l.event, l.fn as never);
  }

  private detach(sock: WaSocket): void {
    for (const l of this.listeners) sock.ev.off(l.event, l.fn as never);
  }

  private onUpdate(sock: WaSocket, update: WaEvents["connection.update"]): void {
    if (sock !== this.sock || this.current === "stopped") return;
    if (update.qr) this.o.onQr?.(update.qr);
    if (update.connection === "open") {
      this.current = "open";
      this.openedAt = this.o.clock.now();
      const first = !this.opened;
      this.opened = true;
      this.o.logger.info("whatsapp: connected");
      this.o.onOpen?.(sock, first);
      this.settleWaiters(sock);
      return;
    }
    if (update.connection !== "close") return;
    // baileys closes with a Boom error whose status code says why.
    const code = (update.lastDisconnect?.error as { output?: { statusCode?: number } } | undefined)?.output
      ?.statusCode;
    this.detach(sock);
    this.sock = null;
    if (code === DisconnectReason.loggedOut || code === DisconnectReason.forbidden) {
      this.current = "stopped";
      this.o.logger.error(
        "whatsapp: this device was logged out (removed on the phone?): its keys are forgotten; run `parley whatsapp link` to link again",
      );
      void this.o.auth
        .clear()
        .catch((error: unknown) =>
          this.o.logger.warn("whatsapp: clearing the keys failed", { error: String(error) }),
        );
      this.settleWaiters(null);
      this.o.onFatal?.("logged_out");
      return;
    }
    if (code === DisconnectReason.connectionReplaced) {
      this.current = "stopped";
      this.o.logger.error(
        "whatsapp: another client took over this device's connection; stopped rather than fight it (restart parley to take it back)",
      );
      this.settleWaiters(null);
      this.o.onFatal?.("replaced");
      return;
    }
    this.scheduleReconnect(code);
  }

  private scheduleReconnect(code: number | undefined): void {
    const healthy = this.openedAt !== null && this.o.clock.now() - this.openedAt >= this.backoff.minHealthyMs;
    if (healthy) this.attempts = 0;
    this.openedAt = null;
    // WhatsApp asks for a restart after pairing and at times in between: that is not a failure.
    const delay = code === DisconnectReason.restartRequired ? 0 : this.delayFor(this.attempts++);
    this.current = "waiting";
    this.o.logger.warn("whatsapp: disconnected; reconnecting", { code: code ?? null, inMs: delay });
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = null;
      if (this.current !== "stopped") this.connect();
    }, delay);
  }

  /** Exponential, capped, with ±20% jitter. */
  delayFor(attempt: number): number {
    const base = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** attempt);
    const jitter = ((this.o.random ?? Math.random)() * 0.4 - 0.2) * base;
    return Math.max(0, Math.round(base + jitter));
  }
}
