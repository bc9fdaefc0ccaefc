/**
 * The timers a live turn runs, in one place so that `close` can stop them all: the edit throttle
 * (one frame waiting at a time), the stall marks (🥱 after a quiet spell, 😨 after a longer one;
 * read from the clock, re-rendered when a threshold passes; a prompt waiting on a human is no
 * stall), and "typing…" re-sent while the agent works. Layer: messaging.
 */
import type { Timers } from "../base/clock.js";
import type { Logger } from "../base/logger.js";
import { DEFAULT_LADDER_TIMINGS } from "./phase-ladder.js";

const STALL_SOFT = "🥱";
const STALL_HARD = "😨";

export interface LivePacingOptions {
  timers: Timers;
  now: () => number;
  logger: Logger;
  /** Names the channel in log lines. */
  channel: string;
  /** Minimum gap between two live frames (a client's own pacing still applies underneath). */
  throttleMs: number;
  /** The first frame of a message waits this long: a quick answer arrives whole, not as a preview first. */
  firstFrameMs?: number | undefined;
  /** Quiet this long: the footer shows 🥱, then 😨 (a prompt waiting on a human is no stall). */
  stallSoftMs?: number;
  stallHardMs?: number;
  /**
   * A frame that opens a live message goes out at once, not at the throttle's slot (first-token
   * latency). "turn": only the turn's first (a placeholder); later ones keep the throttle's pace.
   */
  openAtOnce?: boolean | "turn" | undefined;
  /** Each gap is this many times the one before: a platform that counts edits spreads them over the turn. */
  throttleGrowth?: number | undefined;
  /** False: no stall marks (each would be an edit a platform counts). Default true. */
  stallMarks?: boolean | undefined;
  /** A platform that caps edits: false once no live frame is left, and none is scheduled then. */
  framesLeft?: (() => boolean) | undefined;
  /** Every frame runs at once and the event that asked for it waits for it (throttle 0: tests, goldens). */
  inlineFrames?: boolean | undefined;
  /** The first frame goes out as the turn starts (its status is seen at once), not at the first event. */
  frameAtStart?: boolean | undefined;
  /** Runs one live frame (queued by the caller behind its other platform calls); resolves once it ran. */
  frame: () => Promise<void> | void;
  typing?: LiveTyping | undefined;
}

/** "Typing…", re-sent while the agent works; `stop` for an indicator that stays on until turned off. */
export interface LiveTyping {
  everyMs: number;
  send(): Promise<void>;
  /** Turns it off: at the end, and while a prompt waits on a human (it would say the agent types). */
  stop?(): Promise<void>;
}

export class LivePacing {
  private readonly stallSoftMs: number;
  private readonly stallHardMs: number;
  private lastProgressAt: number;
  private waitingOnHuman = false;
  private stopped = false;
  private editTimer: unknown = null;
  private lastFrameAt = 0;
  private typingTimer: unknown = null;
  /** Turned off while a human decides; the agent's next move turns it on again. */
  private typingPaused = false;
  /** No frame of the current message yet: the next one waits `firstFrameMs`. */
  private fresh = true;
  private stallTimers: unknown[] = [];
  /** The throttle's current gap (it grows by `throttleGrowth` with each frame scheduled). */
  private gapMs: number;
  /** The turn's first message was opened (by `openAtOnce: "turn"`). */
  private opened = false;

  constructor(private readonly o: LivePacingOptions) {
    this.gapMs = o.throttleMs;
    this.stallSoftMs = o.stallSoftMs ?? DEFAULT_LADDER_TIMINGS.stallSoftMs;
    this.stallHardMs = o.stallHardMs ?? DEFAULT_LADDER_TIMINGS.stallHardMs;
    this.lastProgressAt = o.now();
  }

  start(): void {
    this.keepTyping();
    this.armStallTimers();
  }

