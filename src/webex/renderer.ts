/**
 * WebexRenderer: the kit's LiveRenderer on Webex's surface (live-surface.ts). Webex allows at most
 * 10 edits per message and streams nothing, so a turn is a placeholder posted at once, a few status
 * frames on it (the running tool plus a bounded tail of the answer) at a doubling interval, at most
 * 8 a turn (edit-budget.ts), and then the answer, which takes the placeholder with one edit (a fresh
 * message if that edit is refused) and follows in further messages. No stall marks: each would be
 * an edit. At an approval prompt the answer so far is sealed above it; the prompt is an editable
 * text message (its outcome is written into it) with a card beside it (a card cannot be edited, so
 * typed 1/2 is primary). Every string is redacted on the form Webex renders before it leaves.
 */
import type { Clock } from "../messaging/base/clock.js";
import { realClock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import { TurnParts } from "../messaging/channel/delivery.js";
import { LiveRenderer } from "../messaging/channel/live-renderer.js";
import type { OutboundFilePolicy } from "../messaging/channel/surface.js";
import type { AuditSink } from "../messaging/security/audit.js";
import type { WebexWidgets } from "./cards.js";
import { webexLiveSurface } from "./live-surface.js";
import type { WebexRest } from "./transport.js";
import type { WebexUpload } from "./uploads.js";

export type { WebexUpload } from "./uploads.js";

const DEFAULT_STATUS_START_MS = 2000;

export interface WebexRendererOptions {
  rest: WebexRest;
  roomId: string;
  logger: Logger;
  clock?: Clock;
  /** The first status frame's delay; each later one waits twice as long as the one before. */
  statusStartMs?: number;
  parts?: TurnParts;
  /** Offers of an options card, held by the dispatcher for a single press. */
  holdOffers?: (messageId: string, labels: readonly string[]) => void;
  contextUsage?: () => number | undefined | Promise<number | undefined>;
  /** Absent: no uploads (a space, or a channel without them); image paths stay visible as text. */
  uploads?: OutboundFilePolicy;
  audit?: AuditSink;
  upload?: WebexUpload;
}

export class WebexRenderer extends LiveRenderer<WebexWidgets> {
  constructor(o: WebexRendererOptions) {
    const clock = o.clock ?? realClock;
    // A card that did not land fails the turn's delivery (bound once the renderer exists).
    const failed = { mark: () => {} };
    const surface = webexLiveSurface({
      ...o,
      parts: o.parts ?? TurnParts.unrecorded(),
      lost: () => failed.mark(),
    });
    super({
      channel: "webex",
      surface,
      timers: clock,
      now: () => clock.now(),
      logger: o.logger,
      throttleMs: o.statusStartMs ?? DEFAULT_STATUS_START_MS,
      // Doubling: a long turn spends its few edits across its length, not in its first seconds.
      throttleGrowth: 2,
      openAtOnce: "turn",
      stallMarks: false,
      framesLeft: () => surface.framesLeft(),
      // A prompt whose outcome edit Webex refused gets the outcome below it.
      postOnRefusal: true,
      contextUsage: o.contextUsage,
    });
    failed.mark = () => {
      this.deliveryFailed = true;
    };
  }
}
