/**
 * WebChatRenderer: streams one live bubble edited in place (throttled), rotates to a new bubble when
 * the text outgrows the cap (the shared StreamingSplitter seals fence-balanced chunks; the first
 * chunk reuses the live bubble, so there is never a preview plus a duplicate final), seals at a
 * steer boundary with a quote chip and at an approval prompt (what follows the decision opens a new
 * bubble below the prompt), and finishes with [OPTIONS:] chips and a turn-status line. The live
 * bubble's status line is the kit's LiveStatus; a turn that produced no answer ends with the
 * kit's notice (with the failure's reason), never an empty bubble.
 * Every string reaches the page through the transport's one render path (display redaction, then
 * markdown-it with raw HTML off).
 */
import type { Timers } from "../messaging/base/clock.js";
import { realClock } from "../messaging/base/clock.js";
import { TurnParts } from "../messaging/channel/delivery.js";
import { LiveStatus, ToolParagraphs } from "../messaging/channel/live-status.js";
import {
  EditThrottle,
  freshSessionNotice,
  noAnswerNotice,
  steerChip,
  turnStatusLine,
  typedReplyHint,
} from "../messaging/channel/render-kit.js";
import { applyOptionsCap, splitOptionsTrailer } from "../messaging/text/options.js";
import { StreamingSplitter } from "../messaging/text/streaming-splitter.js";
import type { AgentStatus, PromptOption, ToolChange, TurnEnding } from "../messaging/turn/renderer.js";
import { Renderer } from "../messaging/turn/renderer.js";
import type { BubbleButton } from "./protocol.js";
import type { WebChatTransport } from "./transport.js";

export interface WebChatRendererOptions {
  timers?: Timers;
  now?: () => number;
  /** Minimum gap between two edits of the live bubble. */
  throttleMs?: number;
  /** The turn's outbound parts: each bubble this renderer creates is named by the next part key. */
  parts?: TurnParts;
}

/** Room kept under the cap for the chip line a sealed segment may carry. */
const CAP_HEADROOM = 200;

export class WebChatRenderer extends Renderer {
  private readonly timers: Timers;
  private readonly now: () => number;
  private splitter: StreamingSplitter;
  private liveId: string | null = null;
  private prefix = "";
  private readonly status = new LiveStatus("/stop");
  private readonly paragraphs = new ToolParagraphs();
  private readonly throttle: EditThrottle;
  private readonly parts: TurnParts;
  private readonly startedAt: number;
  private contextUsagePct: number | undefined;
  /** Answer text reached a bubble in this turn (a prompt or a notice is not an answer). */
  private answered = false;
  /** The live bubble shows text of its own (the steer chip counts): it cannot be reused. */
  private liveHasText = false;
  private finished = false;
  /** The last frame pushed to the live bubble. */
  private shown: { id: string; text: string; status: string } | null = null;
  private noted: string[] = [];
  /** requestId -> approval bubble id, so the dispatcher can show the outcome on the prompt itself. */
  readonly approvalBubbles = new Map<string, string>();

  constructor(
    private readonly transport: WebChatTransport,
    private readonly conversationId: string,
    options: WebChatRendererOptions = {},
  ) {
    super(transport.capabilities);
    this.timers = options.timers ?? realClock;
    this.now = options.now ?? (() => Date.now());
    this.throttle = new EditThrottle(this.timers, this.now, options.throttleMs ?? 80, () => this.flushEdit());
    this.parts = options.parts ?? TurnParts.unrecorded();
    this.startedAt = this.now();
    this.splitter = this.newSplitter();
  }

  private newSplitter(): StreamingSplitter {
    return new StreamingSplitter(Math.max(500, this.capabilities.maxMessageChars - CAP_HEADROOM));
  }

  /** The dispatcher records the user's own words for the steer chip (not the backend's echo). */
  override noteSteer(text: string): void {
    this.noted.push(text);
  }

  override async onTurnStart(): Promise<void> {
    this.status.thinking();
    this.ensureLive();
  }

  async onTextChunk(text: string): Promise<void> {
    this.status.writing();
    const joined = this.paragraphs.next(this.splitter.tail, text);
    for (const sealed of this.splitter.append(joined)) this.sealLive(sealed, {});
    // The first words of a bubble go out at once (first-token latency is what a user feels);
    // the rest of the stream is throttled.
    if (this.liveHasText) this.scheduleEdit();
    else this.flushEdit();
  }

