/**
 * WeComRenderer: the answer streams into a bubble by REPLACEMENT (each frame carries the bubble's
 * whole text), its reasoning in `<think></think>` (WeCom's own folded block, redacted on the JOINED
 * reasoning: the driver redacts each thinking chunk alone, so a key split across two would otherwise
 * be joined back here), the kit's live status as its last line. Frames go out one at a time and each
 * waits for WeCom's verdict (client.ts), so every bubble knows which of its frames were accepted.
 *
 * Rolling bubbles: a bubble dies at WeCom's 10-minute stream lifetime (or is refused for good), and
 * the answer must not die with it. Before each frame the bubble is checked: aged, it is sealed as it
 * stands and a new stream id continues with exactly what the old one lacks (one frame earlier when
 * the latest verdict was a refusal: that frame may be the one missing); refused for good (846608),
 * the continuation resumes one frame early (a visible repeat, never a silent hole). Offsets are
 * rebased onto the new bubble. A req_id that no longer routes (846605) leaves no stream at all.
 *
 * The end: the answer past one bubble (4,608 code points here, so never past 20,480 bytes) keeps its
 * head sealed in the bubble the user watched and sends the rest as confirmed pushes, in order, only
 * once the sealing frame's verdict is in: a refused head is pushed once (or posted to the
 * response_url), and when the head reached nobody the tail is withheld (a tail without its head is
 * a fragment nobody can place). A push nobody acknowledged is sent again by the client (after a
 * reconnect), so only a part WeCom refused (or never confirmed, after the re-sends) is missing: it
 * is said in the chat where it belongs ("part 2 of 3 did not arrive: …"), and the rest follows.
 * Pushes wait for WeCom's budget rather than be refused; when that wait is long, the head says so.
 * This all happens at the end of the turn, before its outcome is recorded, so a head that never
 * landed fails the turn.
 *
 * Other seals (an approval prompt, a steer) end the bubble the same way and the answer continues in
 * a new one below. The prompt itself is a push (its typed `1`/`2` floor; no widget exists), and its
 * decision is pushed too (a push cannot be edited, so "decided" is a line of its own). Transforms
 * (tables, display redaction) run on each slice about to be sent; progress is counted on the raw one.
 */
import type { Clock } from "../messaging/base/clock.js";
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
import type { AuditSink } from "../messaging/security/audit.js";
import { oneLine } from "../messaging/text/clip.js";
import { closeOpenFence } from "../messaging/text/fences.js";
import { applyOptionsCap, displaySafeFor, splitOptionsTrailer } from "../messaging/text/options.js";
import { splitMarkdownSafe } from "../messaging/text/split.js";
import { renderTables } from "../messaging/text/tables/index.js";
import type { AgentStatus, PromptOption, ToolChange, TurnEnding } from "../messaging/turn/renderer.js";
import { Renderer } from "../messaging/turn/renderer.js";
import type { FrameVerdict } from "./client.js";
import { composeFrame, headExtent, resumePoint } from "./frame.js";
import {
  WECOM_ANSWER_CHARS,
  WECOM_LONG_BUDGET_WAIT_MS,
  WECOM_PUSHES_PER_HOUR,
  WECOM_PUSHES_PER_MINUTE,
  WECOM_ROLL_AGE_MS,
} from "./limits.js";
import type { Outbox, WeComAddress, WeComWire } from "./outbox.js";
import { WECOM_CAPABILITIES } from "./transport.js";

export interface WeComRendererOptions {
  wire: WeComWire;
  /** The ladder for everything that is not the bubble (prompts, notices, the answer's tail). */
  outbox: Outbox;
  address: WeComAddress;
  clock: Clock;
  logger?: Logger;
  audit?: AuditSink;
  parts?: TurnParts;
  /** Minimum gap between two live frames. */
  throttleMs?: number;
  /** The per-slice transform before a slice is sent (tables, then display redaction). */
  present?: (slice: string) => string;
}

