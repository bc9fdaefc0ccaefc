/**
 * WebChatRenderer: the kit's LiveRenderer on the web chat's surface (live-surface.ts). One live
 * bubble edited in place (throttled, though the turn shows at once and each bubble's first words go
 * out the moment they come), sealed into final bubbles with [OPTIONS:] chips, approval buttons and
 * the turn-status line in the bubble's own status field. Every string reaches the page through the
 * transport's one render path (display redaction, then markdown-it with raw HTML off).
 */
import type { Timers } from "../messaging/base/clock.js";
import { realClock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import { silentLogger } from "../messaging/base/logger.js";
import { TurnParts } from "../messaging/channel/delivery.js";
import { LiveRenderer } from "../messaging/channel/live-renderer.js";
import type { BubbleWidgets } from "./live-surface.js";
import { webchatLiveSurface } from "./live-surface.js";
import type { WebChatTransport } from "./transport.js";

export interface WebChatRendererOptions {
  timers?: Timers;
  now?: () => number;
  /** Minimum gap between two edits of the live bubble. */
  throttleMs?: number;
  logger?: Logger;
  /** The turn's outbound parts: each bubble this renderer creates is named by the next part key. */
  parts?: TurnParts;
}

export class WebChatRenderer extends LiveRenderer<BubbleWidgets> {
  constructor(transport: WebChatTransport, conversationId: string, options: WebChatRendererOptions = {}) {
    super({
      channel: "webchat",
      surface: webchatLiveSurface(transport, conversationId, options.parts ?? TurnParts.unrecorded()),
      timers: options.timers ?? realClock,
      now: options.now ?? (() => Date.now()),
      logger: options.logger ?? silentLogger,
      // An edit is a local socket push: a short throttle keeps the stream smooth.
      throttleMs: options.throttleMs ?? 80,
      // No typing indicator on a page: the live bubble is the sign of a turn under way, and the
      // first words are what a user waits for.
      openAtOnce: true,
    });
  }
}
