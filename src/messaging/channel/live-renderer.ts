/**
 * LiveRenderer: the one turn state machine for a surface that edits a message as it streams (the
 * platform brings a LiveSurface). One live message edited in place (throttled, on one queue, so a
 * frame never lands after its seal), sealed at the splitter's cap (the first chunk reuses the live
 * message: never a preview plus a duplicate). A steer seals the answer so far (its [OPTIONS:] as
 * widgets) and opens the continuation with a quote chip; an approval prompt seals the answer above
 * it (a footer-only live message becomes the prompt) and its outcome is written onto it. The live
 * footer is the kit's LiveStatus plus stall marks, never sealed; the end carries the turn-status
 * line, or the kit's notice when nothing was answered. `close` leaves no timer running.
 */

import { applyOptionsCap, splitOptionsTrailer } from "../text/options.js";
import type { AgentStatus, PromptOption, ToolChange, TurnEnding } from "../turn/renderer.js";
import { Renderer } from "../turn/renderer.js";
import { LiveCalls, postOptionsApart } from "./live-calls.js";
import { LiveDecor } from "./live-decor.js";
import { LivePacing, type LivePacingOptions } from "./live-pacing.js";
import { liveFrame, presented, sealPlan } from "./live-seal.js";
import { type LiveSplitter, liveSplitter } from "./live-segments.js";
import { LiveStatus, ReasoningPreview, ToolParagraphs } from "./live-status.js";
import { LiveStreamPath } from "./live-stream.js";
import type { LiveMessage, LiveSurface, PromptAbout } from "./live-surface.js";
import { decidedMessages, promptMessage } from "./live-surface.js";
import {
  approvalOutcomeLabel,
  contextUsageAtEnd,
  freshSessionNotice,
  SerialQueue,
  steerChip,
} from "./render-kit.js";

/** The pacing's knobs (channel, clock, throttle, first frame, stall marks), the surface, and: */
export interface LiveRendererOptions<W> extends Omit<LivePacingOptions, "frame" | "typing"> {
  surface: LiveSurface<W>;
  /** A refused edit (a live frame, a prompt's outcome) goes to a new message: nothing shown is lost. */
  postOnRefusal?: boolean;
  /**
   * A held answer: nothing streams (a streamed prefix cannot be unsent), and at the end this says
   * whether it goes out at all (false: an answer meaning "say nothing", a conversation gone quiet).
   */
  heldAnswer?: (text: string, files: number) => boolean;
  /** Show the agent's reasoning, once, ahead of the answer (the surface's `thinking` shape). */
  showThinking?: boolean;
  /** The session's context figure, read once as the turn ends (else the last compaction's). */
  contextUsage?: (() => number | undefined | Promise<number | undefined>) | undefined;
  /** Tables presented as the text streams, before the splitter cuts it (live-segments.ts). */
  presentFirst?: boolean | undefined;
}

export class LiveRenderer<W> extends Renderer {
  private readonly surface: LiveSurface<W>;
  private readonly pacing: LivePacing;
  private splitter: LiveSplitter;
  /** `body`: it shows answer text (not only its footer), so it cannot be taken for a prompt. */
  private live: { id: string; shown: string; body: boolean } | null = null;
  /** The quote chip waiting for the first real text of the post-steer segment. */
  private chip = "";
  private readonly status: LiveStatus;
  private readonly paragraphs = new ToolParagraphs();
  private readonly startedAt: number;
  private contextUsagePct: number | undefined;
  /** Real answer text reached the chat (a footer-only frame does not count). */
  protected answered = false;
  /** Sealed chunks queued but not yet sent: a live frame then would show the wrong tail. */
  private pendingSeals = 0;
  private finished = false;
  /** The turn began (onTurnStart) / reached its end (onDone), as opposed to being closed before it. */
  private begun = false;
  private ended = false;
  private readonly noted: string[] = [];
  /** The last message a seal delivered (where the end's status line goes when nothing follows). */
  private lastSealed: { id: string; body: string; widgets: W | undefined } | null = null;
  private readonly queue: SerialQueue;
  private readonly calls: LiveCalls<W>;
  private readonly decor: LiveDecor;
  /** The reasoning (only when shown), posted once ahead of the first message. */
  private readonly reasoning: ReasoningPreview;
  private frameQueued: Promise<void> | null = null;
  /** requestId -> the prompt's message, so the outcome can be written onto the prompt itself. */
  private readonly prompts = new Map<string, { id: string; head: string; about: PromptAbout }>();
  private readonly stream: LiveStreamPath<W>;