  async onThinking(): Promise<void> {
    this.status.thinking();
    this.scheduleEdit();
  }

  async onToolCall(toolCallId: string, title: string): Promise<void> {
    this.paragraphs.toolCalled();
    this.status.tool(toolCallId, title);
    this.scheduleEdit();
  }

  async onToolUpdate(toolCallId: string, change: ToolChange): Promise<void> {
    this.status.toolChanged(toolCallId, change);
    this.scheduleEdit();
  }

  async onAgentStatus(status: AgentStatus): Promise<void> {
    if (status.type === "fresh_session") {
      this.postNotice(freshSessionNotice(status.cause, status.reason, status.replayed));
      return;
    }
    this.status.agent(status);
    this.scheduleEdit();
  }

  async onPromptChoice(
    options: PromptOption[],
    requestId: string,
    context: { toolTitle: string; toolPurpose: string; nonce: string },
  ): Promise<boolean> {
    // The answer so far stays above the prompt; what the decision releases continues below it.
    this.sealSegment();
    const buttons: BubbleButton[] = options.slice(0, Math.max(0, this.capabilities.maxButtons)).map((o) => ({
      label: o.label,
      verdict: o.verdict,
      requestId,
      nonce: context.nonce,
    }));
    const purpose = context.toolPurpose ? `\n\n${context.toolPurpose}` : "";
    const hint = typedReplyHint(buttons.length > 0 ? buttons : options, buttons.length > 0);
    const bubble = {
      role: "approval" as const,
      text: `🔐 **Permission needed:** ${context.toolTitle || "a tool"}${purpose}\n\n${hint}`,
      buttons,
      status: "",
      final: false,
    };
    const id = this.takeEmptyLive(bubble) ?? this.create(bubble);
    this.approvalBubbles.set(requestId, id);
    // Always shown: the bubble goes into the conversation's own log, which the page reads back.
    return true;
  }

  /** Resolve the prompt on screen: the buttons go away and the outcome is written in. */
  override markApproval(requestId: string, outcome: string): void {
    const id = this.approvalBubbles.get(requestId);
    if (id) this.transport.edit(this.conversationId, id, { buttons: [], status: outcome, final: true });
    // The turn goes on below the prompt: the next frame opens its bubble.
    if (!this.finished && !this.quiet) {
      this.status.thinking();
      this.scheduleEdit();
    }
  }

  async onCompaction(contextUsagePct: number | undefined, receipt: string): Promise<void> {
    if (contextUsagePct !== undefined) this.contextUsagePct = contextUsagePct;
    if (receipt) this.create({ role: "system", text: receipt, final: true });
  }

  override async onSteerConsumed(summary: string): Promise<void> {
    // Seal the pre-steer answer (its options travel with it), then open the continuation with a chip.
    this.sealSegment();
    const words = this.noted.shift() ?? summary;
    this.prefix = steerChip(words);
    this.status.thinking();
    this.ensureLive();
  }

  async onDone(stopReason: string, ending: TurnEnding = {}): Promise<void> {
    const { error } = ending;
    if (ending.contextUsagePct !== undefined) this.contextUsagePct = ending.contextUsagePct;
    this.finished = true;
    this.throttle.cancel();
    const chunks = this.splitter.finish();
    this.splitter = this.newSplitter();
    const last = chunks.pop() ?? "";
    for (const chunk of chunks) this.sealLive(chunk, {});
    const { body, choices } = splitOptionsTrailer(last, { hidePartial: false });
    const capped = applyOptionsCap(body, choices, this.capabilities);
    const usage = this.contextUsagePct;
    const silent = !this.answered && !capped.body.trim() && capped.choices.length === 0;
    const status = this.quiet
      ? ""
      : turnStatusLine(stopReason, {
          elapsedMs: this.now() - this.startedAt,
          ...(usage === undefined ? {} : { contextUsagePct: usage }),
          ...(error ? { error } : {}),
          reasonShown: silent,
        });
    // A turn that produced nothing says so (and why, when it failed): never an empty bubble.
    const text =
      silent && !this.quiet ? noAnswerNotice(stopReason === "error", "`/new`", error) : capped.body;
    if (!this.liveId && !text && !this.prefix) {
      if (this.quiet) return;
      // Nothing after an approval prompt: the turn's status line ends the turn on its own.
      this.create({ role: "system", text: "", status, final: true });
      return;
    }
    this.sealLive(text, { chips: capped.choices, status });
  }

