/**
 * SlackRenderer: a turn's answer as thread replies. Native streaming by default (the live message
 * is a chat.startStream stream, sealed by chat.stopStream), else one live message edited by
 * chat.update, throttled; either way the live message becomes the first chunk. The shared
 * StreamingSplitter (via SlackSegment) seals fence-balanced chunks, each its own thread reply.
 *
 * Around the answer: the kit's LiveStatus line as the thread's assistant status (and, when editing,
 * inside the live message), tool calls as task updates in the stream, the phase ladder as reactions
 * on the user's message, approval prompts as Block Kit buttons (the answer so far sealed above, the
 * continuation below), [OPTIONS:] as buttons, images uploaded, and the turn-status footer on the
 * last message. Every string passes the display-form floor of the form it is sent in (format.ts, and
 * FinalAppendGate for appended text); every platform call runs through one serial queue.
 */
import type { Clock } from "../messaging/base/clock.js";
import { realClock } from "../messaging/base/clock.js";
import { TurnParts } from "../messaging/channel/delivery.js";
import { LiveStatus, ToolParagraphs } from "../messaging/channel/live-status.js";
import type { LadderTimings, PhaseEmojis, StallEmojis } from "../messaging/channel/phase-ladder.js";
import { PhaseReactionLadder, phaseForToolTitle } from "../messaging/channel/phase-ladder.js";
import {
  approvalOutcomeLabel,
  contextUsageAtEnd,
  freshSessionNotice,
  noAnswerNotice,
  SerialQueue,
  steerChip,
  turnStatusLine,
  typedReplyHint,
} from "../messaging/channel/render-kit.js";
import type { OutboundFilePolicy } from "../messaging/channel/surface.js";
import { clip, oneLine } from "../messaging/text/clip.js";
import { applyOptionsCap, splitOptionsTrailer } from "../messaging/text/options.js";
import type { AgentStatus, PromptOption, ToolChange, TurnEnding } from "../messaging/turn/renderer.js";
import { Renderer } from "../messaging/turn/renderer.js";
import type { Block } from "./blocks.js";
import { approvalButtons, decidedBlocks, optionButtons, promptBlocks } from "./blocks.js";
import { codePointLength, fitCap, mrkdwnSafe, plainSafe, SEGMENT_LIMIT, SLACK_MAX_TEXT } from "./format.js";
import type { LiveTarget, TaskUpdate } from "./live.js";
import { EditMessage, postMarkdown, postReply, StreamMessage } from "./live.js";
import { SlackSegment } from "./segment.js";
import { SLACK_CAPABILITIES } from "./transport.js";
import type { SealFile } from "./uploads.js";
import { extractForSeal } from "./uploads.js";

/** Slack's reaction API takes shortcodes. */
export const SLACK_PHASE_EMOJIS: PhaseEmojis = {
  queued: "eyes",
  thinking: "thinking_face",
  coding: "computer",
  browsing: "globe_with_meridians",
  tool: "wrench",
  done: "white_check_mark",
  error: "x",
};
export const SLACK_STALL_EMOJIS: StallEmojis = { soft: "hourglass_flowing_sand", hard: "turtle" };

/** Slack's approval buttons: Approve and Deny (and the grant for the owner), whatever the agent offers. */
const APPROVAL_BUTTON_VERDICTS: readonly Pick<PromptOption, "verdict">[] = [
  { verdict: "approve" },
  { verdict: "deny" },
];

/** chat.update and appendStream are rate-limited per channel: about one frame a second. */
const DEFAULT_THROTTLE_MS = 1000;
/** The reasoning preview: the full reasoning stays with the agent. */
const THINKING_PREVIEW = 300;

export interface SlackToggles {
  reactionsEnabled: boolean;
  showThinking: boolean;
  /** Native streaming; false (or a refusal by Slack) edits one message instead. */
  streaming: boolean;
}