  constructor(private readonly o: LiveRendererOptions<W>) {
    super(o.surface.capabilities);
    this.surface = o.surface;
    this.pacing = new LivePacing({ ...o, typing: o.surface.typing, frame: () => this.queueFrame() });
    this.splitter = liveSplitter(o.surface.sourceCap, 0, o.presentFirst);
    this.status = new LiveStatus(o.surface.commands.stop);
    this.startedAt = o.now();
    this.calls = new LiveCalls(o.surface, o.channel, o.logger, () => {
      this.deliveryFailed = true;
    });
    const clock = {
      setTimeout: (fn: () => void, ms: number) => o.timers.setTimeout(fn, ms),
      clearTimeout: (handle: unknown) => o.timers.clearTimeout(handle),
      now: o.now,
    };
    this.reasoning = new ReasoningPreview(Boolean(o.showThinking && o.surface.thinking));
    this.decor = new LiveDecor(o.surface.reactions, clock, o.logger);
    this.stream = new LiveStreamPath(o.surface, this.calls, this.reasoning);
    this.queue = new SerialQueue((error) => {
      this.deliveryFailed = true;
      o.logger.error(`${o.channel}: render step failed`, { error: String(error) });
    });
  }

  /** The dispatcher records the user's own words, so the chip quotes them, not the backend's echo. */
  override noteSteer(text: string): void {
    this.noted.push(text);
  }

  override async onTurnStart(): Promise<void> {
    this.begun = true;
    this.decor.started();
    this.pacing.start();
    if (!this.quiet && !this.pacing.open()) await this.pacing.first();
  }

  async onTextChunk(text: string): Promise<void> {
    this.pacing.progress();
    this.decor.thinking();
    this.status.writing();
    const sealed = this.splitter.append(this.paragraphs.next(this.splitter.tail, text));
    this.pendingSeals += sealed.length;
    for (const chunk of sealed) {
      await this.enqueue(async () => {
        this.pendingSeals -= 1;
        await this.sealChunk(chunk);
      });
    }
    // Text opening a message (none shown yet, or a seal just closed it) may go out at once.
    if ((this.live?.body && !sealed.length) || !this.pacing.open()) await this.scheduleEdit();
  }

  async onThinking(text: string): Promise<void> {
    this.reasoning.add(text);
    this.decor.thinking();
    await this.moved(() => this.status.thinking());
  }

  async onToolCall(toolCallId: string, title: string, toolKind?: string, _purpose?: string): Promise<void> {
    this.decor.toolCalled(title, toolKind);
    this.paragraphs.toolCalled();
    this.stream.toolCalled(toolCallId, title);
    await this.moved(() => this.status.tool(toolCallId, title));
  }

  async onToolUpdate(toolCallId: string, change: ToolChange): Promise<void> {
    this.decor.toolChanged(change);
    this.stream.toolChanged(toolCallId, change);
    await this.moved(() => this.status.toolChanged(toolCallId, change));
  }

  async onAgentStatus(status: AgentStatus): Promise<void> {
    if (status.type === "fresh_session") {
      const body = this.surface.plain(freshSessionNotice(status.cause, status.reason, status.replayed));
      // Above the answer it concerns: a live message showing only its footer becomes the notice.
      await this.enqueue(async () => {
        if (!(await this.takeFooterOnlyLive({ body, quiet: true }))) await this.post({ body, quiet: true });
      });
      return;
    }
    // Waiting in line or a silent agent is not progress: the stall marks keep counting.
    this.status.agent(status);
    await this.scheduleEdit();
  }

