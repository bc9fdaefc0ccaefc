/**
 * WebChatRenderer: streams one live bubble edited in place (throttled), rotates to a new bubble when
 * the text outgrows the cap (the shared StreamingSplitter seals fence-balanced chunks; the first
 * chunk reuses the live bubble, so there is never a preview plus a duplicate final), seals at a
 * steer boundary with a quote chip, and finishes with [OPTIONS:] chips and a turn-status line.
 * Every string reaches the page through the transport's one render path (display redaction, then
 * markdown-it with raw HTML off).
 */
import type { Timers } from "../messaging/base/clock.js";
import { realClock } from "../messaging/base/clock.js";
import { TurnParts } from "../messaging/channel/delivery.js";
import {
  EditThrottle,
  noAnswerNotice,
  steerChip,
  turnStatusLine,
  typedReplyHint,
} from "../messaging/channel/render-kit.js";
import { oneLine } from "../messaging/text/clip.js";
import { applyOptionsCap, splitOptionsTrailer } from "../messaging/text/options.js";
import { StreamingSplitter } from "../messaging/text/streaming-splitter.js";
import type { PromptOption } from "../messaging/turn/renderer.js";
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
  private status = "";
  private readonly throttle: EditThrottle;
  private readonly parts: TurnParts;
  private readonly startedAt: number;
  private contextUsagePct: number | undefined;
  private posted = false;
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
    this.status = "💭 Thinking…";
    this.ensureLive();
  }

  async onTextChunk(text: string): Promise<void> {
    for (const sealed of this.splitter.append(text)) this.sealLive(sealed, {});
    this.scheduleEdit();
  }

  async onThinking(): Promise<void> {
    this.setStatus("💭 Thinking…");
  }

  async onToolCall(_toolCallId: string, title: string): Promise<void> {
    this.setStatus(`🔧 ${oneLine(title, 200) || "Working"}…`);
  }

  async onPromptChoice(
    options: PromptOption[],
    requestId: string,
    context: { toolTitle: string; toolPurpose: string; nonce: string },
  ): Promise<void> {
    this.flushEdit();
    const buttons: BubbleButton[] = options.slice(0, Math.max(0, this.capabilities.maxButtons)).map((o) => ({
      label: o.label,
      verdict: o.verdict,
      requestId,
      nonce: context.nonce,
    }));
    const purpose = context.toolPurpose ? `\n\n${context.toolPurpose}` : "";
    const id = this.create({
      role: "approval",
      text: `🔐 **Permission needed:** ${context.toolTitle || "a tool"}${purpose}\n\n${typedReplyHint(options, buttons.length > 0)}`,
      buttons,
      final: false,
    });
    this.approvalBubbles.set(requestId, id);
    this.posted = true;
  }

  /** Resolve the prompt on screen: the buttons go away and the outcome is written in. */
  override markApproval(requestId: string, outcome: string): void {
    const id = this.approvalBubbles.get(requestId);
    if (id) this.transport.edit(this.conversationId, id, { buttons: [], status: outcome, final: true });
  }

  async onCompaction(contextUsagePct: number | undefined, receipt: string): Promise<void> {
    if (contextUsagePct !== undefined) this.contextUsagePct = contextUsagePct;
    if (receipt) this.create({ role: "system", text: receipt, final: true });
  }

  override async onSteerConsumed(summary: string): Promise<void> {
    // Seal the pre-steer answer (its options travel with it), then open the continuation with a chip.
    this.sealAll();
    const words = this.noted.shift() ?? summary;
    this.prefix = steerChip(words);
    this.status = "💭 Thinking…";
    this.ensureLive();
  }

  async onDone(stopReason: string): Promise<void> {
    const usage = this.contextUsagePct;
    this.status = turnStatusLine(stopReason, {
      elapsedMs: this.now() - this.startedAt,
      ...(usage === undefined ? {} : { contextUsagePct: usage }),
    });
    this.sealAll();
  }

  override async close(reason?: unknown): Promise<void> {
    this.throttle.cancel();
    if (this.liveId && !this.posted) {
      // A turn that produced nothing must still say so, never leave a spinner behind.
      const text = noAnswerNotice(Boolean(reason), "`/new`");
      this.transport.edit(this.conversationId, this.liveId, { text, status: "", final: true });
    }
    this.liveId = null;
  }

  // ── internals ────────────────────────────────────────────────────────────────────────────────

  private ensureLive(): string {
    if (!this.liveId) {
      this.liveId = this.create({
        role: "assistant",
        text: this.prefix,
        status: this.status,
        final: false,
      });
    }
    return this.liveId;
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

  private setStatus(status: string): void {
    this.status = status;
    this.scheduleEdit();
  }

  private scheduleEdit(): void {
    this.throttle.schedule();
  }

  /** Push the live presentation now: the unfinished [OPTIONS fragment stays off the screen. */
  private flushEdit(): void {
    this.throttle.cancel();
    const tail = this.splitter.tail;
    const body = splitOptionsTrailer(tail, { hidePartial: true }).body;
    const id = this.ensureLive();
    if (body) this.posted = true;
    this.throttle.mark();
    if (!this.transport.edit(this.conversationId, id, { text: this.prefix + body, status: this.status }))
      this.deliveryFailed = true;
  }

  /** A chunk the splitter sealed: it finalizes the live bubble, and the tail moves to a new one. */
  private sealLive(text: string, extra: { chips?: string[]; status?: string }): void {
    const id = this.ensureLive();
    this.posted = true;
    const ok = this.transport.edit(this.conversationId, id, {
      text: this.prefix + text,
      status: extra.status ?? "",
      final: true,
      ...(extra.chips ? { chips: extra.chips } : {}),
    });
    if (!ok) this.deliveryFailed = true;
    this.prefix = "";
    this.liveId = null;
  }

  /** Seal everything buffered; the last piece carries the options chips and the status line. */
  private sealAll(): void {
    this.throttle.cancel();
    const chunks = this.splitter.finish();
    this.splitter = this.newSplitter();
    const last = chunks.pop() ?? "";
    for (const chunk of chunks) this.sealLive(chunk, {});
    const { body, choices } = splitOptionsTrailer(last, { hidePartial: false });
    const capped = applyOptionsCap(body, choices, this.capabilities);
    if (!this.liveId && !capped.body && capped.choices.length === 0 && !this.prefix) {
      if (this.status)
        this.create({
          role: "system",
          text: "",
          status: this.status,
          final: true,
        });
      return;
    }
    this.sealLive(capped.body, { chips: capped.choices, status: this.status });
  }
}