interface Bubble {
  streamId: string;
  /** Raw offset into the answer where this bubble begins, and the fence it reopens there. */
  start: number;
  reopen: string;
  lead: string;
  /**
   * Raw answer offset the bubble SHOWS: covered by its last frame WeCom accepted. Every verdict is
   * the frame's own (client.ts), so a refused frame (or one never answered) moves nothing: a new
   * bubble resumes exactly after what the old one shows, which is one frame early whenever the
   * latest frame was refused (a repeat at worst, never a hole).
   */
  shown: number;
  openedAt: number;
  frames: number;
  /** Refused for good (846608): this stream id can never be written again. */
  dead: boolean;
  /** The last ACCEPTED frame without its status line: what the bubble is sealed with when it ages out. */
  lastBody: string;
  lastContent: string;
  /** Answer text (not only a status line) was shown in it. */
  hasBody: boolean;
  /** The reasoning this bubble shows begins here (earlier reasoning went with earlier bubbles). */
  thinkFrom: number;
}

const HEAD = WECOM_ANSWER_CHARS;
const PAUSED = "⏸️ Waiting for your permission (below)…";
/** What an aged bubble that showed no answer yet is sealed with before the work moves on below. */
const CONTINUED = "⏬ (continued below)";

/** What the user reads where a part of the answer should have been. */
export function missingPartNotice(part: number, of: number, verdict: FrameVerdict): string {
  const why =
    verdict.kind === "refused"
      ? `WeCom refused it (error ${verdict.errcode})`
      : verdict.kind === "unacked"
        ? "WeCom never confirmed it, even after it was sent again"
        : "the connection to WeCom was down";
  return `⚠️ Part ${part} of ${of} did not arrive: ${why}.`;
}

/** Under the head when the rest must wait for WeCom's budget: the answer is not over, it is paced. */
export function budgetWaitNotice(parts: number, waitMs: number): string {
  const minutes = Math.max(1, Math.ceil(waitMs / 60_000));
  return `⏳ The rest of this answer (${parts} more message${parts === 1 ? "" : "s"}) arrives over about ${minutes} min: WeCom lets a bot send ${WECOM_PUSHES_PER_MINUTE} messages a minute and ${WECOM_PUSHES_PER_HOUR} an hour.`;
}

/** Tables stay canonical (table mode off), then the display-form redaction of the rendered form. */
export function presentSlice(slice: string): string {
  const caps = WECOM_CAPABILITIES;
  return displaySafeFor(
    renderTables(slice, { policy: caps.tableMode, nativeTables: caps.nativeTables }),
    caps,
  );
}

export class WeComRenderer extends Renderer {
  private readonly log: Logger;
  private readonly parts: TurnParts;
  private readonly present: (slice: string) => string;
  private readonly status = new LiveStatus("/stop");
  private readonly paragraphs = new ToolParagraphs();
  private readonly queue: SerialQueue;
  private readonly throttle: EditThrottle;
  private readonly startedAt: number;
  /** The answer as streamed (raw, redacted by the driver): every offset points into it. */
  private answer = "";
  private thinking = "";
  /** The reasoning after the last sealed bubble: what the next bubble shows in its think block. */
  private thinkStart = 0;
  private bubble: Bubble | null = null;
  /** Where the next bubble begins, and its lead line (a steer's quote). */
  private nextStart = 0;
  private nextLead = "";
  /** The req_id routes no more (846605), or there was none: no bubble can be streamed. */
  private streamless: boolean;
  private answered = false;
  private finished = false;
  private ended = false;
  private contextUsagePct: number | undefined;
  private rollTimer: unknown = null;
  private readonly noted: string[] = [];
  private readonly prompts = new Map<string, string>();

