/**
 * The connection to WhatsApp: baileys' socket built from parley's settings (the socket URL, the
 * proxy, the auth state in the data home, the announced WhatsApp Web version, the recent sends for
 * a retry, the group metadata cache, no "online" presence at connect so the operator's phone still
 * notifies, no full history sync), and one connection that outlives its sockets. A dropped socket
 * is replaced with backoff, on every code (a restart request, 515, included: a server that asks
 * for one restart after another must not be answered in a tight loop); the backoff resets only
 * after a socket stayed up a minimum healthy time. The endings of endings.ts are final and never
 * retried: the connection stops, the data home remembers which one it was (for doctor), the keys
 * are deleted only when the device was removed, and the owner is told (onFatal).
 */
import type { AuthenticationState } from "@whiskeysockets/baileys";
import {
  Browsers,
  DEFAULT_CONNECTION_CONFIG,
  makeCacheableSignalKeyStore,
  makeWASocket,
} from "@whiskeysockets/baileys";
import type { Clock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { FileAuthState } from "./auth-state.js";
import type { CloseReason, EndedRecord, Ending } from "./endings.js";
import { clearEnded, closeReasonOf, endingOf, endingText, forgetsKeys, writeEnded } from "./endings.js";
import type { WhatsAppSettings } from "./index.js";
import { proxyFor } from "./proxy.js";
import { versionText } from "./version.js";
import type { WaEventName, WaEvents, WaSocket, WaSocketOptions } from "./wire.js";

export type SocketFactory = (auth: AuthenticationState, options: WaSocketOptions) => WaSocket;

/** A socket with baileys' defaults: its pinned version, nothing to answer a retry, no cache. */
export function defaultSocketOptions(): WaSocketOptions {
  return {
    version: DEFAULT_CONNECTION_CONFIG.version,
    getMessage: async () => undefined,
    cachedGroupMetadata: async () => undefined,
  };
}

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
  return (auth, options) =>
    makeWASocket({
      version: options.version,
      waWebSocketUrl: settings.webSocketUrl,
      auth: { creds: auth.creds, keys: makeCacheableSignalKeyStore(auth.keys, logger) },
      logger,
      browser: Browsers.macOS("Desktop"),
      ...(proxy ? { agent: proxy.agent, fetchAgent: proxy.agent } : {}),
      // "Online" would silence the operator's phone: WhatsApp stops notifying while a device is online.
      markOnlineOnConnect: false,
      syncFullHistory: false,
      generateHighQualityLinkPreview: false,
      getMessage: options.getMessage,
      cachedGroupMetadata: options.cachedGroupMetadata,
    });
}

export type FatalEnding = Ending;

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
  /** A final ending: the connection has stopped; the record is what the data home keeps. */
  onFatal?(ending: FatalEnding, record: EndedRecord): void;
  /** A close that will be retried, told before the next socket is made (linking resets its code). */
  onClose?(reason: CloseReason): void;
  /** What every socket is made with (default: baileys' pinned version, no retry answers, no cache). */
  socketOptions?: WaSocketOptions;
  /** The data home: a final ending is remembered there for doctor, and forgotten when a socket opens. */
  home?: string;
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

  private readonly socketOptions: WaSocketOptions;

  constructor(private readonly o: ConnectionOptions) {
    this.backoff = { ...DEFAULT_BACKOFF, ...o.backoff };
    this.socketOptions = o.socketOptions ?? defaultSocketOptions();
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
    const sock = this.o.createSocket(this.o.auth.state, this.socketOptions);
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
      // Whatever ended an earlier connection is over now.
      if (this.o.home) clearEnded(this.o.home);
      this.o.onOpen?.(sock, first);
      this.settleWaiters(sock);
      return;
    }
    if (update.connection !== "close") return;
    const reason = closeReasonOf(update.lastDisconnect?.error);
    this.detach(sock);
    this.sock = null;
    const ending = endingOf(reason);
    if (ending) {
      this.end(ending, reason);
      return;
    }
    this.o.onClose?.(reason);
    // The hook may have stopped the connection (a link that gives up).
    if (this.state !== "stopped") this.scheduleReconnect(reason.code);
  }

  /** A final ending: stopped, remembered in the data home, the keys deleted only for a removed device. */
  private end(ending: Ending, reason: CloseReason): void {
    this.current = "stopped";
    const version = versionText(this.socketOptions.version);
    this.o.logger.error(`whatsapp: ${endingText(ending, version)}`, { code: reason.code ?? null });
    const record: EndedRecord = {
      ending,
      code: reason.code ?? null,
      at: new Date(this.o.clock.now()).toISOString(),
      ...(ending === "outdated" ? { version } : {}),
    };
    const remember = () => {
      if (this.o.home) writeEnded(this.o.home, record);
    };
    if (forgetsKeys(ending))
      // Cleared first: the record lives in the same folder and must outlast the keys.
      void this.o.auth
        .clear()
        .catch((error: unknown) =>
          this.o.logger.warn("whatsapp: clearing the keys failed", { error: String(error) }),
        )
        .then(remember);
    else remember();
    this.settleWaiters(null);
    this.o.onFatal?.(ending, record);
  }

  private scheduleReconnect(code: number | undefined): void {
    const healthy = this.openedAt !== null && this.o.clock.now() - this.openedAt >= this.backoff.minHealthyMs;
    if (healthy) this.attempts = 0;
    this.openedAt = null;
    // A restart request (515) backs off like any other: its first retry is as quick as any first.
    const delay = this.delayFor(this.attempts++);
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
