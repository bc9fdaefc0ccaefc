/**
 * SlackRenderer: the kit's LiveRenderer on Slack's surface (live-surface.ts). A turn's answer as
 * thread replies: natively streamed by default (chat.startStream, sealed by chat.stopStream), else
 * one live message edited by chat.update, throttled; either way the live message becomes the
 * first chunk. Around it: the status as the thread's assistant status, tool calls as task rows in
 * the stream, the phase ladder as reactions on the user's message (reactions.ts), approval prompts
 * and [OPTIONS:] as Block Kit buttons, images uploaded, the turn-status footer on the last message.
 * A resumed turn that finished deletes what its first run posted beyond this run's messages.
 */
import type { Clock } from "../messaging/base/clock.js";
import { realClock } from "../messaging/base/clock.js";
import { TurnParts } from "../messaging/channel/delivery.js";
import { LiveRenderer } from "../messaging/channel/live-renderer.js";
import type { LadderTimings } from "../messaging/channel/phase-ladder.js";
import type { OutboundFilePolicy } from "../messaging/channel/surface.js";
import type { TurnEnding } from "../messaging/turn/renderer.js";
import type { LiveTarget, SlackWidgets } from "./live.js";
import { slackLiveSurface } from "./live-surface.js";
import { deleteLeftovers, slackReactions } from "./reactions.js";

export { SLACK_PHASE_EMOJIS, SLACK_STALL_EMOJIS } from "./reactions.js";

/** chat.update and appendStream are rate-limited per channel: about one frame a second. */
const DEFAULT_THROTTLE_MS = 1000;

export interface SlackToggles {
  reactionsEnabled: boolean;
  showThinking: boolean;
  /** Native streaming; false (or a refusal by Slack) edits one message instead. */
  streaming: boolean;
}

export interface SlackRendererOptions extends LiveTarget {
  /** The user's message the phase ladder decorates (absent: no ladder). */
  userMessageTs?: string;
  /** Read when the turn starts (the settings can change between turns). */
  toggles: SlackToggles;
  clock?: Clock;
  /** 0: every event is rendered before the next one (tests, goldens); else a frame per interval. */
  throttleMs?: number;
  /** Absent: uploads are off for this turn (a shared channel thread), images stay as text. */
  uploads?: OutboundFilePolicy;
  /** "Approve + auto-approve" beside Approve and Deny (the owner, in a DM). */
  grantButton?: boolean;
  /** Read at turn END, so the footer reports the window as the user leaves it. */
  contextUsage?: () => number | undefined | Promise<number | undefined>;
  ladderTimings?: Partial<LadderTimings>;
  /** Slack refused streaming: later renderers edit instead. */
  onStreamingUnavailable?: () => void;
}

export class SlackRenderer extends LiveRenderer<SlackWidgets> {
  private readonly where: LiveTarget;
  private turnEnded = false;

  constructor(o: SlackRendererOptions) {
    const clock = o.clock ?? realClock;
    const throttleMs = o.throttleMs ?? DEFAULT_THROTTLE_MS;
    const target: LiveTarget = { ...o, parts: o.parts ?? TurnParts.unrecorded() };
    super({
      channel: "slack",
      surface: slackLiveSurface(target, {
        streaming: o.toggles.streaming,
        onStreamingUnavailable: () => {
          o.logger.warn("slack: streaming refused; editing messages instead");
          o.onStreamingUnavailable?.();
        },
        uploads: o.uploads,
        grantButton: o.grantButton === true,
        reactions: o.toggles.reactionsEnabled
          ? slackReactions(target, o.userMessageTs, o.ladderTimings)
          : undefined,
      }),
      timers: clock,
      now: () => clock.now(),
      logger: o.logger,
      throttleMs,
      inlineFrames: throttleMs === 0,
      // The thread's status says the agent is on it from the start.
      frameAtStart: true,
      showThinking: o.toggles.showThinking,
      contextUsage: o.contextUsage,
    });
    this.where = target;
  }

  override async onDone(stopReason: string, ending: TurnEnding = {}): Promise<void> {
    this.turnEnded = true;
    await super.onDone(stopReason, ending);
  }

  override async close(reason?: unknown): Promise<void> {
    await super.close(reason);
    // What a resumed turn's first run posted beyond this run's messages belongs to an answer this
    // one replaced (a longer first try, a prompt this run never asked): once it finished, it goes.
    if (this.turnEnded) await deleteLeftovers(this.where);
  }
}
