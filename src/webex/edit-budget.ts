/**
 * Webex's edit cap as a turn spends it. Webex allows at most 10 edits per message; a turn's live
 * status frames may take 8 of them in all, so a message always keeps 2 for its answer and a prompt's
 * outcome. A status frame Webex refused spends the rest of the frames: the next would likely be
 * refused too, and the answer must still land.
 */

/** Webex's per-message edit cap, and the share of it a turn's status frames may use. */
export const MAX_EDITS = 10;
export const STATUS_EDITS = 8;

export class EditBudget {
  private readonly edits = new Map<string, number>();
  private frames = 0;

  /** Whether another status frame may be spent this turn. */
  framesLeft(): boolean {
    return this.frames < STATUS_EDITS;
  }

  /** Spend one edit of message `id` (a frame also one of the turn's frames); false when none is left. */
  take(id: string, frame: boolean): boolean {
    const used = this.edits.get(id) ?? 0;
    if (used >= MAX_EDITS || (frame && !this.framesLeft())) return false;
    this.edits.set(id, used + 1);
    if (frame) this.frames += 1;
    return true;
  }

  /** A frame Webex refused: no more frames this turn. */
  spendFrames(): void {
    this.frames = STATUS_EDITS;
  }
}