export interface SlackRendererOptions extends LiveTarget {
  /** The user's message the phase ladder decorates (absent: no ladder). */
  userMessageTs?: string;
  /** Read when the turn starts (the settings can change between turns). */
  toggles: SlackToggles;
  clock?: Clock;
  /** 0: every event is rendered before the next one (tests, goldens); else a frame per interval. */
  throttleMs?: number;
  /** Absent: uploads are off for this turn (a shared channel thread), images stay as text. */
  uploads?: OutboundFilePolicy;
  /** "Approve + auto-approve" beside Approve and Deny (the owner, in a DM). */
  grantButton?: boolean;
  /** Read at turn END, so the footer reports the window as the user leaves it. */
  contextUsage?: () => number | undefined | Promise<number | undefined>;
  ladderTimings?: Partial<LadderTimings>;
  /** Slack refused streaming: later renderers edit instead. */
  onStreamingUnavailable?: () => void;
}

export class SlackRenderer extends Renderer {
  private readonly o: SlackRendererOptions;
  private readonly clock: Clock;
  private readonly throttleMs: number;
  private readonly startedAt: number;
  private readonly parts: TurnParts;
  private readonly queue: SerialQueue;
  private readonly target: LiveTarget;
  private streaming: boolean;
  private seg = new SlackSegment(SEGMENT_LIMIT);
  private chip = "";
  private stream: StreamMessage | null = null;
  private edit: EditMessage | null = null;
  private readonly status = new LiveStatus("`!stop`");
  private statusShown = "";
  private readonly paragraphs = new ToolParagraphs();
  private readonly tasks = new Map<string, TaskUpdate>();
  private readonly taskQueue: TaskUpdate[] = [];
  private answered = false;
  private landed = false;
  private thinking = "";
  private thinkingPosted = false;
  private ladder: PhaseReactionLadder | null = null;
  private closed = false;
  private pending: unknown = null;
  private lastFrameAt = Number.NEGATIVE_INFINITY;
  private readonly noted: string[] = [];
  private compactionPct: number | undefined;
  private stopReason = "";
  private error: string | undefined;
  /** requestId -> the prompt message, so a press can be written into the prompt itself. */
  private readonly approvals = new Map<string, { ts: string; text: string }>();

  constructor(options: SlackRendererOptions) {
    super(SLACK_CAPABILITIES);
    this.o = options;
    this.clock = options.clock ?? realClock;
    this.throttleMs = options.throttleMs ?? DEFAULT_THROTTLE_MS;
    this.startedAt = this.clock.now();
    this.parts = options.parts ?? TurnParts.unrecorded();
    this.target = { ...options, parts: this.parts };
    // A resumed turn edits what its first run posted: an earlier stream cannot be continued.
    this.streaming = options.toggles.streaming && !this.parts.resumed;
    this.queue = new SerialQueue((error) => {
      this.deliveryFailed = true;
      this.o.logger.error("slack renderer step failed", { error: String(error) });
    });
  }

  override noteSteer(text: string): void {
    this.noted.push(text);
  }

  override async onTurnStart(): Promise<void> {
    this.arm()?.setPhase("queued");
    await this.frame();
  }

  async onTextChunk(text: string): Promise<void> {
    this.seg.append(this.paragraphs.next(this.seg.canonical, text));
    this.status.writing();
    this.progress("thinking");
    await this.frame();
  }

  async onThinking(text: string): Promise<void> {
    if (this.o.toggles.showThinking) this.thinking += text;
    this.status.thinking();
    this.progress("thinking");
    await this.frame();
  }

  async onToolCall(toolCallId: string, title: string, toolKind: string, _purpose: string): Promise<void> {
    this.progress(phaseForToolTitle(title, toolKind));
    this.paragraphs.toolCalled();
    this.status.tool(toolCallId, title);
    // Each call completes the one before it (the uniform tool-call semantics).
    for (const t of this.tasks.values())
      if (t.status === "in_progress") this.task({ ...t, status: "complete" });
    this.task({ id: toolCallId, title: oneLine(plainSafe(title), 200) || "Working", status: "in_progress" });
    await this.frame();
  }