  async onPromptChoice(
    options: PromptOption[],
    requestId: string,
    context: { toolTitle: string; toolPurpose: string; nonce: string },
  ): Promise<boolean> {
    // Shown only once the message landed: a step that failed or never ran leaves it false.
    let landed = false;
    this.pacing.progress();
    // Waiting on a human is not a stall: no mark while the prompt is open.
    this.pacing.waitOnHuman();
    this.decor.pause();
    this.pacing.cancelFrame();
    await this.enqueue(async () => {
      // The answer so far stays above the prompt; what the decision releases continues below it.
      await this.sealSegment();
      const { head, about, body, widgets } = promptMessage(this.surface, options, requestId, context);
      // A live message with only its footer becomes the prompt; the continuation opens below it.
      const id = (await this.takeFooterOnlyLive({ body, widgets })) ?? (await this.post({ body, widgets }));
      if (id !== null) this.prompts.set(requestId, { id, head, about });
      landed = id !== null;
      // The end's status line belongs below the prompt, never on the answer above it.
      this.lastSealed = null;
      await this.stream.status("");
    });
    return landed;
  }

  /** Write the outcome onto the prompt and drop its widgets, so a decided prompt never looks live. */
  override async markApproval(requestId: string, outcome: string): Promise<void> {
    this.decor.resume();
    // The turn goes on below the prompt, its next frame there (set now: the agent's next move overrides it).
    this.status.thinking();
    // Looked up on the queue: a press can arrive before the prompt's own send has returned.
    await this.enqueue(async () => {
      const prompt = this.prompts.get(requestId);
      if (!prompt) return;
      this.prompts.delete(requestId);
      const decided = decidedMessages(this.surface, prompt, outcome);
      try {
        await this.surface.edit(prompt.id, decided.edit);
      } catch (error) {
        this.o.logger.warn(`${this.o.channel}: could not mark the approval prompt`, { error: String(error) });
        // The outcome must be readable somewhere: below, when the prompt itself refused it.
        if (this.o.postOnRefusal && this.surface.refused(error)) await this.post(decided.post);
      }
    });
    if (!this.finished && !this.quiet) await this.scheduleEdit();
  }

  async onCompaction(contextUsagePct: number | undefined, receipt: string): Promise<void> {
    this.pacing.progress();
    if (contextUsagePct !== undefined) this.contextUsagePct = contextUsagePct;
    if (receipt)
      await this.enqueue(
        async () => void (await this.post({ body: this.surface.plain(receipt), quiet: true })),
      );
  }

  override async onSteerConsumed(summary: string, _steerId?: string): Promise<void> {
    this.pacing.progress();
    this.pacing.cancelFrame();
    await this.enqueue(() => this.sealSegment());
    this.chip = steerChip(this.noted.shift() ?? summary);
    // The chip rides the first chunk of the continuation: the splitter keeps room for it.
    this.splitter = liveSplitter(this.surface.sourceCap, Array.from(this.chip).length, this.o.presentFirst);
  }

  async onDone(stopReason: string, ending: TurnEnding = {}): Promise<void> {
    const { error } = ending;
    if (ending.contextUsagePct !== undefined) this.contextUsagePct = ending.contextUsagePct;
    this.finished = true;
    this.ended = true;
    this.pacing.stop();
    await this.enqueue(() => this.sealSegment({ stopReason, ...(error ? { error } : {}) }));
    this.decor.finish(stopReason === "error");
  }

  override async close(reason?: unknown): Promise<void> {
    this.finished = true;
    this.pacing.stop();
    // A prompt still showing widgets when the turn ends was never decided: say so on it.
    for (const requestId of [...this.prompts.keys()])
      void this.markApproval(requestId, approvalOutcomeLabel("abandoned"));
    // A turn cut before its end is sealed as it stands: what it said stays, its live footer goes,
    // and the end says it stopped (or failed); one that produced nothing says so. A held answer
    // was never promised, so a cut one sends nothing; one that never began (nothing readable to
    // ask, told elsewhere) has no turn to seal unless it failed.
    if (!this.ended && !this.o.heldAnswer && (this.begun || reason))
      await this.enqueue(() => this.sealSegment({ stopReason: reason ? "error" : "cancelled", cut: true }));
    // A turn cut before its end marks the user's message as failed.
    if (reason && !this.ended) this.decor.finish(true);
    // Nothing queued outlives the close: an abandoned prompt's outcome lands before it returns.
    await this.queue.idle();
    await this.decor.close();
  }

