/**
 * TelegramRenderer: one live message edited in place (throttled; the client paces per chat and
 * honours 429s underneath), sealed into Telegram-HTML messages. Length rotation comes from the
 * shared StreamingSplitter at a 4000 code-point source cap (fence-balanced; the first sealed chunk
 * reuses the live message, so there is never a preview plus a duplicate), and every body is bound
 * again to 4096 UTF-16 units at the wire. A steer boundary seals the pre-steer answer (its
 * [OPTIONS:] travel with it as a keyboard) and the continuation opens with a lazily materialized
 * quote chip. An approval prompt seals the answer above it and the decision's continuation opens a
 * new message below (a live message that showed only its footer becomes the prompt). The live
 * footer carries the kit's LiveStatus line and the 🥱/😨 stall marks, read from the clock; neither
 * ever reaches a sealed message. A turn that produced no answer ends with the kit's notice. All platform calls run on one queue per renderer,
 * so a throttled edit can never land on a message after it was sealed.
 */
import type { Timers } from "../messaging/base/clock.js";
import { realClock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import { silentLogger } from "../messaging/base/logger.js";
import { TurnParts } from "../messaging/channel/delivery.js";
import { LiveStatus, ToolParagraphs } from "../messaging/channel/live-status.js";
import { DEFAULT_LADDER_TIMINGS } from "../messaging/channel/phase-ladder.js";
import {
  approvalOutcomeLabel,
  freshSessionNotice,
  noAnswerNotice,
  SerialQueue,
  steerChip,
  turnStatusLine,
  typedReplyHint,
} from "../messaging/channel/render-kit.js";
import type { OutboundFile } from "../messaging/files/outbound-files.js";
import { hideLocalRefs } from "../messaging/files/outbound-files.js";
import { oneLine } from "../messaging/text/clip.js";
import { applyOptionsCap, displaySafeFor, splitOptionsTrailer } from "../messaging/text/options.js";
import { StreamingSplitter } from "../messaging/text/streaming-splitter.js";
import { renderTables } from "../messaging/text/tables/index.js";
import type { AgentStatus, PromptOption, ToolChange, TurnEnding } from "../messaging/turn/renderer.js";
import { Renderer } from "../messaging/turn/renderer.js";
import { approvalKeyboard, approvalVerdictsOf, optionsKeyboard } from "./buttons.js";
import { apiErrorOf } from "./errors.js";
import { escapeHtml, fitTelegramHtml, toTelegramHtml } from "./html.js";
import { TELEGRAM_MAX_MESSAGE_UTF16, TELEGRAM_SOURCE_CAP } from "./limits.js";
import type { TelegramTransport } from "./transport.js";
import type { UploadPolicy } from "./uploads.js";
import { albums, extractUploads, recoveryMarkdown } from "./uploads.js";
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

const STALL_SOFT = "🥱";
const STALL_HARD = "😨";
const MAX_TITLE_CHARS = 200;

export class TelegramRenderer extends Renderer {
  private readonly timers: Timers;
  private readonly now: () => number;
  private readonly log: Logger;
  private readonly throttleMs: number;
  private readonly typingIntervalMs: number;
  private readonly stallSoftMs: number;
  private readonly stallHardMs: number;
  private readonly parts: TurnParts;
  private splitter = new StreamingSplitter(TELEGRAM_SOURCE_CAP);
  /** `body`: it shows answer text (not only its footer), so it cannot be taken for a prompt. */
  private live: { id: number; shown: string; body: boolean } | null = null;
  /** The quote chip waiting for the first real text of the post-steer segment. */
  private chip = "";
  private readonly status = new LiveStatus("/stop");
  private readonly paragraphs = new ToolParagraphs();
  private readonly startedAt: number;
  private lastProgressAt: number;
  private waitingOnHuman = false;
  private contextUsagePct: number | undefined;
  /** Real answer text reached the chat (a footer-only frame does not count). */
  private answered = false;
  /** Sealed chunks queued but not yet sent: a live frame then would show the wrong tail. */
  private pendingSeals = 0;
  private finished = false;
  private noted: string[] = [];
  /** The last message a seal delivered (where the end's status line goes when nothing follows). */
  private lastSealed: { id: number; html: string; keyboard: TgInlineKeyboard | undefined } | null = null;
  private readonly queue = new SerialQueue((error) => {
    this.deliveryFailed = true;
    this.log.error("telegram: render step failed", { error: String(error) });
  });
  private editTimer: unknown = null;
  private frameQueued = false;
  private lastEditAt = 0;
  private typingTimer: unknown = null;
  private stallTimers: unknown[] = [];
  /** requestId -> the prompt's message, so the outcome can be written onto the prompt itself. */
  private readonly prompts = new Map<string, { id: number; head: string }>();

  constructor(
    private readonly transport: TelegramTransport,
    private readonly o: TelegramRendererOptions,
  ) {
    super(transport.capabilities);
    this.timers = o.timers ?? realClock;
    this.now = o.now ?? (() => Date.now());
    this.log = o.logger ?? silentLogger;
    this.throttleMs = o.throttleMs ?? 1000;
    this.typingIntervalMs = o.typingIntervalMs ?? 4000;
    this.stallSoftMs = o.stallSoftMs ?? DEFAULT_LADDER_TIMINGS.stallSoftMs;
    this.stallHardMs = o.stallHardMs ?? DEFAULT_LADDER_TIMINGS.stallHardMs;
    this.parts = o.parts ?? TurnParts.unrecorded();
    this.startedAt = this.now();
    this.lastProgressAt = this.startedAt;
  }

  /** The dispatcher records the user's own words, so the chip quotes them, not the backend's echo. */
  override noteSteer(text: string): void {
    this.noted.push(text);
  }

  override async onTurnStart(): Promise<void> {
    this.keepTyping();
    this.armStallTimers();
  }

  async onTextChunk(text: string): Promise<void> {
    this.progress();
    this.status.writing();
    const sealed = this.splitter.append(this.paragraphs.next(this.splitter.tail, text));
    this.pendingSeals += sealed.length;
    for (const chunk of sealed) {
      await this.enqueue(async () => {
        this.pendingSeals -= 1;
        await this.sealChunk(chunk);
      });
    }
    this.scheduleEdit();
  }

  async onThinking(): Promise<void> {
    this.progress();
    this.status.thinking();
    this.scheduleEdit();
  }

  async onToolCall(toolCallId: string, title: string): Promise<void> {
    this.progress();
    this.paragraphs.toolCalled();
    this.status.tool(toolCallId, title);
    this.scheduleEdit();
  }

  async onToolUpdate(toolCallId: string, change: ToolChange): Promise<void> {
    this.progress();
    this.status.toolChanged(toolCallId, change);
    this.scheduleEdit();
  }

  async onAgentStatus(status: AgentStatus): Promise<void> {
    if (status.type === "fresh_session") {
      const html = escapeHtml(freshSessionNotice(status.cause, status.reason, status.replayed));
      // Above the answer it concerns: a live message showing only its footer becomes the notice.
      await this.enqueue(async () => {
        if (!(await this.takeFooterOnlyLive(html))) await this.post(html, undefined, true);
      });
      return;
    }
    // Waiting in line or a silent agent is not progress: the stall marks keep counting.
    this.status.agent(status);
    this.scheduleEdit();
  }

  async onPromptChoice(
    options: PromptOption[],
    requestId: string,
    context: { toolTitle: string; toolPurpose: string; nonce: string },
  ): Promise<boolean> {
    // Shown only once the message landed: a step that failed or never ran leaves it false.
    let landed = false;
    this.progress();
    // Waiting on a human is not a stall: no mark while the prompt is open.
    this.waitingOnHuman = true;
    this.clearStallTimers();
    this.cancelEdit();
    await this.enqueue(async () => {
      // The answer so far stays above the prompt; what the decision releases continues below it.
      await this.sealSegment();
      const title = escapeHtml(
        displaySafeFor(oneLine(context.toolTitle || "a tool", MAX_TITLE_CHARS), this.capabilities),
      );
      const purpose = context.toolPurpose
        ? `\n${escapeHtml(displaySafeFor(oneLine(context.toolPurpose, 400), this.capabilities))}`
        : "";
      const keyboard = approvalKeyboard(requestId, context.nonce, options);
      const head = `🔐 <b>Permission needed:</b> ${title}${purpose}`;
      const shown = keyboard ? approvalVerdictsOf(keyboard) : options;
      const hint = typedReplyHint(shown, keyboard !== null);
      const html = `${head}\n\n<i>${escapeHtml(hint)}</i>`;
      // A live message with only its footer becomes the prompt; the continuation opens below it.
      const id =
        (await this.takeFooterOnlyLive(html, keyboard ?? undefined)) ??
        (await this.post(html, keyboard ?? undefined));
      if (id !== null) this.prompts.set(requestId, { id, head });
      landed = id !== null;
      // The end's status line belongs below the prompt, never on the answer above it.
      this.lastSealed = null;
    });
    return landed;
  }

  /** Write the outcome onto the prompt and drop its buttons, so a decided prompt never looks live. */
  override async markApproval(requestId: string, outcome: string): Promise<void> {
    // Looked up on the queue: a press can arrive before the prompt's own send has returned.
    await this.enqueue(async () => {
      const prompt = this.prompts.get(requestId);
      if (!prompt) return;
      this.prompts.delete(requestId);
      try {
        const html = `${prompt.head}\n\n<b>${escapeHtml(outcome)}</b>`;
        await this.transport.editHtml(this.o.chatId, prompt.id, html, { inline_keyboard: [] });
      } catch (error) {
        this.log.warn("telegram: could not mark the approval prompt", { error: String(error) });
      }
    });
    // The turn goes on below the prompt: its next frame opens a new message there.
    if (!this.finished && !this.quiet) {
      this.status.thinking();
      this.scheduleEdit();
    }
  }

  async onCompaction(contextUsagePct: number | undefined, receipt: string): Promise<void> {
    this.progress();
    if (contextUsagePct !== undefined) this.contextUsagePct = contextUsagePct;
    if (receipt) await this.enqueue(async () => void (await this.post(escapeHtml(receipt), undefined, true)));
  }

  override async onSteerConsumed(summary: string): Promise<void> {
    this.progress();
    this.cancelEdit();
    await this.enqueue(() => this.sealSegment());
    const words = this.noted.shift() ?? summary;
    this.chip = steerChip(words);
    // The chip rides the first chunk of the continuation: the splitter keeps room for it.
    this.splitter = new StreamingSplitter(TELEGRAM_SOURCE_CAP, { reserve: Array.from(this.chip).length });
  }

  async onDone(stopReason: string, ending: TurnEnding = {}): Promise<void> {
    const { error } = ending;
    if (ending.contextUsagePct !== undefined) this.contextUsagePct = ending.contextUsagePct;
    this.finished = true;
    this.stopTyping();
    this.clearStallTimers();
    this.cancelEdit();
    await this.enqueue(() => this.sealSegment({ stopReason, ...(error ? { error } : {}) }));
  }

  override async close(reason?: unknown): Promise<void> {
    this.finished = true;
    this.stopTyping();
    this.clearStallTimers();
    this.cancelEdit();
    // A prompt still showing buttons when the turn ends was never decided: say so on it.
    for (const requestId of [...this.prompts.keys()])
      void this.markApproval(requestId, approvalOutcomeLabel("abandoned"));
    await this.enqueue(async () => {
      if (this.answered || this.quiet) return;
      // A turn that produced nothing must still say so, never leave the user guessing.
      const text = noAnswerNotice(Boolean(reason), "/new");
      if (this.live) await this.editOrPost(this.live.id, escapeHtml(text));
      else await this.post(escapeHtml(text));
      this.live = null;
    });
  }

  // ── the queue ─────────────────────────────────────────────────────────────────────────────

  private enqueue(op: () => Promise<void>): Promise<void> {
    return this.queue.run(op);
  }

  // ── live frames ───────────────────────────────────────────────────────────────────────────

  private progress(): void {
    this.lastProgressAt = this.now();
    this.waitingOnHuman = false;
    this.armStallTimers();
  }

  private scheduleEdit(): void {
    if (this.editTimer !== null || this.finished) return;
    const wait = Math.max(0, this.lastEditAt + this.throttleMs - this.now());
    this.editTimer = this.timers.setTimeout(() => {
      this.editTimer = null;
      // One frame waiting in the queue is enough: it renders the buffer as it is when it runs.
      if (this.frameQueued) return;
      this.frameQueued = true;
      void this.enqueue(async () => {
        this.frameQueued = false;
        await this.flushLive();
      });
    }, wait);
  }

  private cancelEdit(): void {
    if (this.editTimer !== null) this.timers.clearTimeout(this.editTimer);
    this.editTimer = null;
  }

  private stallMark(): string {
    if (this.waitingOnHuman || this.finished) return "";
    const quiet = this.now() - this.lastProgressAt;
    return quiet >= this.stallHardMs ? STALL_HARD : quiet >= this.stallSoftMs ? STALL_SOFT : "";
  }

  /** Re-render the footer when a stall threshold passes; the mark itself is read from the clock. */
  private armStallTimers(): void {
    this.clearStallTimers();
    if (this.finished || this.waitingOnHuman) return;
    for (const ms of [this.stallSoftMs, this.stallHardMs]) {
      this.stallTimers.push(this.timers.setTimeout(() => this.scheduleEdit(), ms + 1));
    }
  }

  private clearStallTimers(): void {
    for (const t of this.stallTimers) this.timers.clearTimeout(t);
    this.stallTimers = [];
  }

  /** The live buffer as shown: a partial [OPTIONS trailer hidden, tables left raw until sealed. */
  private liveSource(): string {
    const shown = splitOptionsTrailer(this.splitter.tail, { hidePartial: true }).body;
    // With uploads on, no path flashes on screen only to vanish into a photo at the seal.
    const body = this.o.uploads ? hideLocalRefs(shown) : shown;
    return body.trim() ? this.chip + body : "";
  }

  private async flushLive(): Promise<void> {
    if (this.finished || this.pendingSeals > 0) return;
    const mark = this.stallMark();
    const footerText = [this.status.line, mark].filter(Boolean).join(" ");
    const footer = footerText ? `<i>${escapeHtml(footerText)}</i>` : "";
    const source = this.liveSource();
    // A live frame may be longer than the wire once escaped; it is a preview, so the first part
    // is shown (the seal delivers all of it).
    const body = source ? (fitTelegramHtml(source, footer.length + 2)[0] ?? "") : "";
    const html = body && footer ? `${body}\n\n${footer}` : body || footer;
    if (!html) return;
    this.lastEditAt = this.now();
    if (!this.live) {
      const id = await this.post(html);
      if (id !== null) this.live = { id, shown: html, body: Boolean(body) };
      if (id !== null && body) this.answered = true;
      return;
    }
    if (html === this.live.shown) return;
    try {
      await this.transport.editHtml(this.o.chatId, this.live.id, html);
      this.live.shown = html;
      if (body) {
        this.answered = true;
        this.live.body = true;
      }
    } catch (error) {
      // A lost frame is harmless (the seal rewrites the message); a lost seal is not.
      this.log.debug("telegram: live edit failed", { error: String(error) });
    }
  }

  // ── seals ─────────────────────────────────────────────────────────────────────────────────

  /** The sealed presentation of canonical source: the chip, then tables as a monospace grid. */
  private present(source: string): string {
    const withChip = source.trim() ? this.chip + source : "";
    if (withChip) this.chip = "";
    return renderTables(withChip, {
      policy: this.capabilities.tableMode,
      nativeTables: this.capabilities.nativeTables,
    });
  }

  /** A length-sealed chunk: it finalizes the live message; the tail moves to a new one. */
  private async sealChunk(source: string): Promise<void> {
    await this.deliver(fitTelegramHtml(this.present(source)), "", undefined);
  }

  /**
   * A semantic seal (steer boundary, approval prompt, or the end: `final`): everything buffered,
   * options as a keyboard. The end carries the turn-status line, and a turn that produced no answer
   * ends with the kit's notice (and the failure's reason) instead of nothing.
   */
  private async sealSegment(final?: { stopReason: string; error?: string }): Promise<void> {
    const chunks = this.splitter.finish();
    this.splitter = new StreamingSplitter(TELEGRAM_SOURCE_CAP);
    const last = chunks.pop() ?? "";
    for (const chunk of chunks) await this.sealChunk(chunk);
    const { body, choices } = splitOptionsTrailer(last, { hidePartial: false });
    const capped = applyOptionsCap(body, choices, this.capabilities);
    // Only a semantic seal extracts, once; length-sealed chunks keep their references as text.
    const { text, files } = this.o.uploads
      ? await extractUploads(capped.body, this.o.uploads, this.log)
      : { text: capped.body, files: [] };
    const silent =
      final !== undefined && !this.answered && !text.trim() && !capped.choices.length && !files.length;
    const status =
      final && !this.quiet
        ? turnStatusLine(final.stopReason, {
            elapsedMs: this.now() - this.startedAt,
            ...(this.contextUsagePct === undefined ? {} : { contextUsagePct: this.contextUsagePct }),
            ...(final.error ? { error: final.error } : {}),
            reasonShown: silent,
          })
        : "";
    const statusHtml = status ? `<i>${escapeHtml(status)}</i>` : "";
    const pieces = silent
      ? this.quiet
        ? []
        : fitTelegramHtml(escapeHtml(noAnswerNotice(final.stopReason === "error", "/new", final.error)))
      : fitTelegramHtml(this.present(text), statusHtml.length + 2);
    const keyboard = capped.choices.length ? optionsKeyboard(capped.choices) : undefined;
    if (pieces.length === 0) {
      // No text: the end's status line lands on the live message, or on its own after a prompt.
      // Mid-turn the live message is kept for the continuation.
      if (keyboard) pieces.push(escapeHtml("Choose one:"));
      else if (statusHtml && this.live) pieces.push("");
      else if (statusHtml) {
        await this.placeStatus(statusHtml);
        return this.sendPhotos(files);
      } else return this.sendPhotos(files);
    }
    await this.deliver(pieces, statusHtml, keyboard);
    await this.sendPhotos(files);
  }

  /** Photos after the text seal; a failed album restores its references as one short follow-up. */
  private async sendPhotos(files: readonly OutboundFile[]): Promise<void> {
    for (const album of albums(files)) {
      try {
        // A photo cannot be edited into another: the same album is left alone, another is posted.
        const landed = await this.parts.post(JSON.stringify(album.map((f) => [f.filename, f.bytes.length])), {
          create: async () => String(await this.transport.sendPhotos(this.o.chatId, this.o.threadId, album)),
          replace: async () => false,
        });
        if (landed === null) throw new Error("the photos did not land");
        this.answered = true;
      } catch (error) {
        this.log.warn("telegram: photo upload failed; restoring the references", { error: String(error) });
        if ((await this.post(toTelegramHtml(recoveryMarkdown(album)), undefined, true)) !== null)
          this.answered = true;
      }
    }
  }

  /** Deliver sealed bodies: the first reuses the live message; the suffix and keyboard go on the last. */
  private async deliver(
    pieces: string[],
    suffix: string,
    keyboard: TgInlineKeyboard | undefined,
  ): Promise<void> {
    for (const [i, piece] of pieces.entries()) {
      const isLast = i === pieces.length - 1;
      const html = isLast && suffix ? (piece ? `${piece}\n\n${suffix}` : suffix) : piece;
      const markup = isLast ? keyboard : undefined;
      const id =
        i === 0 && this.live
          ? await this.editOrPost(this.live.id, html, markup)
          : await this.post(html, markup);
      if (piece) this.answered = true;
      if (id !== null) this.lastSealed = { id, html, keyboard: markup };
    }
    this.live = null;
  }

  /**
   * The end's status line with nothing left to seal: it rides the last sealed message (one turn
   * ends in one place), or comes on its own when there is none or it would not fit.
   */
  private async placeStatus(statusHtml: string): Promise<void> {
    const last = this.lastSealed;
    const html = last ? `${last.html}\n\n${statusHtml}` : "";
    if (last && html.length <= TELEGRAM_MAX_MESSAGE_UTF16) {
      try {
        await this.transport.editHtml(this.o.chatId, last.id, html, last.keyboard);
        last.html = html;
        return;
      } catch (error) {
        this.log.debug("telegram: could not add the status line", { error: String(error) });
      }
    }
    await this.post(statusHtml, undefined, true);
  }

  // ── platform calls ────────────────────────────────────────────────────────────────────────

  /**
   * Post one body as the turn's next part (a resumed turn edits what its first run posted there);
   * null (and deliveryFailed) when it did not land.
   */
  private async post(html: string, keyboard?: TgInlineKeyboard, quiet = false): Promise<number | null> {
    try {
      const id = await this.parts.post(JSON.stringify([html, keyboard ?? null]), {
        // "Sending" once the chat's pacing lets the call go: a crash while it waits sent nothing.
        marksSending: true,
        create: async (_key, sending) =>
          String(
            await this.transport.postHtml(this.o.chatId, html, {
              threadId: this.o.threadId,
              replyMarkup: keyboard,
              disableNotification: quiet,
              onWire: sending,
            }),
          ),
        // The earlier part's buttons go unless this part has its own.
        replace: async (earlier) => {
          await this.transport.editHtml(
            this.o.chatId,
            Number(earlier),
            html,
            keyboard ?? { inline_keyboard: [] },
          );
          return true;
        },
      });
      return id === null ? null : Number(id);
    } catch (error) {
      this.deliveryFailed = true;
      this.log.error("telegram: send failed", { error: String(error) });
      return null;
    }
  }

  /** Finalize a message by editing it; if the edit cannot land (deleted message), post it anew. */
  private async editOrPost(id: number, html: string, keyboard?: TgInlineKeyboard): Promise<number | null> {
    try {
      await this.transport.editHtml(this.o.chatId, id, html, keyboard);
      return id;
    } catch (error) {
      // Only Telegram's own refusal (the message is gone, or cannot be edited) means a new message
      // is needed. A network failure (already retried) may have edited it: a second message would
      // show the answer twice, so the part is reported as not delivered instead.
      if (apiErrorOf(error) === null) {
        this.deliveryFailed = true;
        this.log.error("telegram: final edit failed", { error: String(error) });
        return null;
      }
      this.log.warn("telegram: final edit refused; sending as a new message", { error: String(error) });
      return this.post(html, keyboard);
    }
  }

  /**
   * The live message when it shows only its footer (no answer text yet), rewritten as `html` so
   * that what follows opens below it; its id, or null when there is none to take (or the edit failed).
   */
  private async takeFooterOnlyLive(html: string, keyboard?: TgInlineKeyboard): Promise<number | null> {
    const live = this.live;
    if (!live || live.body || this.pendingSeals > 0 || this.splitter.tail.trim()) return null;
    this.live = null;
    try {
      await this.transport.editHtml(this.o.chatId, live.id, html, keyboard);
      return live.id;
    } catch (error) {
      this.log.debug("telegram: could not reuse the live message", { error: String(error) });
      return null;
    }
  }

  // ── typing ────────────────────────────────────────────────────────────────────────────────

  private keepTyping(): void {
    if (this.finished) return;
    this.transport.typing(this.o.chatId, this.o.threadId).catch((error: unknown) => {
      this.log.debug("telegram: typing indicator failed", { error: String(error) });
    });
    this.typingTimer = this.timers.setTimeout(() => this.keepTyping(), this.typingIntervalMs);
  }

  private stopTyping(): void {
    if (this.typingTimer !== null) this.timers.clearTimeout(this.typingTimer);
    this.typingTimer = null;
  }
}
