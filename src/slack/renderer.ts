/**
 * SlackRenderer: the kit's LiveRenderer on Slack's surface (live-surface.ts). A turn's answer as
 * thread replies: natively streamed by default (chat.startStream, sealed by chat.stopStream), else
 * one live message edited by chat.update, throttled; either way the live message becomes the first
 * chunk. Around it: the status as the thread's assistant status, tool calls as task rows in the
 * stream, the phase ladder as reactions on the user's message, approval prompts and [OPTIONS:] as
 * Block Kit buttons, images uploaded, and the turn-status footer on the last message.
 */
import { realClock } from "../messaging/base/clock.js";
import { TurnParts } from "../messaging/channel/delivery.js";
import { LiveRenderer } from "../messaging/channel/live-renderer.js";
import type { TurnEnding } from "../messaging/turn/renderer.js";
import type { LiveTarget, SlackWidgets } from "./live.js";
import type { SlackRendererOptions } from "./live-surface.js";
import { slackLiveSurface } from "./live-surface.js";
import { deleteLeftovers } from "./reactions.js";

export type { SlackRendererOptions, SlackToggles } from "./live-surface.js";
export { SLACK_PHASE_EMOJIS, SLACK_STALL_EMOJIS } from "./reactions.js";

/** chat.update and appendStream are rate-limited per channel: about one frame a second. */
const DEFAULT_THROTTLE_MS = 1000;

export class SlackRenderer extends LiveRenderer<SlackWidgets> {
  private readonly where: LiveTarget;
  private turnEnded = false;

  constructor(o: SlackRendererOptions) {
    const clock = o.clock ?? realClock;
    const throttleMs = o.throttleMs ?? DEFAULT_THROTTLE_MS;
    const where: LiveTarget = { ...o, parts: o.parts ?? TurnParts.unrecorded() };
    super({
      channel: "slack",
      surface: slackLiveSurface(where, o),
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
    this.where = where;
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