  /** The agent did something: the stall marks start counting again. */
  progress(): void {
    this.lastProgressAt = this.o.now();
    this.waitingOnHuman = false;
    this.armStallTimers();
    if (this.typingPaused) {
      this.typingPaused = false;
      this.keepTyping();
    }
  }

  /** A prompt waits on a human: no stall mark until the agent moves again. */
  waitOnHuman(): void {
    this.waitingOnHuman = true;
    this.clearStallTimers();
    if (this.o.typing?.stop && this.typingTimer !== null) {
      this.typingPaused = true;
      this.stopTyping();
    }
  }

  /** A frame at the throttle's next slot (one pending at a time); inline, the frame itself. */
  schedule(): Promise<void> | undefined {
    if (this.editTimer !== null || this.stopped || this.o.framesLeft?.() === false) return;
    if (this.o.inlineFrames) return Promise.resolve(this.o.frame());
    const first = this.fresh ? (this.o.firstFrameMs ?? 0) : 0;
    this.fresh = false;
    const wait = Math.max(first, this.lastFrameAt + this.gapMs - this.o.now());
    this.gapMs *= this.o.throttleGrowth ?? 1;
    this.editTimer = this.o.timers.setTimeout(() => {
      this.editTimer = null;
      void this.o.frame();
    }, wait);
  }

  /** The turn's first frame, when it goes out as the turn starts (`frameAtStart`). */
  first(): Promise<void> | undefined {
    return this.o.frameAtStart ? this.schedule() : undefined;
  }

  /** A frame that opens a live message: run at once when `openAtOnce` (true), else left to schedule(). */
  open(): boolean {
    if (!this.o.openAtOnce || this.stopped || this.opened) return false;
    this.opened = this.o.openAtOnce === "turn";
    this.cancelFrame();
    // The throttle counts from this frame now, not from when its platform call ends.
    this.framed();
    void this.o.frame();
    return true;
  }

  /** A frame went out now: the throttle counts from here. */
  framed(): void {
    this.lastFrameAt = this.o.now();
  }

  cancelFrame(): void {
    if (this.editTimer !== null) this.o.timers.clearTimeout(this.editTimer);
    this.editTimer = null;
    this.fresh = true;
  }

  /** 🥱 / 😨 / "" as of now. */
  stallMark(): string {
    if (this.waitingOnHuman || this.stopped || this.o.stallMarks === false) return "";
    const quiet = this.o.now() - this.lastProgressAt;
    return quiet >= this.stallHardMs ? STALL_HARD : quiet >= this.stallSoftMs ? STALL_SOFT : "";
  }

  /** The turn is over: no timer outlives it. */
  stop(): void {
    this.stopped = true;
    this.stopTyping();
    this.clearStallTimers();
    this.cancelFrame();
  }

  private armStallTimers(): void {
    this.clearStallTimers();
    if (this.stopped || this.waitingOnHuman || this.o.stallMarks === false) return;
    for (const ms of [this.stallSoftMs, this.stallHardMs])
      this.stallTimers.push(this.o.timers.setTimeout(() => this.schedule(), ms + 1));
  }

  private clearStallTimers(): void {
    for (const t of this.stallTimers) this.o.timers.clearTimeout(t);
    this.stallTimers = [];
  }

  private stopTyping(): void {
    if (this.typingTimer === null) return;
    this.o.timers.clearTimeout(this.typingTimer);
    this.typingTimer = null;
    this.o.typing?.stop?.().catch((error: unknown) => {
      this.o.logger.debug(`${this.o.channel}: typing indicator failed`, { error: String(error) });
    });
  }

  private keepTyping(): void {
    const typing = this.o.typing;
    if (this.stopped || !typing) return;
    typing.send().catch((error: unknown) => {
      this.o.logger.debug(`${this.o.channel}: typing indicator failed`, { error: String(error) });
    });
    this.typingTimer = this.o.timers.setTimeout(() => this.keepTyping(), typing.everyMs);
  }
}
