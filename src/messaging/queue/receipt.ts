/**
 * The channel-neutral half of the mid-turn queue receipt: the held messages, the one receipt bubble
 * that grows in place, and its three states. The receipt is EDITED, never deleted: it is the durable
 * record that a held message was accepted. The lock is CALLER-held (methods are *Locked) so enqueue
 * + receipt growth and drain + flip are each atomic; moving the acquire inside would reintroduce the
 * orphaned-bubble race.
 */

import { Mutex } from "../base/mutex.js";
import { oneLine } from "../text/clip.js";

/** A channel's one bubble, its address bound at construction: the shared module sees no address. */
export interface ReceiptSurface {
  post(text: string): Promise<string>;
  edit(receiptId: string, text: string): Promise<void>;
}

export interface QueuedItem<P = unknown> {
  text: string;
  /** What the message carries besides its text (its files as descriptors, its platform id). */
  payload?: P;
  /** Names of the files the message carries, so a receipt can say what it holds. */
  files?: readonly string[];
}

export const RECEIPT_MAX_ITEMS = 5;
/** A queued burst collapses into one turn of at most this many messages. */
export const MAX_COLLAPSE = 50;
const ITEM_PREVIEW_CHARS = 120;

/** One held message: its words, its files, or both (a files-only message is not an empty ""). */
function describe(item: QueuedItem<unknown>): string {
  const words = preview(item.text);
  const files = item.files ?? [];
  const clip = files.length === 1 ? `📎 ${preview(files[0] ?? "")}` : `📎 ${files.length} files`;
  if (files.length === 0) return `"${words}"`;
  return words ? `"${words}" ${clip}` : clip;
}

function preview(text: string): string {
  // One line, capped: a multi-line message stays one item and a paste cannot blow the cap.
  return oneLine(text, ITEM_PREVIEW_CHARS);
}

export function formatReceipt(
  state: "queued" | "answering" | "cancelled",
  items: readonly QueuedItem<unknown>[],
  deferred = 0,
): string {
  const icon = state === "queued" ? "⏳ Queued" : state === "answering" ? "▶️ Now answering" : "🛑 Cancelled";
  const shown = items.slice(0, RECEIPT_MAX_ITEMS).map(describe);
  const more = items.length > RECEIPT_MAX_ITEMS ? ` · …and ${items.length - RECEIPT_MAX_ITEMS} more` : "";
  const tail = deferred > 0 ? ` (+${deferred} deferred)` : "";
  return `${icon} (${items.length}): ${shown.join(" · ")}${more}${tail}`;
}

interface Receipt<P> {
  id: Promise<string>;
  items: QueuedItem<P>[];
}

export class ReceiptQueue<P = unknown> {
  readonly lock = new Mutex();
  private items: QueuedItem<P>[] = [];
  private receipt: Receipt<P> | null = null;

  constructor(
    private readonly surface: ReceiptSurface,
    /** Told what /stop dropped, so what those messages owed can be settled (their journal rows). */
    private readonly onDropped?: (items: QueuedItem<P>[]) => void,
  ) {}

  get size(): number {
    return this.items.length;
  }

  /**
   * Hold a message and grow the receipt. Returns false (nothing held) when the session is no longer
   * busy, unless forced: the caller then runs it as a fresh turn instead of stranding it.
   */
  async enqueueLocked(item: QueuedItem<P>, opts: { busy: boolean; force?: boolean }): Promise<boolean> {
    if (!opts.busy && !opts.force) return false;
    this.items.push(item);
    if (!this.receipt) {
      this.receipt = { id: this.surface.post(formatReceipt("queued", this.items)), items: this.items };
      await this.receipt.id;
    } else {
      await this.surface.edit(await this.receipt.id, formatReceipt("queued", this.items));
    }
    return true;
  }

  /**
   * Take the whole burst (up to MAX_COLLAPSE) and flip its receipt to "Now answering". Anything past
   * the cap stays queued, in order, under a fresh receipt.
   */
  async drainLocked(max = MAX_COLLAPSE): Promise<QueuedItem<P>[]> {
    if (this.items.length === 0) return [];
    const taken = this.items.slice(0, max);
    const rest = this.items.slice(max);
    const receipt = this.receipt;
    this.items = [];
    this.receipt = null;
    if (receipt) await this.surface.edit(await receipt.id, formatReceipt("answering", taken, rest.length));
    if (rest.length > 0) {
      this.items = rest;
      this.receipt = { id: this.surface.post(formatReceipt("queued", rest)), items: rest };
      await this.receipt.id;
    }
    return taken;
  }

  /** /stop: drop everything held and finalize the receipt to Cancelled. Returns how many. */
  async clearLocked(): Promise<number> {
    const dropped = this.items;
    const receipt = this.receipt;
    this.items = [];
    this.receipt = null;
    if (dropped.length > 0) this.onDropped?.(dropped);
    if (receipt && dropped.length > 0)
      await this.surface.edit(await receipt.id, formatReceipt("cancelled", dropped));
    return dropped.length;
  }
}

/** Join a drained burst into one prompt: arrival order, blank lines between. */
export function combineBurst(items: readonly QueuedItem<unknown>[]): string {
  return items.map((i) => i.text).join("\n\n");
}
