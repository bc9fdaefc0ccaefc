/**
 * The bubbles of one segment of an answer (the text between two seals: the start, an approval
 * prompt, a steer, the end). The segment's markdown is rendered whole and split at the cap; chunk i
 * is shown in bubble i, by an edit while its bubble can still be edited, else by a new bubble.
 *
 * Two facts govern it. An edit can be refused, and WhatsApp keeps an edit window (15 minutes): past
 * it recipients ignore the edit, and baileys never says so (it sends whatever it is given), so a
 * bubble that old is treated as closed BEFORE the window ends,
 * and its chunk goes to a new bubble that repeats whatever prefix the closed one still shows (a
 * repeated sentence is visible and recoverable; a silently missing one is neither). And a chunk
 * counts as shown only once its send or edit RETURNED: `sealed` (the chunks shown for good, every
 * chunk but the live tail) advances in exactly one place, after a landed call, so a refused edit or
 * a failed send is looked at again by the next frame instead of being skipped for the rest of the turn.
 */
import type { WAMessageKey } from "./wire.js";

/**
 * WhatsApp's edit window: 15 minutes after sending (WhatsApp's announcement of edits, May 2023, as
 * reported e.g. at thinkwithniche.com/amp/news/whatsapp-introduces-feature-to-edit-messages-within-15-minutes;
 * support.whapi.cloud "Editing a sent message": "WhatsApp only allows editing within 15 minutes").
 */
export const EDIT_WINDOW_MS = 15 * 60_000;
/** A bubble is closed this long before the window ends, so an edit in flight still lands. */
export const EDIT_WINDOW_MARGIN_MS = 60_000;

export interface Bubble {
  key: WAMessageKey;
  /** What it shows now (the dialect, as sent). */
  text: string;
  /** When it was created (a resumed turn's bubble counts as old as a resumable message can be). */
  at: number;
  /** An edit was refused, or its window closed: it shows what it shows, for good. */
  closed: boolean;
}

export interface BubbleIo {
  now(): number;
  /** Create a bubble (through the turn's parts: a resumed turn reuses what its first run posted). */
  create(text: string): Promise<Bubble | null>;
  /** Edit a bubble; throws when refused. */
  edit(bubble: Bubble, text: string): Promise<void>;
  windowMs: number;
}

export class Segment {
  readonly bubbles: Bubble[] = [];
  /** Chunks shown for good (never the live tail). */
  sealed = 0;

  constructor(private readonly io: BubbleIo) {}

  /** Whether a bubble can still take an edit. */
  editable(b: Bubble): boolean {
    return !b.closed && this.io.now() - b.at < this.io.windowMs - EDIT_WINDOW_MARGIN_MS;
  }

  /**
   * Show `chunks`; with `final` every chunk is sealed, otherwise the last one is the live tail.
   * Resolves false when a call failed (the rest waits for the next frame).
   */
  async show(chunks: readonly string[], final: boolean): Promise<boolean> {
    // Earlier chunks, already sealed, are corrected in place only where they can still be edited.
    for (let i = 0; i < Math.min(this.sealed, chunks.length); i += 1) {
      const b = this.bubbles[i];
      const text = chunks[i] ?? "";
      if (b && b.text !== text && this.editable(b)) await this.tryEdit(b, text);
    }
    for (let i = this.sealed; i < chunks.length; i += 1) {
      if (!(await this.place(i, chunks[i] ?? ""))) return false;
      const isTail = !final && i === chunks.length - 1;
      if (!isTail) this.sealed = i + 1;
    }
    return true;
  }

  /** The live bubble shows only a status line: it may be taken over (by a prompt, a notice). */
  takeStatusOnly(statusOnly: boolean): Bubble | null {
    if (!statusOnly || this.sealed > 0 || this.bubbles.length !== 1) return null;
    const b = this.bubbles[0] ?? null;
    if (!b || !this.editable(b)) return null;
    this.bubbles.length = 0;
    return b;
  }

  /** Chunk i into bubble i: nothing when it already shows it, an edit while possible, else a new one. */
  private async place(i: number, text: string): Promise<boolean> {
    const b = this.bubbles[i];
    if (b && b.text === text) return true;
    if (b && this.editable(b) && (await this.tryEdit(b, text))) return true;
    const fresh = await this.io.create(text);
    if (!fresh) return false;
    this.bubbles[i] = fresh;
    return true;
  }

  private async tryEdit(b: Bubble, text: string): Promise<boolean> {
    try {
      await this.io.edit(b, text);
      b.text = text;
      return true;
    } catch {
      // Refused (too old, deleted): this bubble keeps what it shows; its chunk goes to a new one.
      b.closed = true;
      return false;
    }
  }
}
