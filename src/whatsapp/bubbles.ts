/**
 * The bubbles a turn creates, each one of its parts (a resumed turn edits what its first run posted),
 * and WhatsApp's edit window on each. Two facts govern it. An edit can be refused, and WhatsApp
 * keeps an edit window (15 minutes): past it recipients ignore the edit, and baileys never says so
 * (it sends whatever it is given), so a bubble that old is treated as closed BEFORE the window ends,
 * and its edit is refused here, before it is sent. The kit then takes the text to a new bubble that
 * repeats whatever the closed one still shows (a repeated sentence is visible and recoverable; a
 * silently missing one is neither).
 */
import { ParleyError } from "../messaging/base/errors.js";
import type { TurnParts } from "../messaging/channel/delivery.js";
import { renderChunks, WHATSAPP_MAX_CHARS } from "./format.js";
import type { WhatsAppTransport } from "./transport.js";
import type { WAMessageKey } from "./wire.js";

/**
 * WhatsApp's edit window: 15 minutes after sending (WhatsApp's announcement of edits, May 2023, as
 * reported e.g. at thinkwithniche.com/amp/news/whatsapp-introduces-feature-to-edit-messages-within-15-minutes;
 * support.whapi.cloud "Editing a sent message": "WhatsApp only allows editing within 15 minutes").
 */
export const EDIT_WINDOW_MS = 15 * 60_000;
/** A bubble is closed this long before the window ends, so an edit in flight still lands. */
export const EDIT_WINDOW_MARGIN_MS = 60_000;

export interface BubblesOptions {
  chat: string;
  now: () => number;
  parts: TurnParts;
  editWindowMs: number;
  /** How old a bubble an earlier run of this turn posted may be: its window counts from then. */
  resumedAgeMs: number;
}

export class Bubbles {
  /** id -> when it was created. */
  private readonly createdAt = new Map<string, number>();
  /** An edit failed on these: each keeps what it shows, for good. */
  private readonly closed = new Set<string>();

  constructor(
    private readonly t: WhatsAppTransport,
    private readonly o: BubblesOptions,
  ) {}

  /** A new bubble (at most the cap), as the turn's next part; its id, or null when it did not land. */
  async post(text: string): Promise<string | null> {
    const body = Array.from(text).length > WHATSAPP_MAX_CHARS ? (renderChunks(text)[0] ?? "") : text;
    let resumed = false;
    const id = await this.o.parts.post(body, {
      create: async (partKey) => (await this.t.sendText(this.o.chat, body, partKey)).id ?? null,
      replace: async (earlier) => {
        resumed = true;
        await this.t.editText(this.o.chat, this.key(earlier), body);
        return true;
      },
    });
    // A bubble an earlier run posted is as old as a resumable message can be, at most.
    if (id !== null) this.createdAt.set(id, resumed ? this.o.now() - this.o.resumedAgeMs : this.o.now());
    return id;
  }

  /** Edit a bubble; throws when it is past its window (unsent) or the edit failed (it is closed). */
  async edit(id: string, text: string): Promise<void> {
    const age = this.o.now() - (this.createdAt.get(id) ?? this.o.now());
    if (this.closed.has(id) || age >= this.o.editWindowMs - EDIT_WINDOW_MARGIN_MS)
      throw new ParleyError("REFUSED", `whatsapp: bubble ${id} is past its edit window`);
    try {
      await this.t.editText(this.o.chat, this.key(id), text);
    } catch (error) {
      this.closed.add(id);
      throw error;
    }
  }

  private key(id: string): WAMessageKey {
    return { remoteJid: this.o.chat, fromMe: true, id };
  }
}
