/**
 * Mid-turn routing: a message that arrives while a turn runs is not a new turn. It is steered into
 * the live turn (queue_mode "steer", when the provider can and a turn is genuinely active) or held
 * behind a receipt and drained as ONE combined turn. Reusable by every channel: the channel supplies
 * only how to run a turn and where its receipt bubble lives.
 */

import type { Release } from "../base/mutex.js";
import type { SessionManager } from "../session/session-manager.js";
import type { QueuedItem, ReceiptSurface } from "./receipt.js";
import { combineBurst, ReceiptQueue } from "./receipt.js";

export type QueueMode = "steer" | "queue";

/** Anything but "queue" is steer: the default that loses nothing when misconfigured. */
export function normalizeQueueMode(value: unknown): QueueMode {
  return value === "queue" ? "queue" : "steer";
}

export interface MidTurnOptions<P = unknown> {
  sessions: SessionManager;
  queueMode: QueueMode;
  /** The channel's receipt bubble for a session (address bound by the channel). */
  surfaceFor: (sessionKey: string) => ReceiptSurface;
  /**
   * Run one turn while holding `release` (the session semaphore) and release it when done. Drained
   * bursts come through here with interpretCommands=false: a queued "/new" is text, not a command.
   */
  runTurn: (
    sessionKey: string,
    text: string,
    release: Release,
    opts: { interpretCommands: boolean; items: QueuedItem<P>[] },
  ) => Promise<void>;
  /** Told what /stop dropped from a session's queue (those messages will never run). */
  onDropped?: (sessionKey: string, items: QueuedItem<P>[]) => void;
  /**
   * False: nothing is held behind a LIVE turn. A message it cannot take (steering unavailable, files,
   * a /queue directive) is "refused" and the caller asks for it again later. For a platform whose
   * answer is bound to the message that asked, where a message held for minutes could not be
   * answered in its place.
   */
  holds?: boolean;
}

export type RouteOutcome = "ran" | "steered" | "queued" | "refused";

/** What /stop and /status need of a router, whatever its payload type. */
export interface QueueControl {
  receiptQueue(sessionKey: string): Pick<ReceiptQueue<unknown>, "lock" | "size" | "clearLocked">;
  drain(sessionKey: string): Promise<void>;
}

export class MidTurnRouter<P = unknown> implements QueueControl {
  private readonly receipts = new Map<string, ReceiptQueue<P>>();

  constructor(private readonly o: MidTurnOptions<P>) {}

  /** Messages held behind running turns, over every session (a count for health and metrics). */
  queued(): number {
    let n = 0;
    for (const q of this.receipts.values()) n += q.size;
    return n;
  }

  receiptQueue(sessionKey: string): ReceiptQueue<P> {
    let q = this.receipts.get(sessionKey);
    if (!q) {
      const onDropped = this.o.onDropped;
      q = new ReceiptQueue<P>(
        this.o.surfaceFor(sessionKey),
        onDropped ? (items) => onDropped(sessionKey, items) : undefined,
      );
      this.receipts.set(sessionKey, q);
    }
    return q;
  }

  /**
   * Entry point for a message to a session: run it now, steer it, or queue it. `override` is a
   * per-message /steer or /queue directive. Attachments force the queue (steer carries text only).
   */
  async submit(
    sessionKey: string,
    item: QueuedItem<P>,
    opts: { interpretCommands: boolean; override?: QueueMode; hasAttachments?: boolean },
  ): Promise<RouteOutcome> {
    for (;;) {
      const release = this.o.sessions.tryAcquire(sessionKey);
      if (release) {
        await this.runAndDrain(sessionKey, item.text, release, {
          interpretCommands: opts.interpretCommands,
          items: [item],
        });
        return "ran";
      }
      const mode = opts.override ?? this.o.queueMode;
      // Gate on a genuinely live turn (inside steer), never on isBusy alone: steering an ended
      // prompt is swallowed and leaves an acknowledgement with no answer.
      if (mode === "steer" && !opts.hasAttachments && (await this.o.sessions.steer(sessionKey, item.text))) {
        return "steered";
      }
      // Between turns (an agent starting, a turn's bookkeeping) it is held as usual: it runs as
      // soon as the session frees. Only a live turn that could not take it refuses it.
      if (this.o.holds === false && (await this.o.sessions.hasActiveTurn(sessionKey))) return "refused";
      const q = this.receiptQueue(sessionKey);
      const held = await q.lock.run(() =>
        q.enqueueLocked(item, { busy: this.o.sessions.isBusy(sessionKey) }),
      );
      if (held) return "queued";
      // The turn ended inside the window: loop and run it fresh instead of stranding it.
    }
  }

  private async runAndDrain(
    sessionKey: string,
    text: string,
    release: Release,
    opts: { interpretCommands: boolean; items: QueuedItem<P>[] },
  ): Promise<void> {
    try {
      await this.o.runTurn(sessionKey, text, release, opts);
    } finally {
      release(); // idempotent; runTurn normally released already
      await this.drain(sessionKey);
    }
  }

  /**
   * After a turn: take the held burst under the semaphore and run it as ONE turn; loop until empty.
   * The empty check and the release happen under the receipt lock, so a message cannot be enqueued
   * (it saw the session busy) after the last look and before the release.
   */
  async drain(sessionKey: string): Promise<void> {
    const q = this.receipts.get(sessionKey);
    if (!q) return;
    for (;;) {
      const release = this.o.sessions.tryAcquire(sessionKey);
      if (!release) return; // someone else runs a turn; its end drains
      let items: QueuedItem<P>[];
      try {
        items = await q.lock.run(async () => {
          const taken = await q.drainLocked();
          if (taken.length === 0) release();
          return taken;
        });
      } catch (error) {
        // Never leave the session held: every later message of it would wait forever.
        release();
        throw error;
      }
      if (items.length === 0) return;
      try {
        await this.o.runTurn(sessionKey, combineBurst(items), release, { interpretCommands: false, items });
      } finally {
        release();
      }
    }
  }
}
