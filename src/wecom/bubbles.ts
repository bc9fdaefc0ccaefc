/**
 * The kit's live message on WeCom: bubbles on the message's req_id, each a stream id written by
 * REPLACEMENT (every frame carries the bubble's whole text, `finish` seals it). Frames go out one at
 * a time and each waits for WeCom's verdict (client.ts), so a bubble knows which of its frames were
 * accepted, and progress is counted on the RAW segment (offsets into the source as the kit hands it
 * over), never on a presented slice (a transform changes lengths).
 *
 * Rolling: a bubble dies at WeCom's 10-minute stream lifetime (or is refused for good), and the
 * answer must not die with it. Before each frame the bubble is checked: aged, it is sealed as it
 * stands (its last accepted frame, without the status line) and a new stream id continues with
 * exactly what the old one lacks (one frame earlier when the latest verdict was a refusal: that
 * frame may be the one missing); refused for good (846608), the continuation resumes after what it
 * shows (a repeat at worst, never a hole). A req_id that no longer routes (846605) leaves no stream.
 */
import type { Clock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { TurnParts } from "../messaging/channel/delivery.js";
import { closeOpenFence } from "../messaging/text/fences.js";
import { splitMarkdownSafe } from "../messaging/text/split.js";
import type { FrameVerdict } from "./client.js";
import { composeFrame, headExtent, resumePoint } from "./frame.js";
import { WECOM_ANSWER_CHARS, WECOM_ROLL_AGE_MS } from "./limits.js";
import type { WeComWire } from "./outbox.js";
import type { ThinkBlock } from "./think-block.js";

/** What an aged bubble that showed no answer yet is sealed with before the work moves on below. */
const CONTINUED = "⏬ (continued below)";
/** 846608: this stream id is closed; any other terminal refusal closes every stream of the req_id. */
const ERR_STREAM_CLOSED = 846_608;

interface Bubble {
  streamId: string;
  /** Raw offset into the segment where this bubble begins, and the fence it reopens there. */
  start: number;
  reopen: string;
  /** Raw offset the bubble SHOWS: covered by its last frame WeCom accepted. */
  shown: number;
  openedAt: number;
  frames: number;
  /** Refused for good (846608): this stream id can never be written again. */
  dead: boolean;
  /** The last ACCEPTED frame without its status line: what the bubble is sealed with when it ages out. */
  lastBody: string;
  lastContent: string;
  /** The reasoning this bubble shows begins here (earlier reasoning went with earlier bubbles). */
  thinkFrom: number;
}

/** A frame WeCom did not accept (refused, never answered, or never sent). */
export class FrameNotTaken extends Error {
  constructor(readonly verdict: FrameVerdict) {
    super(`wecom: the frame was not accepted (${verdict.kind})`);
  }
}

export interface BubbleStreamOptions {
  wire: WeComWire;
  reqId: string | undefined;
  clock: Clock;
  parts: TurnParts;
  think: ThinkBlock;
  /** The per-slice transform before a slice is sent (tables, then display redaction). */
  present: (slice: string) => string;
  logger: Logger;
  /** A frame is due: an aged bubble is rolled on time even while the agent is silent. */
  due: () => void;
}

export class BubbleStream {
  private bubble: Bubble | null = null;
  /** The next seal's start in its segment, and whether the bubble rolls first (decided by segment()). */
  private plan: { start: number; reopen: string; roll: boolean } | null = null;
  /** The req_id routes no more (846605), or there was none: no bubble can be streamed. */
  private streamless: boolean;
  private rollTimer: unknown = null;

  constructor(private readonly o: BubbleStreamOptions) {
    this.streamless = !o.reqId;
  }

  /** A bubble can still carry the answer (else everything goes by push). */
  get usable(): boolean {
    return !this.streamless;
  }

  /** The bubble must be written now, changed or not: it ages out, or died and is continued. */
  get expiring(): boolean {
    const b = this.bubble;
    return b !== null && !this.streamless && this.mustRoll(b);
  }

  /** A live message begins: its first bubble opens where the segment begins. */
  begin(): void {
    this.plan = null;
    this.bubble = this.streamless ? null : this.open(0, "");
  }

  /** What a live frame of `source` shows in the bubble as it stands: its presented head. */
  preview(source: string): string {
    return this.view(this.bubble, source).text;
  }

  /** A live frame of `source` under `footer`; the verdict, null when the bubble shows exactly this. */
  async frame(source: string, footer: string): Promise<FrameVerdict | null> {
    const b = await this.current(source);
    if (!b) return { kind: "unsent" };
    const view = this.view(b, source);
    const content = composeFrame({ think: this.think(b), body: view.text, footer });
    if (content === b.lastContent) return null;
    const verdict = await this.send(b, content, false, view.covers);
    if (verdict.kind === "accepted" && view.text)
      b.lastBody = composeFrame({ think: this.think(b), body: view.text });
    return verdict;
  }

  /**
   * The part of `source` (a seal's whole segment) the sealing bubble must still show, from where
   * the open bubble begins; whether it rolls first is decided here, once, for sealHead.
   */
  segment(source: string): string {
    const b = this.bubble;
    if (!b) {
      this.plan = null;
      return source;
    }
    // No stream left: the bubble's whole slice goes by push (what it showed too: never a hole).
    const roll = !this.streamless && this.mustRoll(b);
    const at = roll ? resumePoint(source, b.shown) : { start: b.start, reopen: b.reopen };
    this.plan = { ...at, roll };
    return at.reopen + source.slice(at.start);
  }

  /** A seal's head, sealed into the bubble (one opened for it when none is): true once WeCom accepted it. */
  async sealHead(body: string): Promise<boolean> {
    const plan = this.plan;
    this.plan = null;
    let b = this.bubble;
    if (b && plan?.roll) b = await this.roll(b, plan);
    if (!b && !this.streamless) b = this.open(0, "");
    this.retire();
    if (!b || this.streamless) return false;
    // The client has already sent an unacknowledged seal again; still no evidence is no delivery.
    const verdict = await this.send(b, composeFrame({ think: this.think(b), body }), true);
    if (verdict.kind === "accepted") return true;
    this.o.logger.warn("wecom: the sealing frame did not land; pushing the answer's head once", {
      verdict: verdict.kind,
    });
    return false;
  }

  /** The open bubble (no answer shown in it) becomes `content`, sealed; false when no bubble can. */
  async become(content: string): Promise<boolean> {
    const b = this.bubble;
    this.bubble = null;
    this.clearRollTimer();
    if (!b || b.dead || this.streamless) return false;
    return (await this.send(b, content, true)).kind === "accepted";
  }

  /** The open bubble (no answer in it) is sealed with `idle`: the prompt it waits on comes below. */
  async pause(idle: string): Promise<void> {
    const b = this.bubble;
    this.retire();
    if (b && b.frames > 0 && !b.dead && !this.streamless)
      await this.send(b, composeFrame({ think: this.think(b), body: idle }), true);
  }

  /** The turn is over: no timer outlives it. */
  stop(): void {
    this.clearRollTimer();
  }

  private mustRoll(b: Bubble): boolean {
    return b.dead || (b.frames > 0 && this.o.clock.now() - b.openedAt >= WECOM_ROLL_AGE_MS);
  }

  /** The bubble to write now: rolled if it aged out or was refused for good. */
  private async current(source: string): Promise<Bubble | null> {
    const b = this.bubble;
    if (!b || this.streamless) return null;
    return this.mustRoll(b) ? this.roll(b, resumePoint(source, b.shown)) : b;
  }

  /** An aged bubble sealed as it stands; a new stream id continues at `at` (after what it shows). */
  private async roll(old: Bubble, at: { start: number; reopen: string }): Promise<Bubble | null> {
    if (!old.dead)
      await this.send(old, old.lastBody || composeFrame({ think: this.think(old), body: CONTINUED }), true);
    if (this.streamless) return null;
    this.o.think.cut();
    return this.open(at.start, at.reopen);
  }

  private open(start: number, reopen: string): Bubble {
    const b: Bubble = {
      streamId: this.o.parts.nextKey(),
      start,
      reopen,
      shown: start,
      openedAt: this.o.clock.now(),
      frames: 0,
      dead: false,
      lastBody: "",
      lastContent: "",
      thinkFrom: this.o.think.start,
    };
    this.bubble = b;
    this.clearRollTimer();
    // Rolled on time even when the agent is silent: the old bubble is sealed before WeCom kills it.
    this.rollTimer = this.o.clock.setTimeout(() => this.o.due(), WECOM_ROLL_AGE_MS + 1);
    return b;
  }

  /** The bubble is done: the next one shows only the reasoning after it. */
  private retire(): void {
    this.o.think.cut();
    this.bubble = null;
    this.clearRollTimer();
  }

  private clearRollTimer(): void {
    if (this.rollTimer !== null) this.o.clock.clearTimeout(this.rollTimer);
    this.rollTimer = null;
  }

  /** One frame on the bubble; an accepted one moves what the bubble shows to `covers`. */
  private async send(b: Bubble, content: string, finish: boolean, covers = b.shown): Promise<FrameVerdict> {
    const reqId = this.o.reqId;
    if (!reqId) return { kind: "unsent" };
    const verdict = await this.o.wire.respond(reqId, b.streamId, content, finish);
    b.frames += 1;
    b.lastContent = content;
    if (verdict.kind === "accepted") b.shown = covers;
    if (verdict.kind === "refused" && verdict.terminal) {
      b.dead = true;
      // 846605: the req_id itself no longer routes, so no other bubble can be opened on it.
      if (verdict.errcode !== ERR_STREAM_CLOSED) this.streamless = true;
    }
    return verdict;
  }

  /** The head of the bubble's slice of `source` (a slice may be longer than a bubble), and its raw reach. */
  private view(b: Bubble | null, source: string): { text: string; covers: number } {
    const start = b?.start ?? 0;
    const reopen = b?.reopen ?? "";
    const seg = reopen + source.slice(start);
    const chunks =
      Array.from(seg).length <= WECOM_ANSWER_CHARS ? [seg] : splitMarkdownSafe(seg, WECOM_ANSWER_CHARS);
    const head = chunks[0] ?? "";
    const extent = chunks.length === 1 ? seg.length : headExtent(seg, head);
    const text = head.trim() ? this.o.present(closeOpenFence(head)) : "";
    return { text, covers: start + Math.max(0, extent - reopen.length) };
  }

  private think(b: Bubble): string {
    return this.o.think.since(b.thinkFrom);
  }
}
