/**
 * The ONE parse of the inline steering frame `[STEERING steer-<id>: <summary>]` an agent writes into
 * its text stream at the exact point a mid-turn message was folded in. Incremental: chunk boundaries
 * may fall anywhere, so a possible frame start is held back until it completes or provably is not one.
 * Frames are single-line; a newline or an over-long body means it was prose after all.
 */
export const STEER_FRAME_PREFIX = "[STEERING steer-";
/** Past this many characters an unterminated "frame" is prose; bounds what is held back. */
const MAX_FRAME_CHARS = 2000;

export type SteerPiece = { type: "text"; text: string } | { type: "steer"; id: string; summary: string };

type FrameScan =
  | { status: "complete"; end: number; id: string; summary: string }
  | { status: "incomplete" | "invalid" };

/** Scan a frame that starts at buf[0] (which begins with the prefix). */
function scanFrame(buf: string): FrameScan {
  let i = STEER_FRAME_PREFIX.length;
  const idStart = i;
  while (i < buf.length && /[A-Za-z0-9_-]/.test(buf[i] as string)) i++;
  if (i === buf.length) return { status: "incomplete" };
  if (i === idStart || buf[i] !== ":") return { status: "invalid" };
  const id = buf.slice(idStart, i);
  i++;
  // Bracket depth lets a summary quote "[x]" without ending the frame early.
  let depth = 0;
  for (; i < buf.length; i++) {
    const c = buf[i];
    if (c === "\n") return { status: "invalid" };
    if (c === "[") depth++;
    else if (c === "]") {
      if (depth === 0)
        return { status: "complete", end: i + 1, id, summary: buf.slice(idStart + id.length + 1, i).trim() };
      depth--;
    }
  }
  return { status: "incomplete" };
}

/** Length of the longest buffer suffix that is a proper prefix of the frame marker. */
function partialPrefixLength(buf: string): number {
  const max = Math.min(buf.length, STEER_FRAME_PREFIX.length - 1);
  for (let n = max; n > 0; n--) {
    if (STEER_FRAME_PREFIX.startsWith(buf.slice(buf.length - n))) return n;
  }
  return 0;
}

export class SteerFrameParser {
  private buf = "";

  /** Nothing held back: a chunk without "[" would pass through whole (the driver's fast path). */
  get idle(): boolean {
    return this.buf === "";
  }

  push(chunk: string): SteerPiece[] {
    this.buf += chunk;
    return this.drain(false);
  }

  /** End of stream: anything still held is prose. */
  flush(): SteerPiece[] {
    return this.drain(true);
  }

  private drain(final: boolean): SteerPiece[] {
    const out: SteerPiece[] = [];
    const emit = (text: string) => {
      if (text) out.push({ type: "text", text });
    };
    for (;;) {
      const at = this.buf.indexOf(STEER_FRAME_PREFIX);
      if (at < 0) {
        const hold = final ? 0 : partialPrefixLength(this.buf);
        emit(this.buf.slice(0, this.buf.length - hold));
        this.buf = this.buf.slice(this.buf.length - hold);
        return out;
      }
      emit(this.buf.slice(0, at));
      this.buf = this.buf.slice(at);
      const scan = scanFrame(this.buf);
      if (scan.status === "complete") {
        out.push({ type: "steer", id: scan.id, summary: scan.summary });
        this.buf = this.buf.slice(scan.end);
        continue;
      }
      if (scan.status === "invalid" || final || this.buf.length > MAX_FRAME_CHARS) {
        // Not a frame: release its "[" as text and keep scanning after it.
        emit(this.buf[0] as string);
        this.buf = this.buf.slice(1);
        continue;
      }
      return out;
    }
  }
}

/**
 * A summary-bearing compaction notice at the very start of a turn is protocol, not speech: the
 * summary body is withheld and only a terse receipt is rendered. The reserved form is a leading
 * `<compaction-summary>…</compaction-summary>` block (leading whitespace allowed).
 */
export const COMPACTION_OPEN = "<compaction-summary>";
export const COMPACTION_CLOSE = "</compaction-summary>";
export const COMPACTION_RECEIPT = "✅ Context compacted.";

export type CompactionPiece = { type: "text"; text: string } | { type: "compacted" };

export class CompactionNoticeFilter {
  private state: "undecided" | "inside" | "passthrough" = "undecided";
  private buf = "";

  /** Past the start of the turn: every chunk passes through unchanged. */
  get passthrough(): boolean {
    return this.state === "passthrough";
  }

  push(chunk: string): CompactionPiece[] {
    if (this.state === "passthrough") return chunk ? [{ type: "text", text: chunk }] : [];
    this.buf += chunk;
    return this.decide(false);
  }

  flush(): CompactionPiece[] {
    if (this.state === "passthrough") return [];
    return this.decide(true);
  }

  private decide(final: boolean): CompactionPiece[] {
    if (this.state === "undecided") {
      const lead = this.buf.trimStart();
      if (lead.length < COMPACTION_OPEN.length && COMPACTION_OPEN.startsWith(lead) && !final) return [];
      if (!lead.startsWith(COMPACTION_OPEN)) return this.release();
      this.state = "inside";
    }
    const close = this.buf.indexOf(COMPACTION_CLOSE);
    if (close < 0) {
      // The summary is never speech, even unterminated: at end of stream it is dropped whole.
      return final ? this.compacted("") : [];
    }
    return this.compacted(this.buf.slice(close + COMPACTION_CLOSE.length).replace(/^\s+/, ""));
  }

  private compacted(rest: string): CompactionPiece[] {
    this.state = "passthrough";
    this.buf = "";
    return rest ? [{ type: "compacted" }, { type: "text", text: rest }] : [{ type: "compacted" }];
  }

  private release(): CompactionPiece[] {
    this.state = "passthrough";
    const text = this.buf;
    this.buf = "";
    return text ? [{ type: "text", text }] : [];
  }
}