  async onToolUpdate(toolCallId: string, change: ToolChange): Promise<void> {
    if (change.title !== undefined || change.toolKind !== undefined)
      this.progress(phaseForToolTitle(change.title ?? "", change.toolKind));
    else this.arm()?.onProgress();
    this.status.toolChanged(toolCallId, change);
    const known = this.tasks.get(toolCallId);
    if (known) {
      const status =
        change.status === "completed" ? "complete" : change.status === "failed" ? "error" : known.status;
      const title = change.title ? oneLine(plainSafe(change.title), 200) || known.title : known.title;
      this.task({ ...known, title, status });
    }
    await this.frame();
  }

  async onAgentStatus(status: AgentStatus): Promise<void> {
    if (status.type === "fresh_session") {
      const notice = freshSessionNotice(status.cause, status.reason, status.replayed);
      await this.queue.run(async () => {
        if (!(await this.takeStatusOnlyLive(mrkdwnSafe(notice)))) await this.post(notice);
      });
      return;
    }
    // Waiting in line or a silent agent is not progress: the stall marks keep counting.
    this.status.agent(status);
    await this.frame();
  }

  async onPromptChoice(
    options: PromptOption[],
    requestId: string,
    context: { toolTitle: string; toolPurpose: string; nonce: string },
  ): Promise<boolean> {
    // A turn parked on a human must not earn a stall mark.
    this.ladder?.pause();
    // Shown only once the message landed: a step that failed or never ran leaves it false.
    let shown = false;
    await this.queue.run(async () => {
      // What the agent said before asking is a complete thought: seal it above the prompt.
      await this.sealSegment(false);
      const buttons = approvalButtons(requestId, context.nonce, this.o.grantButton === true);
      const purpose = context.toolPurpose ? `\n${context.toolPurpose}` : "";
      const text = mrkdwnSafe(`🔐 **Permission needed:** ${context.toolTitle || "a tool"}${purpose}`);
      const hint = typedReplyHint(buttons ? APPROVAL_BUTTON_VERDICTS : options, buttons !== null);
      const blocks = promptBlocks(text, buttons, hint);
      const fallback = fitCap(`${text}\n${hint}`)[0] ?? text;
      const ts =
        (await this.takeStatusOnlyLive(fallback, blocks)) || (await postReply(this.target, fallback, blocks));
      if (ts) {
        this.approvals.set(requestId, { ts, text });
        this.landed = true;
        shown = true;
      } else this.deliveryFailed = true;
      await this.showStatus("");
    });
    return shown;
  }

  /** Resolve the prompt on screen: the buttons go and the outcome is written in. */
  override markApproval(requestId: string, outcome: string): Promise<void> {
    this.ladder?.resume();
    const marked = this.writeOutcome(requestId, outcome);
    if (!marked) return Promise.resolve();
    // The turn goes on below the prompt: the status says so until its next frame.
    if (this.stopReason) return marked;
    this.status.thinking();
    return marked.then(() => this.frame());
  }

  /** The prompt's buttons go and `outcome` is written in; null when no such prompt is open. */
  private writeOutcome(requestId: string, outcome: string): Promise<void> | null {
    const prompt = this.approvals.get(requestId);
    if (!prompt) return null;
    this.approvals.delete(requestId);
    return this.queue.run(async () => {
      const res = await this.o.api.update({
        channel: this.o.channel,
        ts: prompt.ts,
        text: fitCap(`${prompt.text}\n${outcome}`)[0] ?? prompt.text,
        blocks: decidedBlocks(prompt.text, outcome),
      });
      if (!res.ok) this.o.logger.debug("slack prompt update failed", { error: res.error });
    });
  }

  async onCompaction(contextUsagePct: number | undefined, receipt: string): Promise<void> {
    if (contextUsagePct !== undefined) this.compactionPct = contextUsagePct;
    if (!receipt) return;
    await this.queue.run(() => this.post(`_${receipt}_`).then(() => {}));
  }

  override async onSteerConsumed(summary: string, _steerId: string): Promise<void> {
    await this.queue.run(() => this.sealSegment(false));
    this.chip = steerChip(this.noted.shift() ?? summary);
  }