  constructor(private readonly o: WeComRendererOptions) {
    super(WECOM_CAPABILITIES);
    this.log = o.logger ?? silentLogger;
    this.parts = o.parts ?? TurnParts.unrecorded();
    this.present = o.present ?? presentSlice;
    this.streamless = !o.address.reqId;
    this.startedAt = o.clock.now();
    this.queue = new SerialQueue((error) => {
      this.deliveryFailed = true;
      this.log.error("wecom: render step failed", { error: String(error) });
    });
    this.throttle = new EditThrottle(
      o.clock,
      () => o.clock.now(),
      o.throttleMs ?? 1000,
      () => {
        void this.queue.run(() => this.flushLive());
      },
    );
  }

  override noteSteer(text: string): void {
    this.noted.push(text);
  }

  override async onTurnStart(): Promise<void> {
    // The bubble opens at once: the user sees the bot at work before the first word.
    this.throttle.schedule();
  }

  async onTextChunk(text: string): Promise<void> {
    this.status.writing();
    this.answer += this.paragraphs.next(this.answer.slice(this.nextStart), text);
    this.throttle.schedule();
  }

  async onThinking(text: string): Promise<void> {
    this.status.thinking();
    this.thinking += text;
    this.throttle.schedule();
  }

  async onToolCall(toolCallId: string, title: string): Promise<void> {
    this.paragraphs.toolCalled();
    this.status.tool(toolCallId, title);
    this.throttle.schedule();
  }

  async onToolUpdate(toolCallId: string, change: ToolChange): Promise<void> {
    this.status.toolChanged(toolCallId, change);
    this.throttle.schedule();
  }

  async onAgentStatus(status: AgentStatus): Promise<void> {
    if (status.type !== "fresh_session") {
      this.status.agent(status);
      this.throttle.schedule();
      return;
    }
    const notice = freshSessionNotice(status.cause, status.reason, status.replayed);
    await this.queue.run(async () => {
      // Above the answer it concerns: a bubble that shows no answer yet becomes the notice.
      const b = this.bubble;
      if (b && !b.hasBody && !b.dead && !this.streamless) {
        await this.frame(b, composeFrame({ body: this.present(notice) }), true);
        this.bubble = null;
        return;
      }
      await this.o.outbox.push(this.present(notice));
    });
  }

  async onPromptChoice(
    options: PromptOption[],
    requestId: string,
    context: { toolTitle: string; toolPurpose: string; nonce: string },
  ): Promise<boolean> {
    // Shown once one route delivered it: a step that failed or never ran leaves it false.
    let landed = false;
    this.throttle.cancel();
    await this.queue.run(async () => {
      // The answer so far stays above the prompt; what the decision releases continues below it.
      await this.seal(undefined, PAUSED);
      const title = oneLine(context.toolTitle || "a tool", 200);
      const purpose = context.toolPurpose ? `\n${oneLine(context.toolPurpose, 400)}` : "";
      // No widget: the typed floor. "Always" needs a deliberate press on a channel that has one.
      const shown = options.filter((o) => o.verdict !== "approve_always");
      const text = `🔐 **Permission needed:** ${title}${purpose}\n\n_${typedReplyHint(shown, false)}_`;
      const prompt = this.present(text);
      landed =
        (await this.o.outbox.push(prompt)) ||
        (await this.o.outbox.sealedBubble(prompt)) ||
        (await this.o.outbox.lastResort(prompt));
      this.prompts.set(requestId, title);
    });
    return landed;
  }

  override async markApproval(requestId: string, outcome: string): Promise<void> {
    await this.queue.run(async () => {
      const title = this.prompts.get(requestId);
      if (title === undefined) return;
      this.prompts.delete(requestId);
      // A push cannot be edited: the decision is a line of its own, naming the prompt it settles.
      await this.o.outbox.push(this.present(`🔐 ${title}: ${outcome}`));
    });
    if (!this.finished) {
      this.status.thinking();
      this.throttle.schedule();
    }
  }

  async onCompaction(contextUsagePct: number | undefined, receipt: string): Promise<void> {
    if (contextUsagePct !== undefined) this.contextUsagePct = contextUsagePct;
    if (receipt) await this.queue.run(async () => void (await this.o.outbox.push(this.present(receipt))));
  }

