/**
 * DiscordRenderer: one live message edited in place (throttled, under the 2000 cap), sealed into
 * further messages by the shared StreamingSplitter (via SegmentBuffer), rotated at the driver's steer
 * boundary with a lazily materialized quote chip, and closed with [OPTIONS:] buttons, uploaded images
 * and a -# turn-status footer on the final segment. The first sealed chunk reuses the live message,
 * so there is never a preview plus a duplicate final. The live message carries the kit's LiveStatus
 * line as subtext (alone, before any text); an approval prompt seals the answer above it and the
 * continuation opens below; a turn that produced no answer ends with the kit's notice.
 *
 * Every string passes `discordSafe` at the sink (live frames and seals alike), every send goes
 * through one serial queue so edits land in the order they were decided, and a part that did not
 * land sets deliveryFailed. The phase-reaction ladder decorates the user's message.
 */

import { createHash } from "node:crypto";
import type { Clock } from "../messaging/base/clock.js";
import { realClock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import { TurnParts } from "../messaging/channel/delivery.js";
import { LiveStatus, ToolParagraphs } from "../messaging/channel/live-status.js";
import type { LadderTimings, PhaseEmojis, StallEmojis } from "../messaging/channel/phase-ladder.js";
import { PhaseReactionLadder, phaseForToolTitle } from "../messaging/channel/phase-ladder.js";
import {
  freshSessionNotice,
  noAnswerNotice,
  steerChip,
  turnStatusLine,
  typedReplyHint,
} from "../messaging/channel/render-kit.js";
import type { AuditSink } from "../messaging/security/audit.js";
import { clip } from "../messaging/text/clip.js";
import { applyOptionsCap, splitOptionsTrailer } from "../messaging/text/options.js";
import type { AgentStatus, PromptOption, ToolChange, TurnEnding } from "../messaging/turn/renderer.js";
import { Renderer } from "../messaging/turn/renderer.js";
import type { UploadFile } from "./client.js";
import { DISCORD_MAX_TEXT, discordSafe, fitPlatformCap, SEGMENT_LIMIT, subtext, withLine } from "./format.js";
import type { ActionRow, MessageBody } from "./payload.js";
import { SegmentBuffer } from "./segment.js";
import type { DiscordRest } from "./transport.js";
import { DISCORD_CAPABILITIES } from "./transport.js";
import type { SealFile, UploadPolicy } from "./uploads.js";
import { extractForSeal } from "./uploads.js";
import { approvalRows, optionRows } from "./widgets.js";

/** Unicode, one code point each: the reaction route carries the emoji as a path segment. */
export const DISCORD_PHASE_EMOJIS: PhaseEmojis = {
  queued: "👀",
  thinking: "🤔",
  coding: "💻",
  browsing: "🌐",
  tool: "🔧",
  done: "✅",
  error: "😱",
};
export const DISCORD_STALL_EMOJIS: StallEmojis = { soft: "⏳", hard: "🐢" };

/** Discord's approval buttons: Approve and Deny, whatever else the agent offers. */
const APPROVAL_BUTTON_VERDICTS: readonly Pick<PromptOption, "verdict">[] = [
  { verdict: "approve" },
  { verdict: "deny" },
];

/** Discord allows about five edits per five seconds per channel. */
const DEFAULT_THROTTLE_MS = 1200;
/** Discord's typing indicator lasts ~10 s; renewed inside that while the turn runs. */
const TYPING_EVERY_MS = 8000;
/** Subtext is grey and unscannable in bulk; the full reasoning stays with the agent. */
const THINKING_PREVIEW = 300;

export interface DiscordRendererOptions {
  rest: DiscordRest;
  channelId: string;
  /** The user's message the phase ladder decorates (absent: no ladder, e.g. an injected turn). */
  userMessageId?: string;
  /** Set per channel in discord.reactionsEnabled / discord.showThinking. */
  toggles: { reactionsEnabled: boolean; showThinking: boolean };
  audit: AuditSink;
  logger: Logger;
  clock?: Clock;
  throttleMs?: number;
  /** Absent: uploads off for this turn, and image paths stay visible as text. */
  uploads?: UploadPolicy;
  /** Read at turn END, so the chip reports the window as the user leaves it. */
  contextUsage?: () => number | undefined | Promise<number | undefined>;
  ladderTimings?: Partial<LadderTimings>;
  /** The turn's outbound parts: every message this renderer creates goes through them. */
  parts?: TurnParts;
}

interface Sealed {
  id: string;
  content: string;
  components?: ActionRow[];
}

export class DiscordRenderer extends Renderer {
  private readonly o: DiscordRendererOptions;
  private readonly clock: Clock;
  private readonly throttleMs: number;
  // The clock starts at construction: the cold start that spawns a session is time the user waited.
  private readonly startedAt: number;
  private readonly parts: TurnParts;
  private seg = new SegmentBuffer(SEGMENT_LIMIT);
  private chip = "";
  private liveId: string | null = null;
  private liveShown = "";
  /** The live message shows answer text (not only the status line): it cannot be reused. */
  private liveHasText = false;
  private readonly status = new LiveStatus("`!stop`");
  private readonly paragraphs = new ToolParagraphs();
  /** Answer text reached the channel in this turn (a prompt or a notice is not an answer). */
  private answered = false;
  private lastSealed: Sealed | null = null;
  private landed = false;
  private thinking = "";
  private thinkingPosted = false;
  private ladder: PhaseReactionLadder | null = null;
  private closed = false;
  private pendingEdit: unknown = null;
  private lastEditAt = Number.NEGATIVE_INFINITY;
  private typingTimer: unknown = null;
  private ops: Promise<void> = Promise.resolve();
  private readonly noted: string[] = [];
  private compactionPct: number | undefined;
  private stopReason = "";
  private error: string | undefined;
  /** requestId -> the approval message, so a press can be written into the prompt itself. */
  private readonly approvals = new Map<string, { id: string; content: string }>();

  constructor(options: DiscordRendererOptions) {
    super(DISCORD_CAPABILITIES);
    this.o = options;
    this.clock = options.clock ?? realClock;
    this.throttleMs = options.throttleMs ?? DEFAULT_THROTTLE_MS;
    this.startedAt = this.clock.now();
    this.parts = options.parts ?? TurnParts.unrecorded();
  }

  /** The dispatcher records the user's own words for the steer chip (not the backend's echo). */
  override noteSteer(text: string): void {
    this.noted.push(text);
  }

  override async onTurnStart(): Promise<void> {
    this.arm()?.setPhase("queued");
    this.typing();
  }

  async onTextChunk(text: string): Promise<void> {
    this.seg.append(this.paragraphs.next(this.seg.canonical, text));
    this.status.writing();
    this.progress("thinking");
    this.scheduleFlush();
  }

  async onThinking(text: string): Promise<void> {
    // Off, reasoning is never even accumulated; the ladder moves either way.
    if (this.o.toggles.showThinking) this.thinking += text;
    this.status.thinking();
    this.progress("thinking");
  }

  async onToolCall(toolCallId: string, title: string, toolKind: string, _toolPurpose: string): Promise<void> {
    this.progress(phaseForToolTitle(title, toolKind));
    this.paragraphs.toolCalled();
    this.status.tool(toolCallId, title);
    this.scheduleFlush();
  }

  async onToolUpdate(toolCallId: string, change: ToolChange): Promise<void> {
    if (change.title !== undefined || change.toolKind !== undefined)
      this.progress(phaseForToolTitle(change.title ?? "", change.toolKind));
    else this.arm()?.onProgress();
    this.status.toolChanged(toolCallId, change);
    this.scheduleFlush();
  }

  async onAgentStatus(status: AgentStatus): Promise<void> {
    if (status.type === "fresh_session") {
      const content = discordSafe(freshSessionNotice(status.cause, status.reason, status.replayed));
      // Above the answer it concerns: a live message showing only its status becomes the notice.
      await this.run(async () => {
        if ((await this.takeStatusOnlyLive({ content })) === null) await this.create({ content });
      });
      return;
    }
    // Waiting in line or a silent agent is not progress: the stall marks keep counting.
    this.status.agent(status);
    this.scheduleFlush();
  }

  async onPromptChoice(
    options: PromptOption[],
    requestId: string,
    context: { toolTitle: string; toolPurpose: string; nonce: string },
  ): Promise<boolean> {
    // A turn parked on a human must not earn a stall mark.
    this.ladder?.pause();
    // Shown only once the message landed: a step that failed or never ran leaves it false.
    let landed = false;
    await this.run(async () => {
      // What the agent said before asking is a complete thought: seal it above the prompt.
      await this.sealSegment(false);
      const rows = approvalRows(requestId, context.nonce);
      const purpose = context.toolPurpose ? `\n${context.toolPurpose}` : "";
      // The buttons are Approve and Deny whatever the agent offers; typed replies answer either way.
      const shown = rows ? APPROVAL_BUTTON_VERDICTS : options;
      const hint = `\n${subtext(typedReplyHint(shown, rows !== null))}`;
      const content = discordSafe(
        `🔐 **Permission needed:** ${context.toolTitle || "a tool"}${purpose}${hint}`,
      );
      const [text] = fitPlatformCap(content);
      const body = { content: text ?? "", ...(rows ? { components: rows } : {}) };
      // A live message with only its status line becomes the prompt; the continuation opens below.
      const id = (await this.takeStatusOnlyLive(body)) ?? (await this.create(body));
      if (id) this.approvals.set(requestId, { id, content: text ?? "" });
      else this.deliveryFailed = true;
      landed = Boolean(id);
    });
    return landed;
  }

  /** Resolve the prompt on screen: the buttons go and the outcome is written in. */
  override markApproval(requestId: string, outcome: string): Promise<void> {
    this.ladder?.resume();
    const prompt = this.approvals.get(requestId);
    if (!prompt) return Promise.resolve();
    this.approvals.delete(requestId);
    // The turn goes on below the prompt: its next frame opens a new message there.
    if (!this.stopReason && !this.quiet) {
      this.status.thinking();
      this.scheduleFlush();
    }
    return this.run(async () => {
      await this.o.rest.editMessage(this.o.channelId, prompt.id, {
        content: withLine(prompt.content, outcome),
        components: [],
      });
    });
  }

  async onCompaction(contextUsagePct: number | undefined, receipt: string): Promise<void> {
    if (contextUsagePct !== undefined) this.compactionPct = contextUsagePct;
    if (!receipt) return;
    await this.run(async () => {
      await this.create({ content: subtext(discordSafe(receipt)) });
    });
  }

  override async onSteerConsumed(summary: string, _steerId: string): Promise<void> {
    await this.run(() => this.sealSegment(false));
    this.chip = steerChip(this.noted.shift() ?? summary);
  }

  async onDone(stopReason: string, ending: TurnEnding = {}): Promise<void> {
    this.stopReason = stopReason;
    this.error = ending.error;
    if (ending.contextUsagePct !== undefined) this.compactionPct = ending.contextUsagePct;
    await this.run(() => this.sealSegment(true));
    // A failed turn marks the user's message even when it failed before the ladder was armed.
    (stopReason === "error" ? this.arm() : this.ladder)?.finalize(stopReason === "error");
  }

  override async close(reason?: unknown): Promise<void> {
    this.clock.clearTimeout(this.pendingEdit);
    this.clock.clearTimeout(this.typingTimer);
    this.pendingEdit = null;
    await this.ops;
    if (reason && !this.landed && !this.stopReason && !this.quiet) {
      // A turn that never reached its end (no DONE) must still say so, never leave the user waiting.
      await this.run(async () => {
        await this.create({ content: noAnswerNotice(true, "`!new`") });
      });
      this.arm()?.finalize(true);
    }
    this.closed = true;
    await this.ladder?.close();
  }

  // ── the live frame ─────────────────────────────────────────────────────────────────────────

  private scheduleFlush(): void {
    if (this.pendingEdit !== null || this.closed) return;
    const wait = Math.max(0, this.lastEditAt + this.throttleMs - this.clock.now());
    this.pendingEdit = this.clock.setTimeout(() => {
      this.pendingEdit = null;
      void this.run(() => this.flushLive());
    }, wait);
  }

  /** Seal what the splitter sealed, then edit the live message to the current frame. */
  private async flushLive(): Promise<void> {
    // A frame queued before the end must not open a message after it.
    if (this.stopReason || this.closed) return;
    this.lastEditAt = this.clock.now();
    for (const chunk of this.seg.advance()) await this.sealChunk(chunk, {});
    const preview = this.seg.livePreview();
    // A recognized table still growing: hold the frame rather than show half of it.
    if (preview === null) return;
    const status = subtext(discordSafe(this.status.line));
    let frame = status;
    if (preview.trim() !== "") {
      let text = discordSafe(this.chip + preview);
      if (Array.from(text).length > DISCORD_MAX_TEXT - 60) text = clip(text, DISCORD_MAX_TEXT - 60);
      frame = withLine(text, status);
      this.liveHasText = true;
    } else if (this.liveHasText) return; // the text went into a sealed message: nothing new to show
    if (frame === this.liveShown) return;
    if (this.liveId === null) {
      this.liveId = await this.create({ content: frame });
    } else {
      const res = await this.o.rest.editMessage(this.o.channelId, this.liveId, { content: frame });
      if (!res.ok) this.o.logger.debug("discord live edit failed", { status: res.status });
    }
    this.liveShown = frame;
  }

  // ── seals ──────────────────────────────────────────────────────────────────────────────────

  /**
   * The semantic seal (a steer boundary, an approval prompt, or the end of the turn): the trailer
   * becomes buttons, local images become attachments, and the rest is split and sent. Only here
   * does extraction run, once per segment.
   */
  private async sealSegment(final: boolean): Promise<void> {
    this.clock.clearTimeout(this.pendingEdit);
    this.pendingEdit = null;
    const { body, choices } = splitOptionsTrailer(this.seg.remainder, { hidePartial: false });
    const ups =
      this.o.uploads && this.capabilities.filesOutbound
        ? await extractForSeal(this.seg.fedText, body, this.o.uploads, this.o.audit)
        : { remainder: body, files: [], notes: [] };
    const chunks = this.seg.finish(ups.remainder);
    const last = chunks.pop() ?? "";
    for (const chunk of chunks) await this.sealChunk(chunk, {});
    const capped = applyOptionsCap(last, choices, this.capabilities);
    const hasContent = capped.body.trim() !== "" || capped.choices.length > 0 || ups.files.length > 0;
    // A turn that produced nothing says so (and why, when it failed): never a footer alone.
    const silent = final && !this.answered && !hasContent && ups.notes.length === 0;
    const footer = final && !this.quiet ? subtext(await this.footerLine(silent)) : "";
    if (silent && this.quiet) return;
    if (silent) {
      await this.sealChunk(noAnswerNotice(this.stopReason === "error", "`!new`", this.error), { footer });
      return;
    }
    if (!hasContent && ups.notes.length === 0) {
      if (final && footer) await this.placeFooter(footer);
      return;
    }
    await this.sealChunk(capped.body, {
      ...(capped.choices.length ? { components: optionRows(capped.choices) } : {}),
      files: ups.files,
      notes: ups.notes.map(subtext),
      footer,
    });
  }

  /** The footer rides the last segment; with no text after a prompt it becomes its own message. */
  private async placeFooter(footer: string): Promise<void> {
    await this.flushThinking();
    // A live message showing only its status line is where the turn ends.
    const live = await this.takeStatusOnlyLive({ content: footer });
    if (live !== null) {
      this.lastSealed = { id: live, content: footer };
      return;
    }
    const target = this.lastSealed;
    if (target) {
      const content = withLine(target.content, footer);
      if (content === target.content) return;
      const res = await this.o.rest.editMessage(this.o.channelId, target.id, {
        content,
        ...(target.components ? { components: target.components } : {}),
      });
      if (res.ok) target.content = content;
      return;
    }
    const id = await this.create({ content: footer });
    if (id) this.lastSealed = { id, content: footer };
  }

  /**
   * The single seal chokepoint: one sealed chunk becomes one message (reusing the live one), with
   * the display floor applied and the hard-cap fallback for anything still over 2000.
   */
  private async sealChunk(
    text: string,
    extra: {
      components?: ActionRow[];
      files?: SealFile[];
      notes?: string[];
      footer?: string;
    },
  ): Promise<void> {
    const chip = this.chip && text.trim() ? this.chip : "";
    if (chip) this.chip = "";
    const parts = fitPlatformCap(discordSafe(chip + text));
    for (const [i, part] of parts.entries()) {
      const isLast = i === parts.length - 1;
      const tail = isLast ? [...(extra.notes ?? []), extra.footer ?? ""] : [];
      let content = withLines(part, tail);
      const files = isLast ? (extra.files ?? []) : [];
      const body: MessageBody = {
        content,
        ...(isLast && extra.components ? { components: extra.components } : {}),
        ...(files.length
          ? { attachments: files.map((f, n) => ({ id: n, filename: f.name, description: f.description })) }
          : {}),
      };
      let id = await this.send(body, files);
      if (!id && files.length) {
        // Multipart failed all-or-nothing: the text still goes, with each image's markup restored
        // (display-safe) so the paths stay visible instead of vanishing with the upload.
        this.deliveryFailed = true;
        const restored = [...files.map((f) => f.markup), subtext("⚠️ the image upload failed"), ...tail];
        content = withLines(part, restored);
        id = await this.send({ ...body, attachments: [], content }, []);
      }
      if (!id) {
        this.deliveryFailed = true;
        continue;
      }
      if (part.trim()) this.answered = true;
      this.lastSealed = { id, content, ...(body.components ? { components: body.components } : {}) };
    }
  }

  /**
   * The live message when it shows only its status line (no answer text yet), rewritten as `body`
   * so that what follows opens below it; its id, or null when there is none to take.
   */
  private async takeStatusOnlyLive(body: MessageBody): Promise<string | null> {
    const live = this.liveId;
    if (live === null || this.liveHasText || !this.seg.isEmpty()) return null;
    this.liveId = null;
    this.liveShown = "";
    const res = await this.o.rest.editMessage(this.o.channelId, live, body);
    if (!res.ok) this.o.logger.debug("discord: could not reuse the live message", { status: res.status });
    return res.ok ? live : null;
  }

  /** Edit the live message into this content, or create a new one; the live message is then spent. */
  private async send(body: MessageBody, files: UploadFile[]): Promise<string> {
    const live = this.liveId;
    this.liveId = null;
    this.liveShown = "";
    this.liveHasText = false;
    if (live) {
      const res = await this.o.rest.editMessage(this.o.channelId, live, body, files);
      if (res.ok) this.landed = true;
      return res.ok ? live : "";
    }
    return this.create(body, files);
  }

  private async create(body: MessageBody, files: UploadFile[] = []): Promise<string> {
    await this.flushThinking();
    const id = await createPart(this.o.rest, this.o.channelId, this.parts, body, files);
    if (!id) return "";
    this.landed = true;
    return id;
  }

  /** show_thinking: the reasoning, once, as its own subtext message ahead of the answer. */
  private async flushThinking(): Promise<void> {
    if (this.thinkingPosted || !this.thinking.trim()) return;
    this.thinkingPosted = true;
    const content = subtext(`💭 ${clip(discordSafe(this.thinking), THINKING_PREVIEW)}`);
    const id = await createPart(this.o.rest, this.o.channelId, this.parts, { content });
    if (!id) this.o.logger.debug("discord thinking message failed");
  }

  /** `reasonShown`: the no-answer notice above already says why the turn failed. */
  private async footerLine(reasonShown: boolean): Promise<string> {
    let usage: number | undefined;
    try {
      usage = (await this.o.contextUsage?.()) ?? this.compactionPct;
    } catch (error) {
      // An unbound or failing source renders no chip rather than a reassuring green one.
      this.o.logger.debug("context usage unavailable", { error: String(error) });
    }
    return turnStatusLine(this.stopReason, {
      elapsedMs: this.clock.now() - this.startedAt,
      ...(usage === undefined ? {} : { contextUsagePct: usage }),
      ...(this.error ? { error: this.error } : {}),
      reasonShown,
    });
  }

  // ── decoration ─────────────────────────────────────────────────────────────────────────────

  /**
   * The ladder is armed lazily and only when there is something to decorate: reactions on (live
   * toggle), a transport that declares them, a user message, and a renderer not yet closed (a late
   * event must not arm timers that outlive the turn).
   */
  private arm(): PhaseReactionLadder | null {
    if (this.ladder || this.closed) return this.ladder;
    const messageId = this.o.userMessageId;
    if (!this.o.toggles.reactionsEnabled || !this.capabilities.reactions || !messageId) return null;
    const { rest, channelId } = this.o;
    const check = (res: { ok: boolean; status?: number }) => {
      if (!res.ok) throw new Error(`reaction refused (${res.status ?? 0})`);
    };
    this.ladder = new PhaseReactionLadder({
      sink: {
        set: async (emoji) => check(await rest.addReaction(channelId, messageId, emoji)),
        clear: async (emoji) => check(await rest.removeReaction(channelId, messageId, emoji)),
      },
      emojis: DISCORD_PHASE_EMOJIS,
      stall: DISCORD_STALL_EMOJIS,
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

  private typing(): void {
    if (this.closed || this.stopReason) return;
    void this.o.rest.typing(this.o.channelId).then((res) => {
      if (!res.ok) this.o.logger.debug("discord typing failed", { status: res.status });
    });
    this.typingTimer = this.clock.setTimeout(() => this.typing(), TYPING_EVERY_MS);
  }

  /** One serial queue for every platform call; a failure is recorded, never dropped silently. */
  private run(fn: () => Promise<void>): Promise<void> {
    const next = this.ops.then(fn).catch((error: unknown) => {
      this.deliveryFailed = true;
      this.o.logger.error("discord renderer step failed", { error: String(error) });
    });
    this.ops = next;
    return next;
  }
}

/** Append each line that still fits under the cap, in order. */
function withLines(content: string, lines: readonly string[]): string {
  let out = content;
  for (const line of lines) out = withLine(out, line);
  return out;
}

/**
 * Create a message as a turn's next part: a resumed turn edits what its first run posted there,
 * and the part's stable key travels as Discord's nonce (enforce_nonce), so even a part whose first
 * creation crashed unconfirmed is not created twice. The message id, or "" when it did not land.
 */
export async function createPart(
  rest: Pick<DiscordRest, "createMessage" | "editMessage">,
  channelId: string,
  parts: TurnParts,
  body: MessageBody,
  files: UploadFile[] = [],
): Promise<string> {
  const content = JSON.stringify([body.content, body.components ?? null, files.map((f) => f.name)]);
  const id = await parts.post(content, {
    create: async (key) => {
      const nonce = key === undefined ? {} : { nonce: discordNonce(key) };
      const res = await rest.createMessage(channelId, { ...body, ...nonce }, files);
      return res.ok ? res.data.id : null;
    },
    replace: async (earlier) =>
      (await rest.editMessage(channelId, earlier, { ...body, components: body.components ?? [] }, files)).ok,
  });
  return id ?? "";
}

/** A part key as a nonce: Discord takes at most 25 characters, so a digest of it. */
function discordNonce(key: string): string {
  return createHash("sha256").update(key).digest("hex").slice(0, 25);
}