  async onDone(stopReason: string, ending: TurnEnding = {}): Promise<void> {
    this.stopReason = stopReason;
    this.error = ending.error;
    if (ending.contextUsagePct !== undefined) this.compactionPct = ending.contextUsagePct;
    await this.queue.run(async () => {
      await this.sealSegment(true);
      await this.showStatus("");
    });
    // A failed turn marks the user's message even when it failed before the ladder was armed.
    (stopReason === "error" ? this.arm() : this.ladder)?.finalize(stopReason === "error");
  }

  override async close(reason?: unknown): Promise<void> {
    this.clock.clearTimeout(this.pending);
    this.pending = null;
    // A prompt still showing buttons when the turn ends (a /stop, a failure) was never decided:
    // a decided prompt must never look live, so it says so and its buttons go.
    for (const requestId of [...this.approvals.keys()])
      void this.writeOutcome(requestId, approvalOutcomeLabel("abandoned"));
    await this.queue.idle();
    if (reason && !this.landed && !this.stopReason) {
      // A turn that never reached its end (no DONE) must still say so.
      await this.queue.run(async () => {
        await this.post(noAnswerNotice(true, "`!new`"));
        await this.showStatus("");
      });
      this.arm()?.finalize(true);
    }
    // A resumed turn that finished: what its first run posted beyond this run's messages (a longer
    // first try, a prompt this run never asked) belongs to an answer this one replaced, so it goes.
    if (this.stopReason)
      for (const ts of this.parts.leftovers())
        await this.queue.run(async () => {
          const res = await this.o.api.deleteMessage(this.o.channel, ts);
          if (!res.ok) this.o.logger.debug("slack leftover delete failed", { error: res.error });
        });
    this.closed = true;
    await this.ladder?.close();
  }

  // ── the live frame ─────────────────────────────────────────────────────────────────────────

  private task(update: TaskUpdate): void {
    this.tasks.set(update.id, update);
    this.taskQueue.push(update);
  }

  /** Render now (throttle 0: before the next event is taken) or once the interval has passed. */
  private async frame(): Promise<void> {
    if (this.closed || this.stopReason) return;
    if (this.throttleMs === 0) return this.queue.run(() => this.flush());
    if (this.pending !== null) return;
    const wait = Math.max(0, this.lastFrameAt + this.throttleMs - this.clock.now());
    this.pending = this.clock.setTimeout(() => {
      this.pending = null;
      void this.queue.run(() => this.flush());
    }, wait);
  }

  /** Seal what the splitter sealed, then bring the live message and the status up to date. */
  private async flush(): Promise<void> {
    // A frame queued before the end must not open a message after it.
    if (this.stopReason || this.closed) return;
    this.lastFrameAt = this.clock.now();
    for (const chunk of this.seg.advance()) await this.sealChunk(chunk, {});
    if (this.streaming) await this.flushStream();
    else await this.flushEdit();
    await this.showStatus(this.status.line);
  }

  private async flushStream(): Promise<void> {
    const tasks = this.taskQueue.splice(0);
    const committed = this.seg.committed;
    if (!committed && tasks.length === 0) return;
    await this.flushThinking();
    const live = this.liveStream();
    const ok = await live.progress(committed, tasks);
    if (ok || !live.unavailable) return;
    this.streamingRefused();
    await this.flushEdit();
  }

  private async flushEdit(): Promise<void> {
    this.taskQueue.length = 0;
    const preview = this.seg.livePreview();
    const status = `_${this.status.line}_`;
    let frame = status;
    const live = this.edit;
    if (preview.trim() !== "") {
      const body = clip(mrkdwnSafe(this.chip + preview), SLACK_MAX_TEXT - 300);
      frame = `${body}\n${mrkdwnSafe(status)}`;
    } else if (live?.hasText) return; // the text went into a sealed message: nothing new to show
    await this.flushThinking();
    const message = live ?? new EditMessage(this.target);
    this.edit = message;
    if (await message.show(frame)) {
      message.hasText = preview.trim() !== "";
      this.landed = true;
    }
  }

  private liveStream(): StreamMessage {
    if (!this.stream) {
      this.stream = new StreamMessage(this.target, this.chip);
      this.chip = "";
    }
    return this.stream;
  }

