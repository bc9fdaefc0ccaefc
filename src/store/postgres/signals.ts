/**
 * LISTEN/NOTIFY between the gateways sharing one PostgreSQL (docs/scale-out.md): a press forwarded
 * to the gateway serving its conversation, and its answer. A listener holds one connection of the
 * pool for as long as it listens (notifications arrive only on the connection that LISTENed) and
 * re-opens it when the server drops it, backing off on the kit's ReconnectGuard; what is sent
 * meanwhile is lost, which the callers' timeouts cover. Layer: store.
 */
import { sql } from "kysely";
import type { Notification, Pool, PoolClient } from "pg";
import type { Clock, TimerHandle } from "../../messaging/base/clock.js";
import { realClock } from "../../messaging/base/clock.js";
import { ReconnectGuard } from "../../messaging/base/reconnect-guard.js";
import type { ClusterSignals, ParleyDb, SignalSubscription } from "../sql/engine.js";

/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more (its default build). */
const MAX_PAYLOAD_BYTES = 7999;

/** Channel names are interpolated into LISTEN (it takes no parameter): only plain identifiers. */
const CHANNEL_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export class PostgresSignals implements ClusterSignals {
  readonly maxPayloadBytes = MAX_PAYLOAD_BYTES;
  private readonly listeners = new Set<Listener>();

  constructor(
    private readonly pool: Pool,
    private readonly db: ParleyDb,
    private readonly clock: Clock = realClock,
  ) {}

  async listen(
    channel: string,
    onPayload: (payload: string) => void,
    onTrouble: (problem: string) => void,
  ): Promise<SignalSubscription> {
    if (!CHANNEL_NAME.test(channel)) throw new RangeError(`signals: not a plain channel name: ${channel}`);
    const listener = new Listener(this.pool, this.clock, channel, onPayload, onTrouble);
    await listener.open();
    this.listeners.add(listener);
    return {
      close: async () => {
        this.listeners.delete(listener);
        await listener.close();
      },
    };
  }

  /** Before the pool ends: it waits for every connection it lent, and a listener never gives its own back. */
  async closeAll(): Promise<void> {
    const open = [...this.listeners];
    this.listeners.clear();
    await Promise.all(open.map((l) => l.close()));
  }

  async notify(channel: string, payload: string): Promise<void> {
    if (Buffer.byteLength(payload, "utf8") > MAX_PAYLOAD_BYTES)
      throw new RangeError(`signals: a payload of ${Buffer.byteLength(payload)} bytes is too large`);
    await sql`select pg_notify(${channel}, ${payload})`.execute(this.db);
  }
}

class Listener implements SignalSubscription {
  private client: { client: PoolClient; release: (error?: Error) => void } | undefined;
  private closed = false;
  private retry: TimerHandle | undefined;
  private readonly guard: ReconnectGuard;

  constructor(
    private readonly pool: Pool,
    private readonly clock: Clock,
    private readonly channel: string,
    private readonly onPayload: (payload: string) => void,
    private readonly onTrouble: (problem: string) => void,
  ) {
    this.guard = new ReconnectGuard({ clock, baseMs: 250, maxMs: 10_000, minHealthyMs: 30_000 });
  }

  /** Take a connection and LISTEN on it; rejects when the database cannot be reached. */
  async open(): Promise<void> {
    const client = await this.pool.connect();
    const onNotification = (n: Notification) => {
      if (n.channel === this.channel && n.payload !== undefined) this.onPayload(n.payload);
    };
    const onError = (reason: unknown) => this.lost(client, reason);
    const onEnd = () => this.lost(client, new Error("the connection ended"));
    client.on("notification", onNotification);
    client.on("error", onError);
    client.on("end", onEnd);
    // A connection goes back to the pool without these: the next user of it must not feed us.
    const release = (error?: Error) => {
      client.off("notification", onNotification);
      client.off("error", onError);
      client.off("end", onEnd);
      client.release(error);
    };
    try {
      await client.query(`LISTEN ${this.channel}`);
    } catch (error) {
      release(error instanceof Error ? error : new Error(String(error)));
      throw error;
    }
    if (this.closed) {
      release();
      return;
    }
    this.client = { client, release };
    this.guard.opened();
  }

  private lost(client: PoolClient, reason: unknown): void {
    if (this.client?.client !== client) return;
    const { release } = this.client;
    this.client = undefined;
    // Released with the error: the pool discards the broken connection instead of reusing it.
    release(reason instanceof Error ? reason : new Error(String(reason)));
    if (this.closed) return;
    this.guard.closed();
    this.onTrouble(`the listening connection was lost (${String(reason)}); listening again`);
    this.reopenLater();
  }

  private reopenLater(): void {
    this.retry = this.clock.setTimeout(() => {
      this.retry = undefined;
      if (this.closed) return;
      this.open().catch((error: unknown) => {
        this.guard.closed();
        this.onTrouble(`listening again failed (${String(error)}); retrying`);
        this.reopenLater();
      });
    }, this.guard.delayMs());
  }

  async close(): Promise<void> {
    this.closed = true;
    this.clock.clearTimeout(this.retry);
    const held = this.client;
    this.client = undefined;
    if (!held) return;
    try {
      await held.client.query(`UNLISTEN ${this.channel}`);
      held.release();
    } catch (error) {
      held.release(error instanceof Error ? error : new Error(String(error)));
    }
  }
}
