/**
 * WhatsAppRenderer: an answer streamed into bubbles edited in place. Each edit is a full end-to-end
 * encrypted send to every device of every participant, so edits are coalesced (one frame at most
 * per `editIntervalMs`, single-flight: a frame renders the newest text when it runs, never a
 * backlog). The segment is rendered whole into the dialect and split at 4,096 characters
 * (bubbles.ts: a new bubble at the cap or before the 15-minute edit window closes; a chunk counts as
 * shown only once its send returned). The live bubble carries the kit's status line in italics; no
 * sealed bubble keeps it. An approval prompt seals the answer above it and is answered by typing
 * 1/2/3 (no buttons on a personal account); its outcome, a timeout included, is written onto the
 * prompt itself. A steer seals too, and the continuation opens with the user's words quoted.
 *
 * The reaction on the message being answered is the at-a-glance progress marker: ⏳ while the turn
 * runs, then ✅ when something was delivered and the turn did not fail, else ⚠️. An UNPROMPTED group
 * turn (rules mode, nobody addressed the agent) never streams and never reacts: it may still choose
 * silence (its answer is then exactly the silence sentinel) and a streamed prefix cannot be unsent.
 * A muted conversation never reaches this renderer (the pipeline substitutes a silent one).
 */
import type { Timers } from "../messaging/base/clock.js";
import { realClock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import { silentLogger } from "../messaging/base/logger.js";
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
import { hideLocalRefs } from "../messaging/files/outbound-files.js";
import { oneLine } from "../messaging/text/clip.js";
import { applyOptionsCap, splitOptionsTrailer } from "../messaging/text/options.js";
import type { AgentStatus, PromptOption, ToolChange, TurnEnding } from "../messaging/turn/renderer.js";
import { Renderer } from "../messaging/turn/renderer.js";
import type { Bubble } from "./bubbles.js";
import { EDIT_WINDOW_MS, Segment } from "./bubbles.js";
import { displaySafeText, renderChunks, toWhatsApp, WHATSAPP_MAX_CHARS } from "./format.js";
import { isSilence } from "./groups.js";
import type { WhatsAppTransport } from "./transport.js";
import { decodeKey } from "./transport.js";
import { extractUploads } from "./uploads.js";
import type { WAMessageKey } from "./wire.js";

export const REACTION_WORKING = "⏳";
export const REACTION_DONE = "✅";
export const REACTION_FAILED = "⚠️";

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
  /**
   * Asked at the end of an unprompted turn: false when the group went quiet meanwhile (another
   * unprompted answer landed while this one ran), so a burst cannot speak twice inside a cooldown.
   */
  maySpeak?: () => boolean;
  parts?: TurnParts;
  /** Local images to send after the text; absent = their paths stay text. */
  uploads?: OutboundFilePolicy;
  /**
   * How old a bubble an earlier run of this turn posted may be (the journal's staleness bound):
   * its edit window is counted from then.
   */
  resumedAgeMs?: number;
}

const MAX_TITLE_CHARS = 200;
/** Room kept in the last chunk for the status line. */
const STATUS_RESERVE = 120;

export class WhatsAppRenderer extends Renderer {
  private readonly timers: Timers;
  private readonly now: () => number;
  private readonly log: Logger;
  private readonly parts: TurnParts;
  private readonly throttle: EditThrottle;
  private readonly status = new LiveStatus("/stop");
  private readonly paragraphs = new ToolParagraphs();
  private readonly queue = new SerialQueue((error) => {
    this.deliveryFailed = true;
    this.log.error("whatsapp: render step failed", { error: String(error) });
  });
  private readonly startedAt: number;
  private source = "";
  private chip = "";
  private noted: string[] = [];
  private segment: Segment;
  /** The live bubble shows only the status line (no answer text yet). */
  private statusOnly = false;
  private frameQueued = false;
  private firstFrame = true;
  private firstTimer: unknown = null;
  private finished = false;
  private ended = false;
  private answered = false;
  private failed = false;
  private contextUsagePct: number | undefined;
  private typingTimer: unknown = null;
  /** The turn shows "typing" (not an unprompted one); re-armed after an approval. */
  private typing = false;
  private waitingOnHuman = false;
  private readonly prompts = new Map<string, { bubble: Bubble; head: string }>();

