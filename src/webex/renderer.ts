/**
 * WebexRenderer: Webex allows at most 10 edits per message and streams nothing, so a turn is a
 * "Thinking…" placeholder, a few status frames on it (the running tool plus a bounded tail of the
 * answer) at a doubling interval, and then the answer. The placeholder's budget: 8 status edits, 2
 * kept for the answer; a failed status edit spends the rest of the status budget (the next one
 * would likely fail too, and the answer must still land). The answer takes the placeholder with one
 * edit (a fresh message if that edit is refused) and follows with further messages, each through
 * the byte-bounded fence-safe splitter and the last byte guard. At an approval prompt the answer so
 * far is sealed above it; the prompt is an editable text message (its outcome is written into it)
 * and a card with Approve/Deny beside it (a card cannot be edited, so it never retires: typed 1/2 is
 * primary). Every string is redacted on the form Webex renders before it leaves.
 */
import type { Clock } from "../messaging/base/clock.js";
import { realClock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import { TurnParts } from "../messaging/channel/delivery.js";
import { LiveStatus, ToolParagraphs } from "../messaging/channel/live-status.js";
import {
  freshSessionNotice,
  noAnswerNotice,
  steerChip,
  turnStatusLine,
  typedReplyHint,
} from "../messaging/channel/render-kit.js";
import type { OutboundFilePolicy } from "../messaging/channel/surface.js";
import type { OutboundFile } from "../messaging/files/outbound-files.js";
import type { AuditSink } from "../messaging/security/audit.js";
import { applyOptionsCap, splitOptionsTrailer } from "../messaging/text/options.js";
import { renderTablesWithMetadata } from "../messaging/text/tables/index.js";
import type { AgentStatus, PromptOption, ToolChange, TurnEnding } from "../messaging/turn/renderer.js";
import { Renderer } from "../messaging/turn/renderer.js";
import type { CardAttachment } from "./cards.js";
import { APPROVAL_CHOICES, approvalCard, optionsCard } from "./cards.js";
import { answerTail, chunkAnswer, fitsOneChunk, lastByteGuard, webexSafe, withLine } from "./format.js";
import { TurnRefusals } from "./refusals.js";
import type { WebexRest } from "./transport.js";
import { WEBEX_CAPABILITIES } from "./transport.js";
import { extractUploads } from "./uploads.js";

/** Webex's per-message edit cap, and the share of it status frames may use. */
export const MAX_EDITS = 10;
export const STATUS_EDITS = 8;
/** Bytes of the answer a status frame shows: enough to see it moving, never a second answer. */
const TAIL_BYTES = 600;
const DEFAULT_STATUS_START_MS = 2000;
const PLACEHOLDER = "_Thinking…_";

export interface WebexRendererOptions {
  rest: WebexRest;
  roomId: string;
  logger: Logger;
  clock?: Clock;
  /** The first status frame's delay; each later one waits twice as long as the one before. */
  statusStartMs?: number;
  parts?: TurnParts;
  /** Offers of an options card, held by the dispatcher for a single press. */
  holdOffers?: (messageId: string, labels: readonly string[]) => void;
  contextUsage?: () => number | undefined | Promise<number | undefined>;
  /** Absent: no uploads (a space, or a channel without them); image paths stay visible as text. */
  uploads?: OutboundFilePolicy;
  audit?: AuditSink;
  upload?: WebexUpload;
}

/** Posting one file as its own message (WebexClient.uploadMessage). */
export type WebexUpload = (
  roomId: string,
  file: { name: string; mime: string; bytes: Uint8Array },
  markdown: string,
) => Promise<{ ok: true; data: { id: string } } | { ok: false; status: number }>;

interface Placeholder {
  id: string;
  edits: number;
}

export class WebexRenderer extends Renderer {
  private readonly clock: Clock;
  private readonly parts: TurnParts;
  private readonly startedAt: number;
  private readonly status = new LiveStatus("/stop");
  private readonly paragraphs = new ToolParagraphs();
  private text = "";
  private chip = "";
  private placeholder: Placeholder | null = null;
  private statusEdits = 0;
  private interval: number;
  private timer: unknown = null;
  private shownFrame = "";
  private answered = false;
  private finished = false;
  private ops: Promise<void> = Promise.resolve();
  private readonly noted: string[] = [];
  /** Files the answer referenced, posted after the whole answer. */
  private files: OutboundFile[] = [];
  private compactionPct: number | undefined;
  /** requestId -> the prompt's text message (editable: it carries no card). */
  private readonly prompts = new Map<string, { id: string; markdown: string }>();
  private readonly refusals: TurnRefusals;

  constructor(private readonly o: WebexRendererOptions) {
    super(WEBEX_CAPABILITIES);
    this.clock = o.clock ?? realClock;
    this.parts = o.parts ?? TurnParts.unrecorded();
    this.startedAt = this.clock.now();
    this.interval = o.statusStartMs ?? DEFAULT_STATUS_START_MS;
    this.refusals = new TurnRefusals({
      roomId: o.roomId,
      logger: o.logger,
      ...(o.audit ? { audit: o.audit } : {}),
    });
  }

  override noteSteer(text: string): void {
    this.noted.push(text);
  }

  override async onTurnStart(): Promise<void> {
    this.status.thinking();
    await this.run(() => this.ensurePlaceholder());
  }

  async onTextChunk(text: string): Promise<void> {
    this.text += this.paragraphs.next(this.text, text);
    this.status.writing();
    this.scheduleStatus();
  }

  async onThinking(): Promise<void> {
    this.status.thinking();
    this.scheduleStatus();
  }

  async onToolCall(toolCallId: string, title: string): Promise<void> {
    this.paragraphs.toolCalled();
    this.status.tool(toolCallId, title);
    this.scheduleStatus();
  }

  async onToolUpdate(toolCallId: string, change: ToolChange): Promise<void> {
    this.status.toolChanged(toolCallId, change);
    this.scheduleStatus();
  }

  async onAgentStatus(status: AgentStatus): Promise<void> {
    if (status.type === "fresh_session") {
      const notice = webexSafe(freshSessionNotice(status.cause, status.reason, status.replayed));
      // Above the answer it concerns: a placeholder showing only its status becomes the notice.
      await this.run(async () => {
        const taken = await this.takePlaceholder(notice);
        if (!taken.id && !taken.refused) await this.create(notice);
      });
      return;
    }
    this.status.agent(status);
    this.scheduleStatus();
  }

  async onPromptChoice(
    options: PromptOption[],
    requestId: string,
    context: { toolTitle: string; toolPurpose: string; nonce: string },
  ): Promise<boolean> {
    // Shown once its text or its card landed: a step that failed or never ran leaves it false.
    let shown = false;
    await this.run(async () => {
      // What the agent said before asking is a complete thought: sealed above the prompt.
      await this.deliverAnswer(false);
      const purpose = context.toolPurpose ? `\n\n${context.toolPurpose}` : "";
      const buttons = APPROVAL_CHOICES.map((verdict) => ({ verdict }));
      const hint = typedReplyHint(buttons.length ? buttons : options, true);
      const markdown = webexSafe(
        `🔐 **Permission needed:** ${context.toolTitle || "a tool"}${purpose}\n\n${hint}`,
      );
      const body = lastByteGuard(markdown)[0] ?? "";
      // A placeholder still showing only its status becomes the prompt: the continuation opens below.
      const taken = await this.takePlaceholder(body);
      // Words the organization's policy refused are not posted again as a new message.
      const id = taken.id ?? (taken.refused ? "" : await this.create(body));
      if (id) this.prompts.set(requestId, { id, markdown: body });
      else this.deliveryFailed = true;
      const card = await this.createCard(
        "Approve or deny the request above.",
        approvalCard(context.toolTitle || "a tool", requestId, context.nonce),
      );
      shown = Boolean(id || card);
    });
    if (shown) return true;
    // The driver denies it at once and says so; what is Webex's own is the record that Webex refused
    // it, and the refusal's tracking id an administrator can look up.
    this.o.audit?.log("webex.approval", "denied", { request: requestId, reason: "prompt_not_shown" });
    const notice = this.refusals.notice("prompt");
    if (notice) await this.run(async () => void (await this.create(webexSafe(notice))));
    return false;
  }

  /** The outcome is written into the prompt's text message; the card beside it cannot change. */
  override markApproval(requestId: string, outcome: string): Promise<void> {
    const prompt = this.prompts.get(requestId);
    if (!this.finished) this.status.thinking();
    if (!prompt) return Promise.resolve();
    this.prompts.delete(requestId);
    return this.run(async () => {
      const markdown = withLine(prompt.markdown, `**${webexSafe(outcome)}**`);
      const res = await this.o.rest.editMessage(prompt.id, { roomId: this.o.roomId, markdown });
      // Refused (an edit budget, a deleted prompt): the outcome still reaches the reader.
      if (!res.ok) await this.create(webexSafe(`${outcome}: ${prompt.markdown.split("\n")[0] ?? ""}`));
    });
  }

  async onCompaction(contextUsagePct: number | undefined, receipt: string): Promise<void> {
    if (contextUsagePct !== undefined) this.compactionPct = contextUsagePct;
    if (receipt) await this.run(async () => void (await this.create(webexSafe(receipt))));
  }

  override async onSteerConsumed(summary: string): Promise<void> {
    // The answer so far is sealed; the continuation opens with the user's words noted on it.
    await this.run(() => this.deliverAnswer(false));
    this.chip = steerChip(this.noted.shift() ?? summary);
  }

  async onDone(stopReason: string, ending: TurnEnding = {}): Promise<void> {
    if (ending.contextUsagePct !== undefined) this.compactionPct = ending.contextUsagePct;
    this.cancelStatus();
    await this.run(() => this.deliverAnswer(true, stopReason, ending.error));
    this.finished = true;
  }

  override async close(reason?: unknown): Promise<void> {
    this.cancelStatus();
    await this.ops;
    if (!this.finished && this.placeholder) {
      // A turn that never reached its end must not leave "Thinking…" behind.
      const notice = noAnswerNotice(Boolean(reason), "`/new`");
      await this.run(() => this.answerInto(notice));
    }
    this.finished = true;
  }

  // ── status frames ────────────────────────────────────────────────────────────────────────────

  private scheduleStatus(): void {
    if (this.finished || this.timer !== null || this.statusEdits >= STATUS_EDITS) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      void this.run(() => this.statusFrame());
    }, this.interval);
    // Doubling: a long turn spends its few edits across its length, not in its first seconds.
    this.interval *= 2;
  }

  private cancelStatus(): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private async statusFrame(): Promise<void> {
    if (this.finished || this.statusEdits >= STATUS_EDITS) return;
    const placeholder = await this.ensurePlaceholder();
    if (!placeholder) return;
    // The tail is cut from the REDACTED answer: a key split by the cut was already replaced whole.
    const { body } = splitOptionsTrailer(this.text, { hidePartial: true });
    const tail = body.trim() ? answerTail(webexSafe(this.chip + body), TAIL_BYTES) : "";
    const frame = withLine(tail, `_${webexSafe(this.status.line)}_`);
    if (frame === this.shownFrame) return;
    this.statusEdits += 1;
    placeholder.edits += 1;
    const res = await this.o.rest.editMessage(placeholder.id, { roomId: this.o.roomId, markdown: frame });
    if (res.ok) this.shownFrame = frame;
    else {
      // A refused edit would likely be refused again: the rest of the status budget is spent.
      this.statusEdits = STATUS_EDITS;
      this.refusals.note(res, "edit");
    }
  }

  // ── the answer ───────────────────────────────────────────────────────────────────────────────

  /**
   * Deliver what the segment holds: tables rendered, the [OPTIONS:] trailer as a card, the rest
   * split by bytes. `final` adds the turn's status line (and the no-answer notice when silent).
   */
  private async deliverAnswer(final: boolean, stopReason = "", error?: string): Promise<void> {
    this.cancelStatus();
    const { body, choices } = splitOptionsTrailer(this.text, { hidePartial: false });
    this.text = "";
    const capped = applyOptionsCap(body, choices, this.capabilities);
    const extracted =
      this.o.uploads && this.o.upload && this.o.audit
        ? await extractUploads(capped.body, this.o.uploads, this.o.audit)
        : { text: capped.body, files: [], notes: [] };
    this.files.push(...extracted.files);
    const withNotes = [extracted.text, ...extracted.notes].filter((t) => t.trim()).join("\n\n");
    // A grid too big for one message becomes cards; one no card can show stays raw (cut exactly).
    const tables = renderTablesWithMetadata(withNotes, {
      policy: this.capabilities.tableMode,
      nativeTables: false,
      fits: fitsOneChunk,
    });
    const rendered = tables.text;
    const hasText = rendered.trim() !== "";
    const silent = final && !this.answered && !hasText && capped.choices.length === 0;
    let footer = "";
    if (final) {
      const usage = await this.usage();
      footer = `_${webexSafe(
        turnStatusLine(stopReason, {
          elapsedMs: this.clock.now() - this.startedAt,
          ...(usage === undefined ? {} : { contextUsagePct: usage }),
          ...(error ? { error } : {}),
          reasonShown: silent,
        }),
      )}_`;
    }
    const source = silent ? { text: noAnswerNotice(stopReason === "error", "`/new`", error) } : tables;
    if (!source.text.trim() && !footer && capped.choices.length === 0) return;
    const chip = this.chip && source.text.trim() ? this.chip : "";
    if (chip) this.chip = "";
    const chunks = source.text.trim() ? chunkAnswer(chip, source) : [];
    if (footer) {
      const last = chunks.pop();
      // A raw table's last piece stays exact: the status line then travels on its own.
      if (last && !last.exact) chunks.push({ text: withLine(last.text, footer), exact: false });
      else chunks.push(...(last ? [last] : []), { text: footer, exact: false });
    }
    for (const chunk of chunks) {
      if (chunk.text.trim() && !silent) this.answered = true;
      await this.answerInto(chunk.text);
    }
    if (final) await this.postFiles();
    if (capped.choices.length > 0) {
      const id = await this.createCard(
        `Choices: ${capped.choices.map((c, i) => `${i + 1}. ${c}`).join(" · ")}`,
        optionsCard(capped.choices),
      );
      if (id) this.o.holdOffers?.(id, capped.choices);
    }
  }

  /** Each file as its own message (Webex takes one per message), captioned by its redacted alt text. */
  private async postFiles(): Promise<void> {
    const upload = this.o.upload;
    for (const file of this.files.splice(0)) {
      const caption = lastByteGuard(webexSafe(file.alt))[0] ?? "";
      const res = upload
        ? await upload(this.o.roomId, { name: file.filename, mime: file.mime, bytes: file.bytes }, caption)
        : null;
      if (res?.ok) continue;
      // The file did not go: its markup comes back visible (display-safe), never silently lost.
      this.deliveryFailed = true;
      await this.create(webexSafe(`⚠️ an image could not be sent: ${file.filename}`));
    }
  }

  /**
   * One answer chunk: into the placeholder (one of its reserved edits), else a fresh message. A
   * chunk the organization's policy refused is not sent again; the reader is told once instead.
   */
  private async answerInto(markdown: string): Promise<void> {
    for (const part of lastByteGuard(markdown)) {
      const taken = await this.takePlaceholder(part);
      if (taken.id) continue;
      if (taken.refused || !(await this.create(part))) {
        this.deliveryFailed = true;
        const notice = this.refusals.notice("answer");
        if (notice) await this.create(webexSafe(notice));
      }
    }
  }

  /**
   * The placeholder rewritten as `markdown` (one of its edits). No id: there was none, it had no
   * edit left, or Webex refused; `refused` says the refusal was the organization's policy.
   */
  private async takePlaceholder(markdown: string): Promise<{ id?: string; refused?: boolean }> {
    const placeholder = this.placeholder;
    this.placeholder = null;
    this.cancelStatus();
    if (!placeholder || placeholder.edits >= MAX_EDITS) return {};
    placeholder.edits += 1;
    const res = await this.o.rest.editMessage(placeholder.id, { roomId: this.o.roomId, markdown });
    if (res.ok) return { id: placeholder.id };
    return { refused: this.refusals.note(res, "edit") };
  }

  private async ensurePlaceholder(): Promise<Placeholder | null> {
    if (this.placeholder) return this.placeholder;
    if (this.finished) return null;
    const id = await this.create(PLACEHOLDER);
    this.placeholder = id ? { id, edits: 0 } : null;
    this.shownFrame = PLACEHOLDER;
    return this.placeholder;
  }

  /** Every message this renderer creates goes through the turn's parts (a resumed turn reuses them). */
  private async create(markdown: string): Promise<string> {
    const [body] = lastByteGuard(markdown);
    const id = await this.parts.post(body ?? "", {
      create: async () => {
        const res = await this.o.rest.createMessage({ roomId: this.o.roomId, markdown: body ?? "" });
        if (res.ok) return res.data.id;
        this.refusals.note(res, "send");
        return null;
      },
      replace: async (earlier) => {
        const res = await this.o.rest.editMessage(earlier, { roomId: this.o.roomId, markdown: body ?? "" });
        if (!res.ok) this.refusals.note(res, "edit");
        return res.ok;
      },
    });
    return id ?? "";
  }

  /** A card message: its text is the fallback for clients without cards; it can never be edited. */
  private async createCard(fallback: string, card: CardAttachment): Promise<string> {
    const markdown = lastByteGuard(webexSafe(fallback))[0] ?? "";
    const id = await this.parts.post(JSON.stringify([markdown, card]), {
      create: async () => {
        const res = await this.o.rest.createMessage({ roomId: this.o.roomId, markdown, attachments: [card] });
        if (res.ok) return res.data.id;
        this.refusals.note(res, "card");
        return null;
      },
      // A card cannot be edited: an earlier run's card stays, a new one is posted.
      replace: async () => false,
    });
    if (!id) this.deliveryFailed = true;
    return id ?? "";
  }

  private async usage(): Promise<number | undefined> {
    try {
      return (await this.o.contextUsage?.()) ?? this.compactionPct;
    } catch (error) {
      this.o.logger.debug("webex: context usage unavailable", { error: String(error) });
      return this.compactionPct;
    }
  }

  /** One serial queue for every platform call; a failure is recorded, never dropped silently. */
  private run(fn: () => Promise<unknown>): Promise<void> {
    const next = this.ops.then(fn).then(
      () => {},
      (error: unknown) => {
        this.deliveryFailed = true;
        this.o.logger.error("webex renderer step failed", { error: String(error) });
      },
    );
    this.ops = next;
    return next;
  }
}