  private enqueue(op: () => Promise<void>): Promise<void> {
    return this.queue.run(op);
  }

  /** The agent moved: the status line follows it in the next live frame. */
  private moved(update: () => void): Promise<void> | undefined {
    this.pacing.progress();
    update();
    return this.scheduleEdit();
  }

  /** A frame at the throttle's next slot (protected: a surface whose live message must be renewed on time). */
  protected scheduleEdit(): Promise<void> | undefined {
    return this.finished ? undefined : this.pacing.schedule();
  }

  /** One frame waiting in the queue is enough: it renders the buffer as it is when it runs. */
  private queueFrame(): Promise<void> {
    this.frameQueued ??= this.enqueue(async () => {
      this.frameQueued = null;
      await this.flushLive();
    });
    return this.frameQueued;
  }

  private async flushLive(): Promise<void> {
    if (this.finished || this.pendingSeals > 0 || this.o.heldAnswer || this.splitter.held) return;
    const footer = [this.status.line, this.pacing.stallMark()].filter(Boolean).join(" ");
    // Not awaited unless streaming: an edit frame's pace is set before anything else is queued.
    const streamed = this.stream.on ? await this.stream.frame(this.splitter, this.chip) : null;
    if (streamed === null) await this.editFrame(footer);
    else this.pacing.framed();
    if (streamed) this.answered = true;
    await this.stream.status(footer);
  }

  private async editFrame(footer: string): Promise<void> {
    const { body, shown } = liveFrame(this.surface, this.splitter.tail, this.chip, footer);
    if (!shown) return;
    this.pacing.framed();
    if (shown === this.live?.shown && !this.surface.expiring?.()) return;
    // A live message showing only its footer becomes the reasoning (once): the answer opens below it.
    if (body && (await this.calls.reasoningOver(this.live, this.reasoning))) this.live = null;
    if (this.live) {
      const edit = await this.calls.editLive(this.live.id, { body: shown, live: true }, this.o.postOnRefusal);
      if (edit === "lost") return;
      if (edit === "edited") {
        this.live.shown = shown;
        this.live.body ||= Boolean(body);
        this.answered ||= Boolean(body);
        return;
      }
      // Refused: the message keeps what it shows; the frame continues in a new one.
      this.live = null;
    }
    const id = await this.post({ body: shown, live: true });
    if (id !== null) this.live = { id, shown, body: Boolean(body) };
    if (id !== null && body) this.answered = true;
  }

  /** The sealed presentation of canonical source (live-seal.ts); the chip goes with real text. */
  private present(source: string): string {
    if (source.trim()) [source, this.chip] = [this.chip + source, ""];
    return presented(this.surface, source.trim() ? source : "");
  }

  /** A length-sealed chunk: it finalizes the live message; the tail moves to a new one. */
  private async sealChunk(source: string): Promise<void> {
    await this.deliver(this.stream.form.fit(this.present(source)), "", undefined);
  }