  constructor(
    private readonly transport: WhatsAppTransport,
    private readonly o: WhatsAppRendererOptions,
  ) {
    super(transport.capabilities);
    this.timers = o.timers ?? realClock;
    this.now = o.now ?? (() => Date.now());
    this.log = o.logger ?? silentLogger;
    this.parts = o.parts ?? TurnParts.unrecorded();
    this.startedAt = this.now();
    this.segment = this.newSegment();
    this.throttle = new EditThrottle(this.timers, this.now, o.editIntervalMs ?? 2000, () =>
      this.queueFrame(),
    );
  }

  override noteSteer(text: string): void {
    this.noted.push(text);
  }

  override async onTurnStart(): Promise<void> {
    if (this.o.unprompted) return;
    void this.react(REACTION_WORKING);
    this.typing = true;
    this.keepTyping();
  }

  async onTextChunk(text: string): Promise<void> {
    this.resumeTyping();
    this.status.writing();
    this.source += this.paragraphs.next(this.source, text);
    this.scheduleFrame();
  }

  async onThinking(): Promise<void> {
    this.status.thinking();
    this.scheduleFrame();
  }

  async onToolCall(toolCallId: string, title: string): Promise<void> {
    this.resumeTyping();
    this.paragraphs.toolCalled();
    this.status.tool(toolCallId, title);
    this.scheduleFrame();
  }

  async onToolUpdate(toolCallId: string, change: ToolChange): Promise<void> {
    this.status.toolChanged(toolCallId, change);
    this.scheduleFrame();
  }

  async onAgentStatus(status: AgentStatus): Promise<void> {
    if (status.type === "fresh_session") {
      const text = displaySafeText(freshSessionNotice(status.cause, status.reason, status.replayed));
      // Above the answer it concerns: a live bubble showing only its status line becomes the notice.
      await this.enqueue(async () => {
        const taken = this.segment.takeStatusOnly(this.statusOnly);
        if (taken) await this.transport.editText(this.o.chat, taken.key, text);
        else if (!(await this.create(text))) this.deliveryFailed = true;
        this.statusOnly = false;
      });
      return;
    }
    this.status.agent(status);
    this.scheduleFrame();
  }

  async onPromptChoice(
    options: PromptOption[],
    requestId: string,
    context: { toolTitle: string; toolPurpose: string; nonce: string },
  ): Promise<boolean> {
    // Shown only once the bubble landed: a step that failed or never ran leaves it false.
    let shown = false;
    // The agent now waits on a person: "typing" would say the opposite for up to five minutes.
    this.waitingOnHuman = true;
    this.stopTyping();
    this.cancelFrames();
    await this.enqueue(async () => {
      const taken = await this.sealSegment();
      const title = displaySafeText(oneLine(context.toolTitle || "a tool", MAX_TITLE_CHARS));
      const purpose = context.toolPurpose ? `\n${displaySafeText(oneLine(context.toolPurpose, 400))}` : "";
      const head = `🔐 *Permission needed:* ${title}${purpose}`;
      // Without buttons the prompt offers the two answers that need no explaining; a typed 3
      // ("always") still works, the help card says so.
      const offered = options.filter((opt) => opt.verdict !== "approve_always");
      const text = `${head}\n\n_${typedReplyHint(offered, false)}_`;
      let bubble: Bubble | null = null;
      if (taken) {
        await this.transport.editText(this.o.chat, taken.key, text);
        taken.text = text;
        bubble = taken;
      } else bubble = await this.create(text);
      if (bubble) this.prompts.set(requestId, { bubble, head });
      else this.deliveryFailed = true;
      shown = bubble !== null;
    });
    return shown;
  }

