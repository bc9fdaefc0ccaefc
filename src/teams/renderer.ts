/**
 * TeamsRenderer: the kit's LiveRenderer on Teams' surface (live-surface.ts). The typing indicator
 * kept alive while the agent works, and one live message edited in place with the status line as
 * its last line, throttled well inside Teams' seven calls a second per conversation (the Connector
 * edge paces underneath). An approval prompt is an Adaptive Card (a live message showing only its
 * status line becomes the card), and deciding it replaces the card with its outcome; [OPTIONS:]
 * come as a card of chips after the answer, local pictures as one activity each.
 */
import type { Clock } from "../messaging/base/clock.js";
import { realClock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import { TurnParts } from "../messaging/channel/delivery.js";
import { LiveRenderer } from "../messaging/channel/live-renderer.js";
import type { OutboundFilePolicy } from "../messaging/channel/surface.js";
import type { AuditSink } from "../messaging/security/audit.js";
import type { ChoiceBook } from "./cards.js";
import type { TeamsCard } from "./live-surface.js";
import { teamsLiveSurface } from "./live-surface.js";
import type { TeamsOutbox } from "./outbox.js";

const CARD_NOT_SHOWN = "⚠️ The approval card could not be shown, so the tool was denied.";

export interface TeamsRendererOptions {
  outbox: TeamsOutbox;
  /** The conversation's user is the owner: the card offers Approve + auto-approve. */
  owner: boolean;
  choices: ChoiceBook;
  audit: AuditSink;
  logger: Logger;
  clock?: Clock;
  /** A live edit at most this often: readable, and far inside the conversation's request budget. */
  throttleMs?: number;
  /** A Teams typing indicator fades after a few seconds: re-sent this often. */
  typingEveryMs?: number;
  /** Absent: pictures stay as their markup. */
  uploads?: OutboundFilePolicy;
  /** The turn's outbound parts: every message this renderer creates goes through them. */
  parts?: TurnParts;
  /** Read at turn end, so the status line reports the window as the user leaves it. */
  contextUsage?: () => number | undefined | Promise<number | undefined>;
}

export class TeamsRenderer extends LiveRenderer<TeamsCard | null> {
  /** Teams' prompt is a card: the notice names it so. */
  override readonly promptNotShownNotice = CARD_NOT_SHOWN;

  constructor(o: TeamsRendererOptions) {
    const clock = o.clock ?? realClock;
    super({
      channel: "teams",
      surface: teamsLiveSurface({
        outbox: o.outbox,
        owner: o.owner,
        choices: o.choices,
        audit: o.audit,
        logger: o.logger,
        typingEveryMs: o.typingEveryMs ?? 3000,
        parts: o.parts ?? TurnParts.unrecorded(),
        uploads: o.uploads,
      }),
      timers: clock,
      now: () => clock.now(),
      logger: o.logger,
      throttleMs: o.throttleMs ?? 1000,
      contextUsage: o.contextUsage,
    });
  }
}
