/**
 * TelegramRenderer: the kit's LiveRenderer on Telegram's surface (live-surface.ts). One live
 * message edited in place (throttled; the client paces per chat and honours 429s underneath),
 * sealed into Telegram-HTML messages with keyboards for choices and prompts, 🥱/😨 stall marks in
 * the live footer, "typing…" while the agent works, and photo albums after the text.
 */
import type { Timers } from "../messaging/base/clock.js";
import { realClock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import { silentLogger } from "../messaging/base/logger.js";
import { TurnParts } from "../messaging/channel/delivery.js";
import { LiveRenderer } from "../messaging/channel/live-renderer.js";
import { telegramLiveSurface } from "./live-surface.js";
import type { TelegramTransport } from "./transport.js";
import type { UploadPolicy } from "./uploads.js";
import type { TgInlineKeyboard } from "./wire.js";

export interface TelegramRendererOptions {
  chatId: string;
  threadId?: string | undefined;
  timers?: Timers;
  now?: () => number;
  /** Minimum gap between two live edits (the client's per-chat pace still applies underneath). */
  throttleMs?: number;
  /** Typing expires after 5 s on Telegram; re-sent this often while the agent works. */
  typingIntervalMs?: number;
  stallSoftMs?: number;
  stallHardMs?: number;
  logger?: Logger;
  /** Local images to upload after the text; absent = paths stay text (the honest degradation). */
  uploads?: UploadPolicy;
  /** The turn's outbound parts: every message this renderer creates goes through them. */
  parts?: TurnParts;
}

export class TelegramRenderer extends LiveRenderer<TgInlineKeyboard> {
  constructor(transport: TelegramTransport, o: TelegramRendererOptions) {
    const logger = o.logger ?? silentLogger;
    super({
      channel: "telegram",
      surface: telegramLiveSurface(transport, {
        chatId: o.chatId,
        threadId: o.threadId,
        typingIntervalMs: o.typingIntervalMs ?? 4000,
        logger,
        parts: o.parts ?? TurnParts.unrecorded(),
        uploads: o.uploads,
      }),
      timers: o.timers ?? realClock,
      now: o.now ?? (() => Date.now()),
      logger,
      throttleMs: o.throttleMs ?? 1000,
      ...(o.stallSoftMs === undefined ? {} : { stallSoftMs: o.stallSoftMs }),
      ...(o.stallHardMs === undefined ? {} : { stallHardMs: o.stallHardMs }),
    });
  }
}