  /** The outcome onto the prompt itself (a timeout too), so a decided prompt never looks open. */
  override async markApproval(requestId: string, outcome: string): Promise<void> {
    await this.enqueue(async () => {
      const prompt = this.prompts.get(requestId);
      if (!prompt) return;
      this.prompts.delete(requestId);
      const text = `${prompt.head}\n\n*${outcome}*`;
      try {
        if (!this.segment.editable(prompt.bubble)) throw new Error("the prompt's edit window closed");
        await this.transport.editText(this.o.chat, prompt.bubble.key, text);
      } catch (error) {
        // The outcome must be readable somewhere: below, when the prompt itself cannot take it.
        this.log.debug("whatsapp: could not mark the prompt; posting the outcome", { error: String(error) });
        await this.create(text);
      }
    });
    if (!this.finished) {
      this.waitingOnHuman = false;
      this.status.thinking();
      this.scheduleFrame();
    }
  }

  async onCompaction(contextUsagePct: number | undefined, receipt: string): Promise<void> {
    if (contextUsagePct !== undefined) this.contextUsagePct = contextUsagePct;
    if (receipt && !this.o.unprompted)
      await this.enqueue(async () => {
        if (!(await this.create(toWhatsApp(receipt)))) this.deliveryFailed = true;
      });
  }

  override async onSteerConsumed(summary: string): Promise<void> {
    this.cancelFrames();
    await this.enqueue(async () => void (await this.sealSegment(undefined, { keepStatusBubble: true })));
    this.chip = steerChip(this.noted.shift() ?? summary);
  }

  async onDone(stopReason: string, ending: TurnEnding = {}): Promise<void> {
    if (ending.contextUsagePct !== undefined) this.contextUsagePct = ending.contextUsagePct;
    this.failed = stopReason === "error";
    this.finished = true;
    this.stopTyping();
    this.cancelFrames();
    await this.enqueue(async () => {
      this.ended = true;
      await this.sealSegment({ stopReason, ...(ending.error ? { error: ending.error } : {}) });
    });
  }

  override async close(reason?: unknown): Promise<void> {
    this.finished = true;
    this.stopTyping();
    this.cancelFrames();
    for (const requestId of [...this.prompts.keys()])
      void this.markApproval(requestId, approvalOutcomeLabel("abandoned"));
    await this.enqueue(async () => {
      // A turn that never reached its end (the agent could not start) still says so.
      if (!this.ended && !this.answered && !this.o.unprompted) {
        const text = displaySafeText(noAnswerNotice(Boolean(reason), "`/new`"));
        const taken = this.segment.takeStatusOnly(this.statusOnly);
        if (taken) await this.transport.editText(this.o.chat, taken.key, text);
        else if (!(await this.create(text))) this.deliveryFailed = true;
      }
    });
    await this.queue.idle();
    if (this.o.unprompted) return;
    // Success is "delivered and not failed": a failed turn still delivers its apology.
    const ok = this.answered && !this.failed && !reason && !this.deliveryFailed;
    await this.react(ok ? REACTION_DONE : REACTION_FAILED);
  }

  // ── frames ────────────────────────────────────────────────────────────────────────────────

  private enqueue(op: () => Promise<void>): Promise<void> {
    return this.queue.run(op);
  }

  private newSegment(): Segment {
    return new Segment({
      now: this.now,
      windowMs: this.o.editWindowMs ?? EDIT_WINDOW_MS,
      create: (text) => this.create(text),
      edit: (b, text) => this.transport.editText(this.o.chat, b.key, text),
    });
  }

  private scheduleFrame(): void {
    // An unprompted turn shows nothing until it is sure it speaks at all.
    if (this.finished || this.o.unprompted || this.waitingOnHuman) return;
    if (this.firstFrame) {
      // The first frame waits: an answer that comes quickly arrives as one bubble, not a preview.
      this.firstFrame = false;
      this.firstTimer = this.timers.setTimeout(() => {
        this.firstTimer = null;
        this.throttle.schedule();
      }, this.o.firstFrameMs ?? 1000);
      return;
    }
    if (this.firstTimer === null) this.throttle.schedule();
  }

  private cancelFrames(): void {
    this.throttle.cancel();
    if (this.firstTimer !== null) this.timers.clearTimeout(this.firstTimer);
    this.firstTimer = null;
    this.firstFrame = true;
  }

