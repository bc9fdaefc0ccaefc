/**
 * One segment of a streamed answer (turn start or a steer boundary, up to the next semantic seal),
 * as two forms: the CANONICAL source the model wrote, which steer rotation, [OPTIONS:] extraction and
 * image extraction read, and its PRESENTATION (tables rendered), which the shared StreamingSplitter
 * seals into messages. Tables are converted INTO what the splitter sizes, not at the send seam:
 * cards are longer than the pipes they replace, and converting on the way out could push a sealed
 * message past the hard cap.
 *
 * Only SETTLED canonical text is fed, at line granularity. Held back: a trailing [OPTIONS trailer
 * (complete or still arriving), the earliest local image reference and everything after it (so
 * extraction at the semantic seal sees it whole, in its whole-text fence context, and a length cut
 * can never strand half a link), and a still-growing trailing table (no rotation may strand
 * headerless raw rows, and no live frame shows half a table). Pure: no I/O, no clock. Behind
 * the LiveRenderer's `presentFirst` splitter (channel/live-segments.ts; Discord turns it on).
 */

import { hideLocalRefs, protectedRefSpans } from "../files/outbound-files.js";
import { splitOptionsTrailer } from "./options.js";
import { iterFenceSpans } from "./split.js";
import { StreamingSplitter } from "./streaming-splitter.js";
import { renderTablesWithMetadata } from "./tables/index.js";

export class SegmentBuffer {
  private source = "";
  private fed = 0;
  private splitter: StreamingSplitter;

  /** `reserve`: room held back from every chunk for what the caller puts in front (a steer chip). */
  constructor(
    private readonly limit: number,
    private readonly reserve = 0,
  ) {
    this.splitter = new StreamingSplitter(limit, { reserve });
  }

  append(text: string): void {
    this.source += text;
  }

  /** Canonical text of the segment so far. */
  get canonical(): string {
    return this.source;
  }

  /** Canonical text already fed to the splitter. */
  get fedText(): string {
    return this.source.slice(0, this.fed);
  }

  /** Canonical text not yet fed (the semantic seal transforms this). */
  get remainder(): string {
    return this.source.slice(this.fed);
  }

  /** The message being filled, raw: the splitter's tail and what is not fed yet. */
  get open(): string {
    return this.splitter.tail + this.remainder;
  }

  /** A recognized table is still growing at the end: a live frame holds rather than show half of it. */
  get tableGrowing(): boolean {
    return this.pendingTableStart(this.source) < this.source.length;
  }

  isEmpty(): boolean {
    return this.source.trim() === "";
  }

  /** Feed whatever settled; returns the chunks the splitter sealed (each one message). */
  advance(): string[] {
    const cut = this.settledCut();
    if (cut <= this.fed) return [];
    const delta = this.presentDelta(this.fedText, this.source.slice(0, cut), false);
    if (delta === null) return [];
    this.fed = cut;
    return this.splitter.append(delta);
  }

  /**
   * The live frame: the splitter's tail plus the unsettled remainder, with a partial [OPTIONS and
   * local image markup hidden. Null while a recognized table is still growing (the frame holds).
   */
  livePreview(): string | null {
    if (this.tableGrowing) return null;
    const rest = hideLocalRefs(splitOptionsTrailer(this.remainder, { hidePartial: true }).body);
    return this.splitter.tail + rest;
  }

  /**
   * The semantic seal: `remainder` as the caller transformed it (trailer and extracted images cut)
   * is presented in final form, fed, and every remaining chunk returned. The buffer then resets.
   */
  finish(remainder: string): string[] {
    const delta = this.presentDelta(this.fedText, this.fedText + remainder, true);
    const chunks = [...this.splitter.append(delta ?? remainder), ...this.splitter.finish()];
    this.source = "";
    this.fed = 0;
    this.splitter = new StreamingSplitter(this.limit, { reserve: this.reserve });
    return chunks;
  }

  private settledCut(): number {
    const s = this.source;
    let cut = s.lastIndexOf("\n") + 1;
    // A single line longer than a segment is no table and cannot wait for its newline.
    if (cpLength(s.slice(cut)) > this.limit) cut = s.length;
    cut = Math.min(cut, splitOptionsTrailer(s, { hidePartial: true }).body.length);
    for (const [start] of protectedRefSpans(s)) cut = Math.min(cut, start);
    cut = Math.min(cut, this.pendingTableStart(s));
    return Math.max(cut, this.fed);
  }

  /**
   * Where a still-growing trailing table starts (s.length when there is none): the streaming and
   * final renders differ exactly when the last run may still grow. The run is the trailing block of
   * pipe-bearing lines (the unfinished last line included).
   */
  private pendingTableStart(s: string): number {
    const lines = s.split("\n");
    if (!lines.slice(-2).join("\n").includes("|")) return s.length;
    const opts = { policy: "auto", nativeTables: false } as const;
    const streaming = renderTablesWithMetadata(s, { ...opts, final: false }).text;
    if (streaming === renderTablesWithMetadata(s, { ...opts, final: true }).text) return s.length;
    // The unfinished last line belongs to the run whatever it holds so far.
    let i = lines.length - 1;
    let start = s.length - (lines[i] as string).length;
    for (i -= 1; i >= 0 && (lines[i] as string).includes("|"); i--) start -= (lines[i] as string).length + 1;
    return start;
  }

  /**
   * The presentation added by going from `before` to `after` (canonical, `after` extends `before`).
   * A table whose adaptive grid would itself overflow a segment is re-rendered as cards: the splitter
   * would reopen a cut grid fence, leaving its header row on the first message only, while cards
   * stay readable on their own. Null when the presentations disagree on the shared prefix.
   */
  private presentDelta(before: string, after: string, final: boolean): string | null {
    const render = (text: string, policy: "auto" | "cards", f: boolean) =>
      renderTablesWithMetadata(text, { policy, nativeTables: false, final: f }).text;
    const old = render(before, "auto", false);
    const next = renderTablesWithMetadata(after, { policy: "auto", nativeTables: false, final });
    if (!next.text.startsWith(old)) return final ? next.text.slice(commonPrefix(old, next.text)) : null;
    const delta = next.text.slice(old.length);
    if (!next.generatedGrid || !this.hasOversizeFence(delta)) return delta;
    const oldCards = render(before, "cards", false);
    const nextCards = render(after, "cards", final);
    return nextCards.startsWith(oldCards) ? nextCards.slice(oldCards.length) : delta;
  }

  private hasOversizeFence(text: string): boolean {
    if (!text.includes("```")) return false;
    for (const [start, end] of iterFenceSpans(text))
      if (cpLength(text.slice(start, end)) > this.limit) return true;
    return false;
  }
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

function cpLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}