  override async onSteerConsumed(summary: string): Promise<void> {
    this.throttle.cancel();
    const chip = steerChip(this.noted.shift() ?? summary);
    await this.queue.run(async () => {
      // Nothing shown since the last seal: the open bubble simply continues, quoting the steer.
      if (!(await this.seal()) && this.bubble) this.bubble.lead = chip;
      else this.nextLead = chip;
    });
    this.throttle.schedule();
  }

  async onDone(stopReason: string, ending: TurnEnding = {}): Promise<void> {
    if (ending.contextUsagePct !== undefined) this.contextUsagePct = ending.contextUsagePct;
    this.finished = true;
    this.throttle.cancel();
    this.clearRollTimer();
    await this.queue.run(() => this.end(stopReason, ending.error));
  }

  override async close(reason?: unknown): Promise<void> {
    this.finished = true;
    this.throttle.cancel();
    this.clearRollTimer();
    for (const requestId of [...this.prompts.keys()])
      await this.markApproval(requestId, approvalOutcomeLabel("abandoned"));
    // A turn that never reached its end (or never started) still ends on screen.
    await this.queue.run(() => this.end(reason ? "error" : "end_turn", undefined));
  }

  // ── live frames ───────────────────────────────────────────────────────────────────────────

  /** The bubble's answer slice as shown now: [OPTIONS hidden while it streams, code fences closed. */
  private async flushLive(): Promise<void> {
    if (this.finished || this.streamless) return;
    const b = await this.current();
    if (!b) return;
    const seg = this.segment(b);
    const shown = splitOptionsTrailer(seg, { hidePartial: true }).body;
    const view = this.headOf(b, shown);
    const body = view.text.trim() ? this.present(closeOpenFence(view.text)) : "";
    const footer = `_${displaySafeFor(this.status.line, this.capabilities)}_`;
    const frameBody = composeFrame({ think: this.think(b), lead: body ? b.lead : "", body, footer });
    if (frameBody === b.lastContent) return;
    const verdict = await this.frame(b, frameBody, false, view.covers);
    if (verdict.kind !== "refused" && verdict.kind !== "unsent" && body) b.hasBody = true;
    if (verdict.kind === "accepted" && body)
      b.lastBody = composeFrame({ think: this.think(b), lead: b.lead, body });
  }

  /** The bubble to write now: opened if there is none, rolled if it aged out or was refused for good. */
  private async current(): Promise<Bubble | null> {
    if (this.streamless) return null;
    const b = this.bubble;
    if (!b) return this.open(this.nextStart, this.nextLead);
    // Refused for good: continued after what it shows (the refused frame is not shown).
    if (b.dead) return this.roll(b);
    if (this.o.clock.now() - b.openedAt >= WECOM_ROLL_AGE_MS && b.frames > 0) {
      // Sealed as it stands (its last accepted frame, without the status line), then continued
      // with exactly what it lacks.
      await this.frame(b, b.lastBody || composeFrame({ think: this.think(b), body: CONTINUED }), true);
      return this.streamless ? null : this.roll(b);
    }
    return b;
  }

  /** A new stream id continuing the answer after what `old` shows; offsets rebased onto it. */
  private roll(old: Bubble): Bubble {
    this.thinkStart = this.thinking.length;
    return this.open(old.shown, "");
  }

  private open(at: number, lead: string): Bubble {
    const { start, reopen } = resumePoint(this.answer, at);
    const b: Bubble = {
      streamId: this.parts.nextKey(),
      start,
      reopen,
      lead,
      shown: start,
      openedAt: this.o.clock.now(),
      frames: 0,
      dead: false,
      lastBody: "",
      lastContent: "",
      hasBody: false,
      thinkFrom: this.thinkStart,
    };
    this.bubble = b;
    this.nextLead = "";
    this.clearRollTimer();
    // Rolled on time even when the agent is silent: the old bubble is sealed before WeCom kills it.
    this.rollTimer = this.o.clock.setTimeout(() => this.throttle.schedule(), WECOM_ROLL_AGE_MS + 1);
    return b;
  }