  /** Slack refused streaming: this turn (and the channel's later ones) edit a message instead. */
  private streamingRefused(): void {
    this.o.logger.warn("slack: streaming refused; editing messages instead");
    if (this.stream && !this.stream.started) this.stream = null;
    this.streaming = false;
    this.o.onStreamingUnavailable?.();
  }

  private async showStatus(line: string): Promise<void> {
    if (line === this.statusShown) return;
    this.statusShown = line;
    const res = await this.o.api.setStatus(this.o.channel, this.o.threadTs, line ? plainSafe(line) : "");
    if (!res.ok) this.o.logger.debug("slack status failed", { error: res.error });
  }

  // ── seals ──────────────────────────────────────────────────────────────────────────────────

  /**
   * The semantic seal (a steer boundary, an approval prompt, or the end of the turn): the trailer
   * becomes buttons, local images become uploads, and the rest is split and sent.
   */
  private async sealSegment(final: boolean): Promise<void> {
    this.clock.clearTimeout(this.pending);
    this.pending = null;
    const { body, choices } = splitOptionsTrailer(this.seg.remainder, { hidePartial: false });
    const ups = await extractForSeal(this.seg.fedText, body, this.o.uploads, this.o.audit);
    const chunks = this.seg.finish(ups.remainder);
    const last = chunks.pop() ?? "";
    for (const chunk of chunks) await this.sealChunk(chunk, {});
    const capped = applyOptionsCap(last, choices, this.capabilities);
    const hasContent = capped.body.trim() !== "" || capped.choices.length > 0 || ups.files.length > 0;
    // A turn that produced nothing says so (and why, when it failed): never a footer alone.
    const silent = final && !this.answered && !hasContent && ups.notes.length === 0;
    const footer = final ? await this.footerLine(silent) : "";
    const text = silent ? noAnswerNotice(this.stopReason === "error", "`!new`", this.error) : capped.body;
    if (text.trim() || footer || ups.notes.length || this.stream?.started || this.taskQueue.length)
      await this.sealChunk(text, { notes: ups.notes, footer, choices: capped.choices });
    else if (capped.choices.length) await this.postChoices(capped.choices);
    await this.upload(ups.files);
  }

  /**
   * The single seal chokepoint: one sealed chunk becomes one message (the live one, when there is
   * one), with notes and the footer under it when they fit, and the choices as buttons.
   */
  private async sealChunk(
    chunk: string,
    extra: { notes?: readonly string[]; footer?: string; choices?: readonly string[] },
  ): Promise<void> {
    // Trailing whitespace is never content in a sealed message (the last chunk keeps its newline).
    const text = chunk.replace(/\s+$/u, "");
    const tail = [...(extra.notes ?? []), extra.footer ?? ""].filter(Boolean).join("\n");
    const choices = extra.choices ?? [];
    await this.flushThinking();
    let ts: string;
    let shownTail = tail;
    if (this.streaming) {
      const live = this.liveStream();
      const fits = codePointLength(`${text}\n\n${tail}`) <= SLACK_MAX_TEXT;
      shownTail = fits ? tail : "";
      const blocks: Block[] = choices.length ? [optionButtons(choices)] : [];
      ts = await live.seal(
        text,
        shownTail ? `${text.trim() ? "\n\n" : ""}${shownTail}` : "",
        blocks,
        this.taskQueue.splice(0),
      );
      if (!ts && live.unavailable) {
        this.streamingRefused();
        return this.sealChunk(chunk, extra);
      }
      this.stream = null;
    } else {
      const chip = this.chip && text.trim() ? this.chip : "";
      if (chip) this.chip = "";
      const body = mrkdwnSafe(chip + text);
      const lines = tail ? mrkdwnSafe(tail) : "";
      const joined = lines ? (body.trim() ? `${body}\n${lines}` : lines) : body;
      shownTail = codePointLength(joined) <= SLACK_MAX_TEXT ? tail : "";
      const parts = fitCap(shownTail ? joined : body);
      const live = this.edit;
      this.edit = null;
      ts = "";
      for (const [i, part] of parts.entries()) {
        const message = i === 0 && live ? live : new EditMessage(this.target);
        ts = (await message.show(part)) || "";
        if (!ts) break;
      }
      if (ts && choices.length) await this.postChoices(choices);
    }
    if (!ts) {
      this.deliveryFailed = true;
      return;
    }
    this.landed = true;
    if (text.trim()) this.answered = true;
    // A tail that did not fit goes on its own: a refusal note is never dropped for space.
    if (tail && !shownTail && !(await postMarkdown(this.target, tail))) this.deliveryFailed = true;
  }

