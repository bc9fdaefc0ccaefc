/**
 * FeishuRenderer: buffered, as the spec's Feishu is (no streaming, no edits). The whole answer is
 * sent when the turn is done, as replies to the message that started it, ending with the kit's
 * turn-status line; an unfinished `[OPTIONS` tail is kept as prose (nothing was shown early, so it
 * can only be the model's own words) and choices become a numbered list (no buttons). Buffered but
 * not silent: what the user must know while they wait comes as its own reply at once (the wait for
 * a free agent, a long silence, a fresh session, a compaction), an approval prompt seals the
 * answer so far above it and is answered by typing 1 or 2, and its outcome is replied under it
 * (a decided prompt cannot be edited to say so). Every body takes the transport's one path
 * (format.ts): cards for tables, the display-form floor, the split, the byte cap.
 */
import type { Logger } from "../messaging/base/logger.js";
import { appendChip, finalAnswerText, QuietNotices } from "../messaging/channel/buffered-answer.js";
import { ToolParagraphs } from "../messaging/channel/live-status.js";
import {
  freshSessionNotice,
  noAnswerNotice,
  SerialQueue,
  steerChip,
  typedReplyHint,
} from "../messaging/channel/render-kit.js";
import { oneLine } from "../messaging/text/clip.js";
import { applyOptionsCap, splitOptionsTrailer } from "../messaging/text/options.js";
import type { AgentStatus, PromptOption, TurnEnding } from "../messaging/turn/renderer.js";
import { Renderer } from "../messaging/turn/renderer.js";
import { PROMPT_MARKER, type PromptLedger } from "./prompts.js";
import { FEISHU_CAPABILITIES } from "./transport.js";

/** Feishu offers no buttons: a prompt is answered 1 (approve) or 2 (deny), and says exactly that. */
const TYPED_CHOICES: readonly Pick<PromptOption, "verdict">[] = [{ verdict: "approve" }, { verdict: "deny" }];
/** Longest tool title a prompt or its outcome repeats (code points). */
const TITLE_CHARS = 200;

export interface FeishuRendererOptions {
  /** Markdown into the conversation as replies (split, display-safe); the ids, in order. Throws on failure. */
  post(markdown: string): Promise<string[]>;
  prompts: PromptLedger;
  now: () => number;
  logger: Logger;
  /** The commands as this channel spells them (in notices and the status line). */
  commands: { new: string; stop: string };
}

export class FeishuRenderer extends Renderer {
  private readonly queue: SerialQueue;
  private readonly paragraphs = new ToolParagraphs();
  private readonly startedAt: number;
  private body = "";
  private readonly noted: string[] = [];
  /** Answer text already went out (sealed above a prompt): the turn answered something. */
  private answered = false;
  private finished = false;
  private contextUsagePct: number | undefined;
  private readonly notices: QuietNotices;
  /** requestId -> the prompt on screen, so its outcome can name it. */
  private readonly open = new Map<string, { messageId: string; title: string }>();

  constructor(private readonly o: FeishuRendererOptions) {
    super(FEISHU_CAPABILITIES);
    this.startedAt = o.now();
    this.notices = new QuietNotices(o.commands.stop);
    this.queue = new SerialQueue((error) => {
      this.deliveryFailed = true;
      o.logger.warn("feishu: a reply did not land", { error: String(error) });
    });
  }

  override noteSteer(text: string): void {
    this.noted.push(text);
  }

  async onTextChunk(text: string): Promise<void> {
    this.body += this.paragraphs.next(this.body, text);
    this.notices.activity();
  }

  async onThinking(): Promise<void> {
    this.notices.activity();
  }

  async onToolCall(): Promise<void> {
    this.paragraphs.toolCalled();
    this.notices.activity();
  }

  async onToolUpdate(): Promise<void> {
    this.notices.activity();
  }

  async onAgentStatus(status: AgentStatus): Promise<void> {
    if (status.type === "fresh_session") {
      this.say(freshSessionNotice(status.cause, status.reason, status.replayed));
      return;
    }
    const notice = this.notices.notice(status);
    if (notice) this.say(notice);
  }

  async onPromptChoice(
    _options: PromptOption[],
    requestId: string,
    context: { toolTitle: string; toolPurpose: string; nonce: string },
  ): Promise<void> {
    // What the agent said before asking is a complete thought: it goes out above the prompt.
    this.sealAnswer();
    const title = oneLine(context.toolTitle, TITLE_CHARS) || "a tool";
    const purpose = context.toolPurpose ? `\n\n${context.toolPurpose}` : "";
    const text = `🔐 **${PROMPT_MARKER}:** ${title}${purpose}\n\n${typedReplyHint(TYPED_CHOICES, false)}`;
    await this.queue.run(async () => {
      const [id] = await this.o.post(text);
      if (!id) return;
      this.o.prompts.posted(id);
      this.open.set(requestId, { messageId: id, title });
    });
  }

  /** The outcome under the prompt (it cannot be edited): a decided prompt must not read as open. */
  override markApproval(requestId: string, outcome: string): Promise<void> {
    // Queued at once (before any await): the outcome lands before the continuation it released.
    return this.queue.run(async () => {
      const prompt = this.open.get(requestId);
      if (!prompt) return;
      this.open.delete(requestId);
      this.o.prompts.decided(prompt.messageId);
      await this.o.post(`🔐 ${prompt.title}: ${outcome}`);
    });
  }

  async onCompaction(contextUsagePct: number | undefined, receipt: string): Promise<void> {
    if (contextUsagePct !== undefined) this.contextUsagePct = contextUsagePct;
    if (receipt) this.say(receipt);
  }

  override async onSteerConsumed(summary: string): Promise<void> {
    const chip = steerChip(this.noted.shift() ?? summary);
    if (chip) this.body = appendChip(this.body, chip);
  }

  async onDone(stopReason: string, ending: TurnEnding = {}): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    if (ending.contextUsagePct !== undefined) this.contextUsagePct = ending.contextUsagePct;
    const { body, choices } = splitOptionsTrailer(this.body, { hidePartial: false });
    this.body = "";
    const abandoned = [...this.open.values()].map((p) => p.title);
    this.abandonPrompts();
    this.say(
      finalAnswerText({
        body: applyOptionsCap(body, choices, this.capabilities).body,
        answered: this.answered,
        stopReason,
        ending,
        elapsedMs: this.o.now() - this.startedAt,
        contextUsagePct: this.contextUsagePct,
        newCommand: this.o.commands.new,
        abandoned,
      }),
    );
    await this.queue.idle();
  }

  override async close(reason?: unknown): Promise<void> {
    if (!this.finished && reason) {
      // A turn that never reached its end (no DONE) still says so: never a silent stop.
      this.finished = true;
      this.abandonPrompts();
      this.say(noAnswerNotice(true, this.o.commands.new));
    }
    this.finished = true;
    await this.queue.idle();
  }

  /** Post now, in order with everything else this turn sends. */
  private say(markdown: string): void {
    void this.queue.run(async () => {
      await this.o.post(markdown);
    });
  }

  /** The answer so far goes out (a seal at a prompt): its options as a numbered list. */
  private sealAnswer(): void {
    const { body, choices } = splitOptionsTrailer(this.body, { hidePartial: false });
    this.body = "";
    const capped = applyOptionsCap(body, choices, this.capabilities);
    if (capped.body.trim() === "") return;
    this.answered = true;
    this.say(capped.body);
  }

  private abandonPrompts(): void {
    for (const p of this.open.values()) this.o.prompts.decided(p.messageId);
    this.open.clear();
  }
}
