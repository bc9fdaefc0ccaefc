/**
 * What the dialect-neutral repositories need from a concrete database beyond Kysely itself: the
 * few operations SQL does not spell the same way on SQLite and PostgreSQL. Layer: store.
 */
import type { Kysely } from "kysely";
import type { IntegrityResult } from "../../messaging/store/port.js";
import type { SqlDialectName } from "./migrations.js";
import type { ParleyDatabase } from "./schema.js";

export type ParleyDb = Kysely<ParleyDatabase>;

export interface SqlEngine {
  readonly dialect: SqlDialectName;
  readonly db: ParleyDb;
  /** A file path or a credential-free URL: what reports and errors name. */
  readonly location: string;
  /**
   * Run `fn` on one connection whose commits survive power loss, not only a process kill (and so
   * make every earlier commit survive it too). For the few writes that let a platform forget.
   */
  durably<T>(fn: (db: ParleyDb) => Promise<T>): Promise<T>;
  /** After a bulk delete: overwrite what was deleted and give the space back. */
  afterPurge(): Promise<void>;
  sizeBytes(): Promise<number>;
  /** A full check; slow on a large database. */
  integrity(): Promise<IntegrityResult>;
  /** Notifications between the gateways sharing the database (absent: it is one gateway's). */
  readonly signals?: ClusterSignals;
  close(): Promise<void>;
}

/** A listening subscription: `close` stops it and gives its connection back. */
export interface SignalSubscription {
  close(): Promise<void>;
}

/**
 * Short messages between the gateways sharing one database (PostgreSQL's LISTEN/NOTIFY). Delivery
 * is at most once: a payload sent while a listener's connection is being re-opened is lost, so a
 * user of it must time out.
 */
export interface ClusterSignals {
  /** The largest payload `notify` takes (bytes of UTF-8). */
  readonly maxPayloadBytes: number;
  /** Receive every payload sent on `channel` from now on; `onTrouble` hears of lost connections. */
  listen(
    channel: string,
    onPayload: (payload: string) => void,
    onTrouble: (problem: string) => void,
  ): Promise<SignalSubscription>;
  notify(channel: string, payload: string): Promise<void>;
}

/** bigint columns come back as strings from some drivers (pg); every id and time goes through this. */
export function toNumber(value: number | string | bigint | null): number {
  return Number(value);
}