  /** Choices under an edited message: a message of buttons right below it. */
  private async postChoices(choices: readonly string[]): Promise<void> {
    if (!(await postReply(this.target, "Choose an option:", [optionButtons(choices)])))
      this.deliveryFailed = true;
  }

  /** The live message when it shows only its status line, rewritten as `text`: its ts, or "". */
  private async takeStatusOnlyLive(text: string, blocks?: Block[]): Promise<string> {
    const live = this.edit;
    if (!live || live.hasText || !this.seg.isEmpty()) return "";
    this.edit = null;
    return live.show(text, blocks);
  }

  private async post(markdown: string): Promise<boolean> {
    await this.flushThinking();
    const ok = await postMarkdown(this.target, markdown);
    if (ok) this.landed = true;
    else this.deliveryFailed = true;
    return ok;
  }

  private async upload(files: readonly SealFile[]): Promise<void> {
    for (const f of files) {
      const res = await this.o.api.uploadFile({
        channel: this.o.channel,
        threadTs: this.o.threadTs,
        filename: f.filename,
        title: f.title,
        bytes: f.bytes,
      });
      if (res.ok) continue;
      // The text still says what the image was: its markup (display-safe) and why it is missing.
      this.deliveryFailed = true;
      await this.post(`${f.markup}\n⚠️ the image upload failed`);
    }
  }

  /** slack.showThinking: the reasoning, once, redacted on the joined text, ahead of the answer. */
  private async flushThinking(): Promise<void> {
    if (this.thinkingPosted || !this.thinking.trim()) return;
    this.thinkingPosted = true;
    const text = `> 💭 ${oneLine(clip(plainSafe(this.thinking), THINKING_PREVIEW), THINKING_PREVIEW)}`;
    if (!(await postMarkdown(this.target, text))) this.o.logger.debug("slack thinking message failed");
  }

  /** `reasonShown`: the no-answer notice above already says why the turn failed. */
  private async footerLine(reasonShown: boolean): Promise<string> {
    const usage = await contextUsageAtEnd(this.o.contextUsage, this.compactionPct, this.o.logger);
    return turnStatusLine(this.stopReason, {
      elapsedMs: this.clock.now() - this.startedAt,
      ...(usage === undefined ? {} : { contextUsagePct: usage }),
      ...(this.error ? { error: this.error } : {}),
      reasonShown,
    });
  }

  // ── decoration ─────────────────────────────────────────────────────────────────────────────

  /**
   * The ladder is armed lazily and only when there is something to decorate: reactions on, a user
   * message, and a renderer not yet closed (a late event must not arm timers that outlive the turn).
   */
  private arm(): PhaseReactionLadder | null {
    if (this.ladder || this.closed) return this.ladder;
    const ts = this.o.userMessageTs;
    if (!this.o.toggles.reactionsEnabled || !ts) return null;
    const { api, channel } = this.o;
    const check = (res: { ok: boolean }) => {
      if (!res.ok) throw new Error("reaction refused");
    };
    this.ladder = new PhaseReactionLadder({
      sink: {
        set: async (name) => check(await api.addReaction(channel, ts, name)),
        clear: async (name) => check(await api.removeReaction(channel, ts, name)),
      },
      emojis: SLACK_PHASE_EMOJIS,
      stall: SLACK_STALL_EMOJIS,
      clock: this.clock,
      logger: this.o.logger,
      ...(this.o.ladderTimings ? { timings: this.o.ladderTimings } : {}),
    });
    return this.ladder;
  }

  private progress(phase: string): void {
    const ladder = this.arm();
    ladder?.onProgress();
    ladder?.setPhase(phase);
  }
}