  /** Single-flight: one frame waits in the queue at most, and renders the buffer as it is then. */
  private queueFrame(): void {
    if (this.frameQueued || this.finished) return;
    this.frameQueued = true;
    void this.enqueue(async () => {
      this.frameQueued = false;
      if (!this.finished && !this.waitingOnHuman) await this.liveFrame();
    });
  }

  /** The segment as shown live: a partial [OPTIONS hidden, image paths hidden, the status below. */
  private async liveFrame(): Promise<void> {
    const shown = splitOptionsTrailer(this.source, { hidePartial: true }).body;
    const body = this.o.uploads ? hideLocalRefs(shown) : shown;
    const chunks = renderChunks(this.withChip(body), { live: true, reserve: STATUS_RESERVE });
    const status = `_${displaySafeText(this.status.line)}_`;
    const last = chunks.pop();
    const tail = last === undefined ? status : `${last}\n\n${status}`;
    await this.segment.show([...chunks, tail], false);
    this.statusOnly = last === undefined;
    if (last !== undefined && this.segment.bubbles.length > 0) this.answered = true;
  }

  private withChip(body: string): string {
    return body.trim() ? this.chip + body : "";
  }

  /**
   * Seal the segment: everything buffered, its [OPTIONS] as a numbered list, its images extracted;
   * at the end with the turn's status line (or the no-answer notice). Returns the live bubble when
   * it showed only a status line and nothing replaced it, for the caller to take over.
   */
  private async sealSegment(
    final?: { stopReason: string; error?: string },
    opts: { keepStatusBubble?: boolean } = {},
  ): Promise<Bubble | null> {
    const { body, choices } = splitOptionsTrailer(this.source, { hidePartial: false });
    const capped = applyOptionsCap(body, choices, this.capabilities).body;
    const { text, files } = this.o.uploads
      ? await extractUploads(capped, this.o.uploads, this.log)
      : { text: capped, files: [] };
    const source = this.withChip(text);
    if (source.trim()) this.chip = "";
    const segment = this.segment;
    const statusOnly = this.statusOnly;
    this.source = "";
    this.segment = this.newSegment();
    this.statusOnly = false;
    if (this.o.unprompted && final) return this.sealUnprompted(source, files);
    let chunks = renderChunks(source, { reserve: final ? STATUS_RESERVE : 0 });
    if (final) {
      const silent = !this.answered && chunks.length === 0 && files.length === 0;
      const status = turnStatusLine(final.stopReason, {
        elapsedMs: this.now() - this.startedAt,
        ...(this.contextUsagePct === undefined ? {} : { contextUsagePct: this.contextUsagePct }),
        ...(final.error ? { error: final.error } : {}),
        reasonShown: silent,
      });
      if (silent)
        chunks = [
          displaySafeText(noAnswerNotice(final.stopReason === "error", "`/new`", final.error)),
          `_${displaySafeText(status)}_`,
        ];
      else chunks = withSuffix(chunks, `_${displaySafeText(status)}_`);
    }
    if (chunks.length === 0) {
      // Mid-turn with nothing to seal: a status-only bubble is handed on (to the prompt that takes
      // its place, or to the continuation after a steer), never left behind as a stale status.
      const taken = segment.takeStatusOnly(statusOnly);
      if (taken && opts.keepStatusBubble) {
        this.segment.bubbles.push(taken);
        this.statusOnly = true;
      } else if (taken) return taken;
    } else if (await segment.show(chunks, true)) this.answered = true;
    else this.deliveryFailed = true;
    await this.sendImages(files);
    return null;
  }

  /** An unprompted group answer: all or nothing, and nothing when the agent chose silence. */
  private async sealUnprompted(source: string, files: readonly OutboundFile[]): Promise<null> {
    if (isSilence(source) && files.length === 0) return null;
    if (this.o.maySpeak && !this.o.maySpeak()) {
      this.log.debug("whatsapp: an unprompted answer fell inside the group's cooldown; not sent");
      return null;
    }
    const segment = this.segment;
    const chunks = renderChunks(source);
    if (chunks.length > 0 && !(await segment.show(chunks, true))) this.deliveryFailed = true;
    await this.sendImages(files);
    if (this.answered || (chunks.length > 0 && !this.deliveryFailed)) {
      this.answered = true;
      this.o.onDelivered?.();
    }
    return null;
  }

