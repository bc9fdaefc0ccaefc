/**
 * WhatsAppRenderer: the kit's LiveRenderer on WhatsApp's surface (live-surface.ts). Each edit is a
 * full end-to-end encrypted send to every device of every participant, so frames are coalesced (one
 * per `editIntervalMs` at most; the first held back a moment, so a quick answer arrives as one
 * bubble). A bubble past its edit window, or whose edit failed, keeps what it shows: the text, or a
 * prompt's outcome, continues in a new one. ⏳ then ✅/⚠️ on the answered message (reactions.ts). An
 * UNPROMPTED group turn never streams, reacts or shows a status line: its answer is held to the
 * end, where silence or the group's cooldown keeps it (groups.ts).
 */
import type { Timers } from "../messaging/base/clock.js";
import { realClock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import { silentLogger } from "../messaging/base/logger.js";
import { TurnParts } from "../messaging/channel/delivery.js";
import { LiveRenderer } from "../messaging/channel/live-renderer.js";
import type { OutboundFilePolicy } from "../messaging/channel/surface.js";
import type { TurnEnding } from "../messaging/turn/renderer.js";
import { EDIT_WINDOW_MS } from "./bubbles.js";
import { UnpromptedAnswer } from "./groups.js";
import { whatsappLiveSurface } from "./live-surface.js";
import { ProgressReaction } from "./reactions.js";
import type { WhatsAppTransport } from "./transport.js";

export { REACTION_DONE, REACTION_FAILED, REACTION_WORKING } from "./reactions.js";

export interface WhatsAppRendererOptions {
  chat: string;
  timers?: Timers;
  now?: () => number;
  logger?: Logger;
  /** One frame at most this often (each edit is a send to every device of every participant). */
  editIntervalMs?: number;
  /** The first frame waits this long: a quick answer arrives as one bubble, not a preview first. */
  firstFrameMs?: number;
  typingIntervalMs?: number;
  /** WhatsApp's edit window (tests shorten it on a fake clock). */
  editWindowMs?: number;
  /** The message this turn answers (its key, encoded): the reactions go on it. */
  messageId?: string | undefined;
  /** Rules mode, nobody addressed the agent: no stream, no reaction, silence allowed. */
  unprompted?: boolean;
  /** Told when an unprompted answer was delivered (the group's cooldown starts then). */
  onDelivered?: () => void;
  /** Asked at an unprompted turn's end: false when the group went quiet meanwhile (its cooldown). */
  maySpeak?: () => boolean;
  parts?: TurnParts;
  /** Local images to send after the text; absent = their paths stay text. */
  uploads?: OutboundFilePolicy;
  /** How old a bubble an earlier run of this turn posted may be (the journal's staleness bound). */
  resumedAgeMs?: number;
}

export class WhatsAppRenderer extends LiveRenderer<null> {
  private readonly reaction: ProgressReaction;
  private readonly unprompted: UnpromptedAnswer | undefined;
  private readonly onDelivered: (() => void) | undefined;
  private failed = false;

  constructor(transport: WhatsAppTransport, o: WhatsAppRendererOptions) {
    const logger = o.logger ?? silentLogger;
    const now = o.now ?? (() => Date.now());
    const unprompted = o.unprompted ? new UnpromptedAnswer(o.maySpeak, logger) : undefined;
    super({
      channel: "whatsapp",
      surface: whatsappLiveSurface(transport, {
        chat: o.chat,
        now,
        logger,
        parts: o.parts ?? TurnParts.unrecorded(),
        editWindowMs: o.editWindowMs ?? EDIT_WINDOW_MS,
        resumedAgeMs: o.resumedAgeMs ?? 0,
        // An unprompted turn shows nothing until it is sure it speaks at all: no "typing" either.
        typingIntervalMs: unprompted ? undefined : (o.typingIntervalMs ?? 10_000),
        uploads: o.uploads,
      }),
      timers: o.timers ?? realClock,
      now,
      logger,
      throttleMs: o.editIntervalMs ?? 2000,
      firstFrameMs: o.firstFrameMs ?? 1000,
      postOnRefusal: true,
      ...(unprompted ? { heldAnswer: (text: string, files: number) => unprompted.release(text, files) } : {}),
    });
    this.reaction = new ProgressReaction(transport, o.chat, unprompted ? undefined : o.messageId, logger);
    this.unprompted = unprompted;
    this.onDelivered = o.onDelivered;
    // An unprompted answer is all it says: no status line, no notice when it stays silent.
    if (unprompted) this.quiet = true;
  }

  override async onTurnStart(): Promise<void> {
    this.reaction.working();
    await super.onTurnStart();
  }

  override async onCompaction(contextUsagePct: number | undefined, receipt: string): Promise<void> {
    // An unprompted turn posts nothing beside its answer.
    await super.onCompaction(contextUsagePct, this.unprompted ? "" : receipt);
  }

  override async onDone(stopReason: string, ending: TurnEnding = {}): Promise<void> {
    this.failed = stopReason === "error";
    await super.onDone(stopReason, ending);
    // The group's cooldown starts once an unprompted answer landed.
    if (this.unprompted?.released && this.answered && !this.deliveryFailed) this.onDelivered?.();
  }

  override async close(reason?: unknown): Promise<void> {
    await super.close(reason);
    // Success is "delivered and not failed": a failed turn still delivers its apology.
    await this.reaction.finished(this.answered && !this.failed && !reason && !this.deliveryFailed);
  }
}
