/**
 * PickerRegistry: the lists a channel posted as tappable choices (a model picker, a session picker),
 * kept so a press resolves an INDEX against the exact list it was shown. A widget id never carries
 * the value itself: ids are length-capped and platforms replay old ones indefinitely, so a press on
 * a stale advertisement must miss rather than apply whatever the value was then. Bounded in time
 * (ttl) and space (capacity, oldest evicted), owner- and scope-checked, consumed at most once.
 * Layer: messaging (pure; clock injected).
 */
import { newApprovalNonce } from "../turn/renderer.js";

export interface PickerOffer<T> {
  /** The principal allowed to press (a platform user id). */
  owner: string;
  /** Where the list was posted (a conversation); a press from elsewhere is a forgery or a replay. */
  scope: string;
  items: readonly T[];
}

export type PickRefusal = "unknown" | "expired" | "consumed" | "wrong_owner" | "wrong_scope" | "out_of_range";

export type PickResult<T> = { ok: true; item: T; index: number } | { ok: false; reason: PickRefusal };

export interface PickerRegistryOptions {
  /** How long a posted list stays pressable (default 10 minutes). */
  ttlMs?: number;
  /** Live lists kept; the oldest is evicted beyond it (default 256). */
  capacity?: number;
  now?: () => number;
}

interface Entry<T> extends PickerOffer<T> {
  expiresAt: number;
  consumed: boolean;
}

/** What a user is told for each refusal: every miss is visible, never a silent no-op. */
export const PICK_REFUSAL_TEXT: Readonly<Record<PickRefusal, string>> = Object.freeze({
  unknown: "That list is no longer available: ask for a new one.",
  expired: "That list expired: ask for a new one.",
  consumed: "That list was already used: ask for a new one.",
  wrong_owner: "Only the person who asked for that list can choose from it.",
  wrong_scope: "That list belongs to another conversation.",
  out_of_range: "That choice is not on the list.",
});

export class PickerRegistry<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly ttlMs: number;
  private readonly capacity: number;
  private readonly now: () => number;

  constructor(opts: PickerRegistryOptions = {}) {
    this.ttlMs = opts.ttlMs ?? 10 * 60_000;
    this.capacity = Math.max(1, opts.capacity ?? 256);
    this.now = opts.now ?? Date.now;
  }

  /** A fresh handle for channels whose widget can carry one (same generator as approval nonces). */
  static newHandle(): string {
    return newApprovalNonce();
  }

  /**
   * Record `offer` under `handle`: the posting's own id (a message id) or a newHandle() nonce. A
   * re-offer under the same handle replaces the list, since the posting now shows the new one.
   */
  offer(handle: string, offer: PickerOffer<T>): void {
    this.entries.delete(handle);
    this.entries.set(handle, {
      owner: offer.owner,
      scope: offer.scope,
      items: [...offer.items],
      expiresAt: this.now() + this.ttlMs,
      consumed: false,
    });
    // Map order is insertion order, so the first key is the oldest offer.
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  /** Resolve and consume. A wrong owner/scope/index does NOT consume: the rightful press still works. */
  take(handle: string, index: number, by: { owner: string; scope: string }): PickResult<T> {
    const entry = this.entries.get(handle);
    if (!entry) return { ok: false, reason: "unknown" };
    if (this.now() >= entry.expiresAt) {
      this.entries.delete(handle);
      return { ok: false, reason: "expired" };
    }
    if (entry.consumed) return { ok: false, reason: "consumed" };
    if (entry.scope !== by.scope) return { ok: false, reason: "wrong_scope" };
    if (entry.owner !== by.owner) return { ok: false, reason: "wrong_owner" };
    if (!Number.isInteger(index) || index < 0 || index >= entry.items.length) {
      return { ok: false, reason: "out_of_range" };
    }
    // Kept as a tombstone until it expires, so a second press reads "already used", not "unknown".
    entry.consumed = true;
    return { ok: true, item: entry.items[index] as T, index };
  }

  /** Whether `handle` names a list kept here (live, used, or expired and not yet pruned). */
  has(handle: string): boolean {
    return this.entries.has(handle);
  }

  /** Drop a list (its posting was replaced or withdrawn). */
  withdraw(handle: string): boolean {
    return this.entries.delete(handle);
  }

  get size(): number {
    return this.entries.size;
  }
}