  private async sendImages(files: readonly OutboundFile[]): Promise<void> {
    for (const f of files) {
      try {
        const landed = await this.parts.post(JSON.stringify([f.filename, f.bytes.length]), {
          create: async (key) =>
            (await this.transport.sendImage(this.o.chat, f.bytes, f.mime, f.alt, key)).id ?? null,
          // An image cannot be edited into another: a landed one is left alone.
          replace: async () => false,
        });
        if (landed) this.answered = true;
        else throw new Error("the image did not land");
      } catch (error) {
        this.log.warn("whatsapp: image send failed", { error: String(error) });
        await this.create(displaySafeText(`⚠️ Could not send the image ${f.alt ? `"${f.alt}"` : ""}`.trim()));
      }
    }
  }

  // ── platform calls ────────────────────────────────────────────────────────────────────────

  /** A new bubble, as the turn's next part; null when it did not land. */
  private async create(text: string): Promise<Bubble | null> {
    const body = Array.from(text).length > WHATSAPP_MAX_CHARS ? (renderChunks(text)[0] ?? "") : text;
    try {
      let resumed = false;
      const id = await this.parts.post(body, {
        create: async (key) => (await this.transport.sendText(this.o.chat, body, key)).id ?? null,
        replace: async (earlier) => {
          resumed = true;
          await this.transport.editText(this.o.chat, this.ownKey(earlier), body);
          return true;
        },
      });
      if (id === null) return null;
      // A bubble an earlier run posted is as old as a resumable message can be, at most.
      const at = resumed ? this.now() - (this.o.resumedAgeMs ?? 0) : this.now();
      return { key: this.ownKey(id), text: body, at, closed: false };
    } catch (error) {
      // The caller decides what a lost bubble costs: a live frame is retried by the next one.
      this.log.error("whatsapp: send failed", { error: String(error) });
      return null;
    }
  }

  private ownKey(id: string): WAMessageKey {
    return { remoteJid: this.o.chat, fromMe: true, id };
  }

  private async react(emoji: string): Promise<void> {
    if (!this.o.messageId) return;
    try {
      await this.transport.react(this.o.chat, decodeKey(this.o.chat, this.o.messageId), emoji);
    } catch (error) {
      this.log.debug("whatsapp: reaction failed", { error: String(error) });
    }
  }

  // ── typing ────────────────────────────────────────────────────────────────────────────────

  private keepTyping(): void {
    if (this.finished || this.waitingOnHuman || this.o.unprompted) return;
    this.transport.typing(this.o.chat, true).catch((error: unknown) => {
      this.log.debug("whatsapp: typing indicator failed", { error: String(error) });
    });
    this.typingTimer = this.timers.setTimeout(() => this.keepTyping(), this.o.typingIntervalMs ?? 10_000);
  }

  /** Re-armed lazily: nothing reports a decision to the renderer, the next output is the news. */
  private resumeTyping(): void {
    this.waitingOnHuman = false;
    if (this.typingTimer === null && this.typing) this.keepTyping();
  }

  private stopTyping(): void {
    if (this.typingTimer === null) return;
    this.timers.clearTimeout(this.typingTimer);
    this.typingTimer = null;
    this.transport.typing(this.o.chat, false).catch(() => undefined);
  }
}

/** The status line on the last chunk, or on a chunk of its own when it would not fit. */
function withSuffix(chunks: string[], suffix: string): string[] {
  const last = chunks.at(-1);
  if (last === undefined) return [suffix];
  const joined = `${last}\n\n${suffix}`;
  if (Array.from(joined).length <= WHATSAPP_MAX_CHARS) return [...chunks.slice(0, -1), joined];
  return [...chunks, suffix];
}
