/**
 * DiscordRenderer: the kit's LiveRenderer on Discord's surface (live-surface.ts). One live message
 * edited in place (throttled under Discord's edit budget), sealed into further messages with tables
 * presented as the text streams (grids or cards, never a table cut raw), rotated at a steer with a
 * quote chip, closed with [OPTIONS:] buttons, attached images and a -# turn-status footer. The
 * phase-reaction ladder decorates the user's message; show_thinking posts the reasoning once, as
 * subtext, ahead of the answer.
 */
import type { Clock } from "../messaging/base/clock.js";
import { realClock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import { TurnParts } from "../messaging/channel/delivery.js";
import { LiveRenderer } from "../messaging/channel/live-renderer.js";
import type { LadderTimings } from "../messaging/channel/phase-ladder.js";
import type { AuditSink } from "../messaging/security/audit.js";
import { discordLiveSurface } from "./live-surface.js";
import type { ActionRow } from "./payload.js";
import type { DiscordRest } from "./transport.js";
import type { UploadPolicy } from "./uploads.js";

export { DISCORD_PHASE_EMOJIS, DISCORD_STALL_EMOJIS } from "./reactions.js";

/** Discord allows about five edits per five seconds per channel. */
const DEFAULT_THROTTLE_MS = 1200;

export interface DiscordRendererOptions {
  rest: DiscordRest;
  channelId: string;
  /** The user's message the phase ladder decorates (absent: no ladder, e.g. an injected turn). */
  userMessageId?: string;
  /** Set per channel in discord.reactionsEnabled / discord.showThinking. */
  toggles: { reactionsEnabled: boolean; showThinking: boolean };
  audit: AuditSink;
  logger: Logger;
  clock?: Clock;
  throttleMs?: number;
  /** Absent: uploads off for this turn, and image paths stay visible as text. */
  uploads?: UploadPolicy;
  /** Read at turn END, so the chip reports the window as the user leaves it. */
  contextUsage?: () => number | undefined | Promise<number | undefined>;
  ladderTimings?: Partial<LadderTimings>;
  /** The turn's outbound parts: every message this renderer creates goes through them. */
  parts?: TurnParts;
}

export class DiscordRenderer extends LiveRenderer<ActionRow[]> {
  constructor(o: DiscordRendererOptions) {
    const clock = o.clock ?? realClock;
    const messageId = o.toggles.reactionsEnabled ? o.userMessageId : undefined;
    super({
      channel: "discord",
      surface: discordLiveSurface(o.rest, {
        channelId: o.channelId,
        parts: o.parts ?? TurnParts.unrecorded(),
        logger: o.logger,
        audit: o.audit,
        uploads: o.uploads,
        ladder: messageId ? { messageId, timings: o.ladderTimings } : undefined,
      }),
      timers: clock,
      now: () => clock.now(),
      logger: o.logger,
      throttleMs: o.throttleMs ?? DEFAULT_THROTTLE_MS,
      // Cards are longer than the pipes they replace: tables are presented before the cut.
      presentFirst: true,
      showThinking: o.toggles.showThinking,
      contextUsage: o.contextUsage,
    });
  }
}
