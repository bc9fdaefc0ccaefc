/**
 * The phase-reaction ladder on the user's message, as the LiveRenderer drives it: armed lazily, and
 * only when there is something to decorate (the surface brings a sink for that message), never
 * after close (a late event must not arm timers that outlive the turn). Layer: messaging.
 */
import type { Clock } from "../base/clock.js";
import type { Logger } from "../base/logger.js";
import type { ToolChange } from "../turn/renderer.js";
import type { LadderTimings, PhaseEmojis, ReactionSink, StallEmojis } from "./phase-ladder.js";
import { PhaseReactionLadder, phaseForToolTitle } from "./phase-ladder.js";

/** What a surface brings to decorate the message a turn answers. */
export interface LiveReactions {
  sink: ReactionSink;
  emojis: PhaseEmojis;
  stall?: StallEmojis;
  timings?: Partial<LadderTimings>;
}

export class LiveDecor {
  private ladder: PhaseReactionLadder | null = null;
  private closed = false;

  constructor(
    private readonly reactions: LiveReactions | undefined,
    private readonly clock: Clock,
    private readonly logger: Pick<Logger, "debug">,
  ) {}

  started(): void {
    this.arm()?.setPhase("queued");
  }

  /** Text or reasoning arrived: the agent is thinking aloud. */
  thinking(): void {
    this.moved("thinking");
  }

  toolCalled(title: string, kind: string | undefined): void {
    this.moved(phaseForToolTitle(title, kind));
  }

  toolChanged(change: ToolChange): void {
    // A renamed or reclassified tool moves the phase; any other update only says it is alive.
    if (change.title !== undefined || change.toolKind !== undefined)
      this.moved(phaseForToolTitle(change.title ?? "", change.toolKind));
    else this.arm()?.onProgress();
  }

  /** A human decides: no stall mark while the prompt waits. */
  pause(): void {
    this.ladder?.pause();
  }

  resume(): void {
    this.ladder?.resume();
  }

  /** The end: a failed turn marks the user's message even when it failed before anything armed it. */
  finish(failed: boolean): void {
    (failed ? this.arm() : this.ladder)?.finalize(failed);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.ladder?.close();
  }

  private moved(phase: string): void {
    const ladder = this.arm();
    ladder?.onProgress();
    ladder?.setPhase(phase);
  }

  private arm(): PhaseReactionLadder | null {
    if (this.ladder || this.closed || !this.reactions) return this.ladder;
    const { sink, emojis, stall, timings } = this.reactions;
    this.ladder = new PhaseReactionLadder({
      sink,
      emojis,
      ...(stall ? { stall } : {}),
      ...(timings ? { timings } : {}),
      clock: this.clock,
      logger: this.logger,
    });
    return this.ladder;
  }
}