  /**
   * A semantic seal (steer boundary, approval prompt, or the end: `final`): everything buffered,
   * options as widgets. The end carries the turn-status line, and a turn that produced no answer
   * ends with the kit's notice (and the failure's reason) instead of nothing.
   */
  private async sealSegment(final?: { stopReason: string; error?: string; cut?: boolean }): Promise<void> {
    const chunks = this.splitter.finish();
    this.splitter = liveSplitter(this.surface.sourceCap, 0, this.o.presentFirst);
    const last = chunks.pop() ?? "";
    for (const chunk of chunks) await this.sealChunk(chunk);
    const { body, choices } = splitOptionsTrailer(last, { hidePartial: false });
    const capped = applyOptionsCap(body, choices, this.capabilities);
    // Only a semantic seal extracts, once; length-sealed chunks keep their references as text.
    const files = this.surface.files;
    const extracted = files ? await files.extract(capped.body) : { text: capped.body, files: [] };
    // A held answer the end withholds sends nothing at all (no notice, no status line).
    if (final && this.o.heldAnswer?.(extracted.text, extracted.files.length) === false) return;
    const { text, files: found } = extracted;
    // A surface that uploads with the message (no `send`): the files ride the seal's last one.
    const attached = files && !files.send && found.length ? found : undefined;
    // One context-usage read per turn, at its end.
    const usage =
      final && !this.quiet
        ? await contextUsageAtEnd(this.o.contextUsage, this.contextUsagePct, this.o.logger)
        : undefined;
    const plan = sealPlan(this.stream.form, {
      presented: this.present(text),
      choices: capped.choices,
      files: found.length,
      attach: attached !== undefined,
      answered: this.answered,
      quiet: this.quiet,
      liveOpen: this.live !== null || this.stream.open,
      end: final && { ...final, elapsedMs: this.o.now() - this.startedAt, contextUsagePct: usage },
    });
    if (plan.kind === "deliver") await this.deliver(plan.pieces, plan.footer, plan.widgets, attached);
    else if (plan.footer) await this.placeStatus(plan.footer);
    await this.stream.end();
    await this.sendFiles(found);
    await postOptionsApart(this.stream.form, capped.choices, (message) => this.post(message));
    if (final) await this.stream.status("");
  }

  private async sendFiles(found: readonly unknown[]): Promise<void> {
    if (!found.length || !this.surface.files?.send) return;
    const { landed, lost } = await this.surface.files.send(found);
    if (landed) this.answered = true;
    if (lost) this.deliveryFailed = true;
  }

  /** Deliver sealed bodies: the first reuses the live message; the footer and widgets go on the last. */
  private async deliver(pieces: string[], footer: string, widgets?: W, attached?: readonly unknown[]) {
    for (const [i, piece] of pieces.entries()) {
      const isLast = i === pieces.length - 1;
      const message: LiveMessage<W> = {
        body: isLast && footer ? this.stream.form.join(piece, footer) : piece,
        widgets: isLast ? widgets : undefined,
        ...(isLast && attached ? { files: { items: attached, footer } } : {}),
      };
      const live = i === 0 ? this.live : null;
      const id = await this.stream.send(message, (m) =>
        live ? this.calls.editOrPost(live.id, m) : this.post(m),
      );
      if (piece || message.files) this.answered = true;
      // A streamed seal is no message to edit the status line onto later.
      if (id !== null && !this.stream.on)
        this.lastSealed = { id, body: message.body, widgets: message.widgets };
    }
    this.live = null;
  }

  /**
   * The end's status line with nothing left to seal: it rides the last sealed message (one turn
   * ends in one place), or comes on its own when there is none or it would not fit.
   */
  private async placeStatus(footer: string): Promise<void> {
    if (await this.stream.sealAlone(footer)) return;
    const last = this.lastSealed;
    const body = last ? this.surface.join(last.body, footer) : "";
    const message = { body, widgets: last?.widgets };
    if (
      last &&
      this.surface.fits(body) &&
      (await this.calls.tryEdit(last.id, message, "could not add the status line"))
    ) {
      last.body = body;
      return;
    }
    await this.post({ body: footer, quiet: true });
  }

  /** Post one message, the reasoning (when shown) once ahead of the turn's first. */
  private async post(message: LiveMessage<W>): Promise<string | null> {
    await this.calls.reasoning(this.reasoning.take());
    return this.calls.post(message);
  }

  /**
   * The live message when it shows only its footer (no answer text yet), rewritten as `message` so
   * that what follows opens below it; its id, or null when there is none to take (or the edit failed).
   */
  private async takeFooterOnlyLive(message: LiveMessage<W>): Promise<string | null> {
    const live = this.live;
    if (!live || live.body || this.pendingSeals > 0 || this.splitter.tail.trim()) return null;
    this.live = null;
    return (await this.calls.tryEdit(live.id, message, "could not reuse the live message")) ? live.id : null;
  }
}