  override async close(reason?: unknown): Promise<void> {
    this.throttle.cancel();
    if (this.liveId && !this.finished && !this.quiet) {
      // A turn that never reached its end (no DONE) must still say so, never leave a spinner behind.
      const text = noAnswerNotice(Boolean(reason), "`/new`");
      this.transport.edit(this.conversationId, this.liveId, { text, status: "", final: true });
    }
    this.finished = true;
    this.liveId = null;
  }

  // ── internals ────────────────────────────────────────────────────────────────────────────────

  private ensureLive(): string {
    if (!this.liveId) {
      const frame = { text: this.prefix, status: this.status.line };
      this.liveId = this.create({ role: "assistant", ...frame, final: false });
      this.shown = { id: this.liveId, ...frame };
      this.liveHasText = this.prefix !== "";
    }
    return this.liveId;
  }

  /**
   * The live bubble when it shows nothing yet (a status line only), turned into `bubble` so that
   * what comes next still opens below it; null when there is none to take.
   */
  private takeEmptyLive(bubble: Parameters<WebChatTransport["edit"]>[2]): string | null {
    const id = this.liveId;
    if (!id || this.liveHasText || this.splitter.tail) return null;
    this.throttle.cancel();
    this.liveId = null;
    return this.transport.edit(this.conversationId, id, bubble) ? id : null;
  }

  /** A notice in the conversation, above the answer it concerns. */
  private postNotice(text: string): void {
    const notice = { role: "system" as const, text, status: "", final: true };
    if (this.takeEmptyLive(notice) === null) this.create(notice);
    if (!this.finished) this.ensureLive();
  }

  /**
   * The one way this renderer creates a bubble: named by the turn's next part key, so the same part
   * of a turn resumed after a restart replaces its bubble instead of adding a second one.
   */
  private create(bubble: Parameters<WebChatTransport["post"]>[1]): string {
    return this.transport.post(this.conversationId, bubble, {
      id: this.parts.nextKey(),
      turn: this.parts.turnId,
    });
  }

  private scheduleEdit(): void {
    if (!this.finished) this.throttle.schedule();
  }

  /** Push the live presentation now: the unfinished [OPTIONS fragment stays off the screen. */
  private flushEdit(): void {
    this.throttle.cancel();
    if (this.finished) return;
    const tail = this.splitter.tail;
    const body = splitOptionsTrailer(tail, { hidePartial: true }).body;
    const id = this.ensureLive();
    if (body) {
      this.answered = true;
      this.liveHasText = true;
    }
    const frame = { text: this.prefix + body, status: this.status.line };
    // A thinking stream changes nothing on screen: no edit (each one re-renders and re-sends the bubble).
    if (this.shown?.id === id && this.shown.text === frame.text && this.shown.status === frame.status) return;
    this.throttle.mark();
    this.shown = { id, ...frame };
    if (!this.transport.edit(this.conversationId, id, frame)) this.deliveryFailed = true;
  }

  /** A chunk the splitter sealed: it finalizes the live bubble, and the tail moves to a new one. */
  private sealLive(text: string, extra: { chips?: string[]; status?: string }): void {
    const id = this.ensureLive();
    if (text.trim()) this.answered = true;
    const ok = this.transport.edit(this.conversationId, id, {
      text: this.prefix + text,
      status: extra.status ?? "",
      final: true,
      ...(extra.chips ? { chips: extra.chips } : {}),
    });
    if (!ok) this.deliveryFailed = true;
    this.prefix = "";
    this.liveId = null;
    this.liveHasText = false;
  }

  /**
   * A semantic seal mid-turn (a steer, an approval prompt): everything buffered, its options as
   * chips, no status line. A live bubble with nothing in it is left for the next use.
   */
  private sealSegment(): void {
    this.throttle.cancel();
    const chunks = this.splitter.finish();
    this.splitter = this.newSplitter();
    const last = chunks.pop() ?? "";
    for (const chunk of chunks) this.sealLive(chunk, {});
    const { body, choices } = splitOptionsTrailer(last, { hidePartial: false });
    const capped = applyOptionsCap(body, choices, this.capabilities);
    if (!capped.body && capped.choices.length === 0 && !this.liveHasText) return;
    this.sealLive(capped.body, { chips: capped.choices });
  }
}
