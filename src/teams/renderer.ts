/**
 * TeamsRenderer: the typing indicator kept alive while the agent works, and one live message
 * (opened by the first text or tool call, or a notice about the agent) edited in place with the
 * kit's status line as its last line, throttled well inside Teams' seven calls a second per
 * conversation (the Connector edge paces underneath). The shared SegmentBuffer seals the answer into
 * messages of at most 16,000 code points (tables already grids or cards, fences balanced), and the
 * first sealed chunk reuses the live message, so there is never a "working…" bubble stranded above
 * the reply. An approval prompt seals the answer above it and is an Adaptive Card (a live message
 * showing only its status line becomes the card); deciding it replaces the card with its outcome.
 * The end of the turn places the status line on the last message, [OPTIONS:] as a card of chips,
 * and local pictures as one activity each after the text.
 *
 * Every text passes teamsSafe (the display form Teams renders, redacted) at the one seal, and every
 * platform call runs on one serial queue, so a throttled edit never lands after the seal it
 * preceded. Messages are created only through the turn's parts (a resumed turn edits what its first
 * run posted); a part that did not land sets deliveryFailed.
 */
import type { Clock } from "../messaging/base/clock.js";
import { realClock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import { TurnParts } from "../messaging/channel/delivery.js";
import { LiveStatus, ToolParagraphs } from "../messaging/channel/live-status.js";
import {
  approvalOutcomeLabel,
  EditThrottle,
  freshSessionNotice,
  noAnswerNotice,
  SerialQueue,
  steerChip,
  turnStatusLine,
  typedReplyHint,
} from "../messaging/channel/render-kit.js";
import type { OutboundFilePolicy } from "../messaging/channel/surface.js";
import type { OutboundFile } from "../messaging/files/outbound-files.js";
import type { AuditSink } from "../messaging/security/audit.js";
import { clip } from "../messaging/text/clip.js";
import { applyOptionsCap, splitOptionsTrailer } from "../messaging/text/options.js";
import { SegmentBuffer } from "../messaging/text/segment-buffer.js";
import type { AgentStatus, PromptOption, ToolChange, TurnEnding } from "../messaging/turn/renderer.js";
import { Renderer } from "../messaging/turn/renderer.js";
import type { ChoiceBook } from "./cards.js";
import { approvalCard, choicesCard, resolvedApprovalCard } from "./cards.js";
import type { OutboundActivity } from "./client.js";
import { fitTeams, quietLine, TEAMS_SEGMENT_LIMIT, teamsSafe, withLine } from "./format.js";
import type { TeamsOutbox } from "./outbox.js";
import { attachmentsActivity, textActivity } from "./outbox.js";
import { TEAMS_CAPABILITIES } from "./transport.js";
import type { SealImages } from "./uploads.js";
import { extractImages, inlineImage, undeliveredNote } from "./uploads.js";

/** A live edit at most this often: readable, and far inside the conversation's request budget. */
const DEFAULT_THROTTLE_MS = 1000;
/** A Teams typing indicator fades after a few seconds. */
const TYPING_EVERY_MS = 3000;
/** The buttons an approval card shows beside its typed-reply hint (auto-approve is an approve). */
const HINT_VERDICTS: readonly Pick<PromptOption, "verdict">[] = [{ verdict: "approve" }, { verdict: "deny" }];
const CARD_NOT_SHOWN = "⚠️ The approval card could not be shown, so the tool was denied.";

export interface TeamsRendererOptions {
  outbox: TeamsOutbox;
  /** The conversation's user is the owner: the card offers Approve + auto-approve. */
  owner: boolean;
  choices: ChoiceBook;
  audit: AuditSink;
  logger: Logger;
  clock?: Clock;
  throttleMs?: number;
  typingEveryMs?: number;
  /** Absent: pictures stay as their markup. */
  uploads?: OutboundFilePolicy;
  /** The turn's outbound parts: every message this renderer creates goes through them. */
  parts?: TurnParts;
  /** Read at turn end, so the status line reports the window as the user leaves it. */
  contextUsage?: () => number | undefined | Promise<number | undefined>;
}

interface Prompt {
  id: string;
  title: string;
  purpose: string;
}

export class TeamsRenderer extends Renderer {
  /** Teams' prompt is a card: the notice names it so. */
  override readonly promptNotShownNotice = CARD_NOT_SHOWN;
  private readonly clock: Clock;
  private readonly parts: TurnParts;
  private readonly startedAt: number;
  private readonly seg = new SegmentBuffer(TEAMS_SEGMENT_LIMIT);
  private readonly status = new LiveStatus("/stop");
  private readonly paragraphs = new ToolParagraphs();
  private readonly queue: SerialQueue;
  private readonly throttle: EditThrottle;
  private readonly prompts = new Map<string, Prompt>();
  /** Prompts decided before their card had landed (a timeout racing the post): applied on landing. */
  private readonly decidedEarly = new Map<string, string>();
  private readonly noted: string[] = [];
  private chip = "";
  private liveId: string | null = null;
  private liveShown = "";
  /** The live message shows answer text (not only its status line): it cannot become a card. */
  private liveHasText = false;
  /** Answer text reached the user (a card or a notice is not an answer). */
  private answered = false;
  private landed = false;
  private lastSealed: { id: string; text: string } | null = null;
  private typingTimer: unknown = null;
  private closed = false;
  private stopReason = "";
  private error: string | undefined;
  private compactionPct: number | undefined;

  constructor(private readonly o: TeamsRendererOptions) {
    super(TEAMS_CAPABILITIES);
    this.clock = o.clock ?? realClock;
    this.parts = o.parts ?? TurnParts.unrecorded();
    this.startedAt = this.clock.now();
    this.queue = new SerialQueue((error) => {
      this.deliveryFailed = true;
      this.o.logger.error("teams: render step failed", { error: String(error) });
    });
    this.throttle = new EditThrottle(
      this.clock,
      () => this.clock.now(),
      o.throttleMs ?? DEFAULT_THROTTLE_MS,
      () => {
        void this.run(() => this.flushLive());
      },
    );
  }

  override noteSteer(text: string): void {
    this.noted.push(text);
  }

  override async onTurnStart(): Promise<void> {
    this.keepTyping();
  }

  async onTextChunk(text: string): Promise<void> {
    this.seg.append(this.paragraphs.next(this.seg.canonical, text));
    this.status.writing();
    this.schedule();
  }

  async onThinking(): Promise<void> {
    this.status.thinking();
  }

  async onToolCall(
    toolCallId: string,
    title: string,
    _toolKind: string,
    _toolPurpose: string,
  ): Promise<void> {
    this.paragraphs.toolCalled();
    this.status.tool(toolCallId, title);
    this.schedule();
  }

  async onToolUpdate(toolCallId: string, change: ToolChange): Promise<void> {
    this.status.toolChanged(toolCallId, change);
    this.schedule();
  }

  async onAgentStatus(status: AgentStatus): Promise<void> {
    if (status.type === "fresh_session") {
      const notice = textActivity(
        teamsSafe(freshSessionNotice(status.cause, status.reason, status.replayed)),
      );
      // Above the answer it concerns: a live message showing only its status becomes the notice.
      await this.run(async () => {
        if ((await this.takeStatusOnlyLive(notice)) === null) await this.create(notice);
      });
      return;
    }
    this.status.agent(status);
    this.schedule();
  }

  async onPromptChoice(
    _options: PromptOption[],
    requestId: string,
    context: { toolTitle: string; toolPurpose: string; nonce: string },
  ): Promise<boolean> {
    // Shown only once the card landed: a step that failed or never ran leaves it false.
    let shown = false;
    await this.run(async () => {
      // What the agent said before asking is a complete thought: sealed above the card.
      await this.sealSegment(false);
      const card = approvalCard({
        requestId,
        nonce: context.nonce,
        toolTitle: context.toolTitle,
        toolPurpose: context.toolPurpose,
        hint: typedReplyHint(HINT_VERDICTS, true),
        owner: this.o.owner,
      });
      const activity = attachmentsActivity([card]);
      const id = (await this.takeStatusOnlyLive(activity)) ?? (await this.create(activity));
      if (id) {
        shown = true;
        this.prompts.set(requestId, { id, title: context.toolTitle, purpose: context.toolPurpose });
        const early = this.decidedEarly.get(requestId);
        if (early !== undefined) {
          this.decidedEarly.delete(requestId);
          void this.markApproval(requestId, early);
        }
        return;
      }
      // No card: the driver denies it at once and says so (promptNotShownNotice).
      this.deliveryFailed = true;
    });
    return shown;
  }

  /** The card becomes its outcome: a decided prompt never shows live buttons. */
  override async markApproval(requestId: string, outcome: string): Promise<void> {
    const prompt = this.prompts.get(requestId);
    if (!prompt) {
      this.decidedEarly.set(requestId, outcome);
      return;
    }
    this.prompts.delete(requestId);
    // The turn goes on below the card: its next frame opens a new message there.
    if (!this.stopReason) {
      this.status.thinking();
      this.schedule();
    }
    await this.run(async () => {
      try {
        await this.o.outbox.update(
          prompt.id,
          attachmentsActivity([resolvedApprovalCard(prompt.title, prompt.purpose, outcome)]),
        );
      } catch (error) {
        this.o.logger.warn("teams: could not settle the approval card", { error: String(error) });
      }
    });
  }

  async onCompaction(contextUsagePct: number | undefined, receipt: string): Promise<void> {
    if (contextUsagePct !== undefined) this.compactionPct = contextUsagePct;
    if (receipt)
      await this.run(async () => void (await this.create(textActivity(quietLine(teamsSafe(receipt))))));
  }

  override async onSteerConsumed(summary: string): Promise<void> {
    await this.run(() => this.sealSegment(false));
    this.chip = steerChip(this.noted.shift() ?? summary);
  }

  async onDone(stopReason: string, ending: TurnEnding = {}): Promise<void> {
    this.stopReason = stopReason;
    this.error = ending.error;
    if (ending.contextUsagePct !== undefined) this.compactionPct = ending.contextUsagePct;
    this.stopTyping();
    await this.run(() => this.sealSegment(true));
  }

  override async close(reason?: unknown): Promise<void> {
    this.throttle.cancel();
    this.stopTyping();
    // A card still showing buttons when the turn ends was never decided: it says so.
    for (const requestId of [...this.prompts.keys()])
      void this.markApproval(requestId, approvalOutcomeLabel("abandoned"));
    await this.queue.idle();
    if (reason && !this.landed && !this.stopReason) {
      // A turn that never reached its end (no DONE) must still say so, never leave the user waiting.
      await this.run(async () => void (await this.create(textActivity(noAnswerNotice(true, "/new")))));
    }
    this.closed = true;
    await this.queue.idle();
  }

  // ── the live message ──────────────────────────────────────────────────────────────────────

  private schedule(): void {
    if (this.closed || this.stopReason) return;
    this.throttle.schedule();
  }

  /** Seal what the splitter sealed, then edit the live message to the current frame. */
  private async flushLive(): Promise<void> {
    // A frame queued before the end must not open a message after it.
    if (this.stopReason || this.closed) return;
    for (const chunk of this.seg.advance()) await this.sealChunk(chunk, {});
    const preview = this.seg.livePreview();
    // A recognized table still growing: hold the frame rather than show half of it.
    if (preview === null) return;
    const status = quietLine(this.status.line);
    let frame = status;
    if (preview.trim() !== "") {
      frame = withLine(teamsSafe(clip(this.chip + preview, TEAMS_SEGMENT_LIMIT)), status);
      this.liveHasText = true;
    } else if (this.liveHasText) return; // the text went into a sealed message: nothing new to show
    if (frame === this.liveShown) return;
    if (this.liveId === null) {
      this.liveId = (await this.create(textActivity(frame))) || null;
    } else {
      try {
        await this.o.outbox.update(this.liveId, textActivity(frame));
      } catch (error) {
        // Cosmetic: the next frame, or the seal, says it again.
        this.o.logger.debug("teams: live edit failed", { error: String(error) });
      }
    }
    this.liveShown = frame;
  }

  // ── seals ─────────────────────────────────────────────────────────────────────────────────

  /**
   * The semantic seal (a steer, an approval prompt, the end): the trailer becomes chips, local
   * pictures are taken out, and the rest is split and sent.
   */
  private async sealSegment(final: boolean): Promise<void> {
    this.throttle.cancel();
    const { body, choices } = splitOptionsTrailer(this.seg.remainder, { hidePartial: false });
    const ups: SealImages = this.o.uploads
      ? await extractImages(this.seg.fedText, body, this.o.uploads, this.o.audit)
      : { remainder: body, images: [], notes: [] };
    const chunks = this.seg.finish(ups.remainder);
    const last = chunks.pop() ?? "";
    for (const chunk of chunks) await this.sealChunk(chunk, {});
    const capped = applyOptionsCap(last, choices, this.capabilities);
    const hasContent = capped.body.trim() !== "" || capped.choices.length > 0 || ups.images.length > 0;
    // A turn that produced nothing says so (and why, when it failed): never a status line alone.
    const silent = final && !this.answered && !hasContent && ups.notes.length === 0;
    const footer = final ? quietLine(await this.footerLine(silent)) : "";
    if (silent) {
      await this.sealChunk(noAnswerNotice(this.stopReason === "error", "/new", this.error), { footer });
      return;
    }
    if (capped.body.trim() !== "" || ups.notes.length > 0)
      await this.sealChunk(capped.body, { notes: ups.notes, footer });
    else if (final) await this.placeFooter(footer);
    await this.sendImages(ups.images);
    if (capped.choices.length > 0) await this.postChoices(capped.choices);
  }

  /**
   * The one seal chokepoint: one sealed chunk (with its refusal lines, appended BEFORE redaction so
   * a destination they quote is scanned too) becomes the display form, split to Teams' caps; the
   * first piece reuses the live message, the footer rides the last.
   */
  private async sealChunk(
    text: string,
    extra: { notes?: readonly string[]; footer?: string },
  ): Promise<void> {
    const chip = this.chip && text.trim() ? this.chip : "";
    if (chip) this.chip = "";
    const raw = [chip + text, ...(extra.notes ?? [])].filter((s) => s.trim() !== "").join("\n\n");
    const pieces = raw ? fitTeams(teamsSafe(raw)) : [""];
    for (const [i, piece] of pieces.entries()) {
      const content = i === pieces.length - 1 ? withLine(piece, extra.footer ?? "") : piece;
      if (content.trim() === "") continue;
      const id = await this.send(textActivity(content));
      if (!id) {
        this.deliveryFailed = true;
        continue;
      }
      if (piece.trim()) this.answered = true;
      this.lastSealed = { id, text: content };
    }
  }

  /** The footer with nothing left to seal: on the last message of the turn, or on its own. */
  private async placeFooter(footer: string): Promise<void> {
    if (!footer) return;
    const live = await this.takeStatusOnlyLive(textActivity(footer));
    if (live !== null) {
      this.lastSealed = { id: live, text: footer };
      return;
    }
    const last = this.lastSealed;
    if (last) {
      const text = withLine(last.text, footer);
      if (text === last.text) return;
      try {
        await this.o.outbox.update(last.id, textActivity(text));
        last.text = text;
        return;
      } catch (error) {
        this.o.logger.debug("teams: could not add the status line", { error: String(error) });
      }
    }
    const id = await this.create(textActivity(footer));
    if (id) this.lastSealed = { id, text: footer };
  }

  /** One activity per picture, after the text; one that fails is named in a line of its own. */
  private async sendImages(images: readonly OutboundFile[]): Promise<void> {
    const failed: string[] = [];
    for (const image of images) {
      const id = await this.create(attachmentsActivity([inlineImage(image)]));
      if (id) this.answered = true;
      else failed.push(undeliveredNote(image));
    }
    if (failed.length === 0) return;
    this.deliveryFailed = true;
    this.o.audit.log("teams_renderer.upload_files", "failed", {
      refused: failed.length,
      reasons: "teams_inline_undelivered",
    });
    for (const piece of fitTeams(teamsSafe(failed.join("\n")))) await this.create(textActivity(piece));
  }

  private async postChoices(labels: readonly string[]): Promise<void> {
    const id = await this.create(attachmentsActivity([choicesCard("", labels, "option")]));
    if (id) this.o.choices.register(id, this.o.outbox.address.conversationId, labels);
    else {
      // The trailer is already cut from the text: without the card the choices would be lost.
      this.deliveryFailed = true;
      await this.create(textActivity(teamsSafe(labels.map((l, i) => `${i + 1}. ${l}`).join("\n"))));
    }
  }

  /**
   * The live message when it shows only its status line (no answer text yet), rewritten as
   * `activity` so that what follows opens below it; its id, or null when there is none to take.
   */
  private async takeStatusOnlyLive(activity: OutboundActivity): Promise<string | null> {
    const live = this.liveId;
    if (live === null || this.liveHasText || !this.seg.isEmpty()) return null;
    this.liveId = null;
    this.liveShown = "";
    try {
      await this.o.outbox.update(live, activity);
      return live;
    } catch (error) {
      this.o.logger.debug("teams: could not reuse the live message", { error: String(error) });
      return null;
    }
  }

  /** Edit the live message into this content, or create a new one; the live message is then spent. */
  private async send(activity: OutboundActivity): Promise<string> {
    const live = this.liveId;
    this.liveId = null;
    this.liveShown = "";
    this.liveHasText = false;
    if (live) {
      try {
        await this.o.outbox.update(live, activity);
        this.landed = true;
        return live;
      } catch (error) {
        this.o.logger.warn("teams: the live message could not take the answer; posting it", {
          error: String(error),
        });
      }
    }
    return this.create(activity);
  }

  /** A new message, as the turn's next part; "" (logged) when it did not land. */
  private async create(activity: OutboundActivity): Promise<string> {
    try {
      const id = await this.parts.post(JSON.stringify(activity), {
        create: () => this.o.outbox.send(activity),
        replace: async (earlier) => {
          await this.o.outbox.update(earlier, activity);
          return true;
        },
      });
      if (id) this.landed = true;
      return id ?? "";
    } catch (error) {
      this.o.logger.warn("teams: a message did not land", { error: String(error) });
      return "";
    }
  }

  /** `reasonShown`: the no-answer notice above already says why the turn failed. */
  private async footerLine(reasonShown: boolean): Promise<string> {
    let usage: number | undefined;
    try {
      usage = (await this.o.contextUsage?.()) ?? this.compactionPct;
    } catch (error) {
      this.o.logger.debug("teams: context usage unavailable", { error: String(error) });
    }
    return turnStatusLine(this.stopReason, {
      elapsedMs: this.clock.now() - this.startedAt,
      ...(usage === undefined ? {} : { contextUsagePct: usage }),
      ...(this.error ? { error: this.error } : {}),
      reasonShown,
    });
  }

  // ── typing ───────────────────────────────────────────────────────────────────────────────

  private keepTyping(): void {
    if (this.closed || this.stopReason) return;
    // Best effort: a missed indicator costs a few seconds of dots, never the answer.
    this.o.outbox.typing().catch((error: unknown) => {
      this.o.logger.debug("teams: typing indicator failed", { error: String(error) });
    });
    this.typingTimer = this.clock.setTimeout(
      () => this.keepTyping(),
      this.o.typingEveryMs ?? TYPING_EVERY_MS,
    );
  }

  private stopTyping(): void {
    if (this.typingTimer !== null) this.clock.clearTimeout(this.typingTimer);
    this.typingTimer = null;
  }

  private run(fn: () => Promise<void>): Promise<void> {
    return this.queue.run(fn);
  }
}