  private clearRollTimer(): void {
    if (this.rollTimer !== null) this.o.clock.clearTimeout(this.rollTimer);
    this.rollTimer = null;
  }

  /** One frame on the bubble; an accepted one moves what the bubble shows to `covers`. */
  private async frame(b: Bubble, content: string, finish: boolean, covers = b.shown): Promise<FrameVerdict> {
    const reqId = this.o.address.reqId;
    if (!reqId) return { kind: "unsent" };
    const verdict = await this.o.wire.respond(reqId, b.streamId, content, finish);
    b.frames += 1;
    b.lastContent = content;
    if (verdict.kind === "accepted") b.shown = covers;
    if (verdict.kind === "refused" && verdict.terminal) {
      b.dead = true;
      // 846605: the req_id itself no longer routes, so no other bubble can be opened on it.
      if (verdict.errcode !== 846608) this.streamless = true;
    }
    return verdict;
  }

  private segment(b: Bubble): string {
    return b.reopen + this.answer.slice(b.start);
  }

  /** The head of a slice that may be longer than a bubble, and how much of the raw answer it covers. */
  private headOf(b: Bubble, shown: string): { text: string; covers: number } {
    const chunks = Array.from(shown).length <= HEAD ? [shown] : splitMarkdownSafe(shown, HEAD);
    const head = chunks[0] ?? "";
    const extent = chunks.length === 1 ? shown.length : headExtent(shown, head);
    return { text: head, covers: b.start + Math.max(0, extent - b.reopen.length) };
  }

  private think(b: Bubble): string {
    const text = this.thinking.slice(b.thinkFrom);
    // Redacted on the joined text: that is where a key split across two chunks is whole again.
    return text.trim() ? displaySafeFor(text, this.capabilities) : "";
  }

  // ── seals ─────────────────────────────────────────────────────────────────────────────────

