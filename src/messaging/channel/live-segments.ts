/**
 * What the LiveRenderer cuts a segment with. By default the streaming splitter over the model's
 * source, tables presented at each seal. `presentFirst` (off by default): the segment buffer
 * instead, for a platform whose tables become grids or cards. There tables are presented AS the
 * text streams, before the splitter sizes it: cards are longer than the pipes they replace, and a
 * table cut raw leaves every message after the first with headerless rows. Only settled lines are
 * fed (a trailing [OPTIONS:, a local image reference and what follows it wait for the semantic seal,
 * so extraction sees them whole), and a live frame is held while a table still grows. Layer: messaging.
 */
import { SegmentBuffer } from "../text/segment-buffer.js";
import { StreamingSplitter } from "../text/streaming-splitter.js";

/** The splitter as the LiveRenderer drives it (StreamingSplitter's shape). */
export interface LiveSplitter {
  /** Feed more text; the chunks it sealed (each one message). */
  append(text: string): string[];
  /** The message being filled: what a live frame shows ("" for none). */
  readonly tail: string;
  /** What of the tail can no longer change (a native stream appends only that). */
  readonly committed: string;
  /** Every chunk left, the tail included. */
  finish(): string[];
  /** A live frame waits (a table still growing): showing it now would show half of it. */
  readonly held?: boolean;
}

/** `reserve`: room kept in each chunk for a steer chip put in front of the first. */
export function liveSplitter(cap: number, reserve: number, presentFirst: boolean | undefined): LiveSplitter {
  return presentFirst ? new PresentedSegment(cap, reserve) : new StreamingSplitter(cap, { reserve });
}

class PresentedSegment implements LiveSplitter {
  private readonly buffer: SegmentBuffer;
  /** UTF-16 units of the unfinished line. */
  private line = 0;

  constructor(
    private readonly cap: number,
    reserve: number,
  ) {
    this.buffer = new SegmentBuffer(cap, reserve);
  }

  append(text: string): string[] {
    this.buffer.append(text);
    const newline = text.lastIndexOf("\n");
    this.line = newline < 0 ? this.line + text.length : text.length - newline - 1;
    // Only a line break settles text, or a line longer than a message (fed whole): asking on every
    // chunk would re-present the whole segment per token.
    return newline >= 0 || this.line > this.cap ? this.buffer.advance() : [];
  }

  get tail(): string {
    return this.buffer.open;
  }

  /** Settled lines are already presented and sealed per message: nothing here is for a stream. */
  get committed(): string {
    return "";
  }

  get held(): boolean {
    return this.buffer.tableGrowing;
  }

  finish(): string[] {
    return this.buffer.finish(this.buffer.remainder);
  }
}