  /** The turn's end, once (onDone, or close when onDone never came). */
  private async end(stopReason: string, error: string | undefined): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.seal({ stopReason, ...(error ? { error } : {}) });
  }

  /**
   * Seal what the current bubble holds (and whatever of the answer it has not shown yet): its head
   * into the bubble, the rest as pushes once the head's verdict is in. `final` adds the turn's
   * status line (or the no-answer notice); `idle` is what a bubble that shows no answer is sealed
   * with. False when there was nothing to seal (the bubble stays open as it is).
   */
  private async seal(final?: { stopReason: string; error?: string }, idle?: string): Promise<boolean> {
    let b = this.bubble && !this.streamless ? await this.current() : this.bubble;
    const start = b?.start ?? this.nextStart;
    const reopen = b?.reopen ?? "";
    const lead = b?.lead ?? this.nextLead;
    const { body: raw, choices } = splitOptionsTrailer(reopen + this.answer.slice(start), {
      hidePartial: false,
    });
    const capped = applyOptionsCap(raw, choices, this.capabilities);
    const text = capped.body.trim() ? capped.body : "";
    const silent = final !== undefined && !this.answered && !text;
    const status = final
      ? turnStatusLine(final.stopReason, {
          elapsedMs: this.o.clock.now() - this.startedAt,
          ...(this.contextUsagePct === undefined ? {} : { contextUsagePct: this.contextUsagePct }),
          ...(final.error ? { error: final.error } : {}),
          reasonShown: silent,
        })
      : "";
    const footer = status ? `_${status}_` : "";
    let pieces = text ? splitMarkdownSafe(text, HEAD).map((p) => this.present(p)) : [];
    if (silent) pieces = [this.present(noAnswerNotice(final.stopReason === "error", "/new", final.error))];
    if (pieces.length === 0 && !footer) {
      if (!b || b.frames === 0 || b.dead || !idle) return false;
      this.retire();
      await this.frame(b, composeFrame({ think: this.think(b), body: this.present(idle) }), true);
      return true;
    }
    if (!b && !this.streamless) b = this.open(start, lead);
    this.retire();
    if (pieces.length === 0) {
      // Only the end's status line is left: it closes the open bubble (or goes on its own).
      if (b && !b.dead && !this.streamless)
        await this.frame(b, composeFrame({ think: b.hasBody ? "" : this.think(b), body: footer }), true);
      else await this.o.outbox.say(footer);
      return true;
    }
    const [head = "", ...tail] = pieces;
    const single = tail.length === 0;
    // The pushes still to come (the head too, when no bubble can carry it) against WeCom's budget.
    const pushes = b && !b.dead && !this.streamless ? tail.length : pieces.length;
    const wait = single ? 0 : this.o.outbox.pushDelay(pushes);
    const headFooter = single
      ? footer
      : wait > WECOM_LONG_BUDGET_WAIT_MS
        ? `_${budgetWaitNotice(tail.length, wait)}_`
        : "";
    const headFrame = composeFrame({
      ...(b ? { think: this.think(b) } : {}),
      lead,
      body: head,
      ...(headFooter ? { footer: headFooter } : {}),
    });
    const headPush = composeFrame({ lead, body: head, ...(headFooter ? { footer: headFooter } : {}) });
    if (!(await this.deliverHead(b, headFrame, headPush))) {
      this.deliveryFailed = true;
      this.log.error("wecom: the answer's head reached nobody; its tail is withheld", {
        parts: pieces.length,
      });
      this.o.audit?.log("delivery", "failed", {
        channel: "wecom",
        reason: "head_undelivered",
        parts: pieces.length,
      });
      return true;
    }
    if (text) this.answered = true;
    for (const [i, piece] of tail.entries()) {
      const last = i === tail.length - 1;
      const outcome = await this.o.outbox.pushed(composeFrame({ body: piece, ...(last ? { footer } : {}) }));
      if (outcome.landed) continue;
      const part = i + 2;
      this.deliveryFailed = true;
      this.log.error("wecom: a part of the answer did not arrive; saying so in the chat", {
        part,
        of: pieces.length,
        verdict: outcome.verdict.kind,
      });
      this.o.audit?.log("delivery", "failed", {
        channel: "wecom",
        reason: outcome.verdict.kind === "refused" ? "part_refused" : "part_unconfirmed",
        part,
        parts: pieces.length,
      });
      // Said where the part belongs, so the rest that follows has a named hole, not a silent one.
      const notice = this.present(missingPartNotice(part, pieces.length, outcome.verdict));
      if (await this.o.outbox.say(composeFrame({ body: notice, ...(last ? { footer } : {}) }))) continue;
      // Not even the notice got through: more parts would land after a hole nobody was told about.
      this.log.error("wecom: neither a part nor its notice arrived; the rest is withheld", {
        part,
        of: pieces.length,
      });
      return true;
    }
    return true;
  }

  /** The bubble is done: the next one begins after everything sealed so far. */
  private retire(): void {
    this.nextStart = this.answer.length;
    this.thinkStart = this.thinking.length;
    this.nextLead = "";
    this.bubble = null;
    this.clearRollTimer();
  }

  /**
   * The sealing frame in the bubble the user watched; its verdict is awaited, and a refused head is
   * delivered ONCE as a confirmed push, then to the response_url. With no usable stream the push is
   * the first choice. True when the head reached the user (WeCom accepted it somewhere).
   */
  private async deliverHead(b: Bubble | null, frame: string, push: string): Promise<boolean> {
    if (b && !this.streamless) {
      // The client has already sent an unacknowledged seal again; still no evidence is no delivery.
      const verdict = await this.frame(b, frame, true);
      if (verdict.kind === "accepted") return true;
      this.log.warn("wecom: the sealing frame did not land; pushing the answer's head once", {
        verdict: verdict.kind,
      });
    }
    if (await this.o.outbox.push(push)) return true;
    return this.o.outbox.lastResort(push);
  }
}
