/**
 * The buffered renderer, for a platform that neither streams nor edits (Feishu, Weixin): the whole
 * answer is sent when the turn is done, ending with the kit's turn-status line; an unfinished
 * `[OPTIONS` tail is kept as prose (nothing was shown early, so it can only be the model's own
 * words) and choices become a numbered list (no buttons). Buffered but not silent: what the user must
 * know while they wait comes as its own message at once (the wait for a free agent, a long silence,
 * a fresh session, a compaction), an approval prompt seals the answer so far above it and is
 * answered by typing 1 or 2, and its outcome is posted under it (a decided prompt cannot be edited
 * to say so). The channel brings only its `post` (one path for every body: split, display-safe),
 * and optionally a ledger of the prompts it posted and a busy indicator ("typing…").
 */
import type { Logger } from "../base/logger.js";
import { oneLine } from "../text/clip.js";
import { applyOptionsCap, splitOptionsTrailer } from "../text/options.js";
import type { AgentStatus, PromptOption, TurnEnding } from "../turn/renderer.js";
import { Renderer } from "../turn/renderer.js";
import { appendChip, finalAnswerText, QuietNotices } from "./buffered-answer.js";
import type { TransportCapabilities } from "./capabilities.js";
import { ToolParagraphs } from "./live-status.js";
import { freshSessionNotice, noAnswerNotice, SerialQueue, steerChip, typedReplyHint } from "./render-kit.js";

/** Every prompt says this; a channel that can read a quoted message recognises a prompt by it. */
export const PROMPT_MARKER = "Permission needed";

/** No buttons: a prompt is answered 1 (approve) or 2 (deny), and says exactly that. */
const TYPED_CHOICES: readonly Pick<PromptOption, "verdict">[] = [{ verdict: "approve" }, { verdict: "deny" }];
/** Longest tool title a prompt or its outcome repeats (code points). */
const TITLE_CHARS = 200;

export interface BufferedRendererOptions {
  capabilities: TransportCapabilities;
  /** Names the channel in log lines. */
  channel: string;
  /** Markdown into the conversation (split, display-safe); the message ids, in order. Throws on failure. */
  post(markdown: string): Promise<string[]>;
  /** The prompts posted, by message id (a channel that tells a quoted prompt apart keeps them). */
  prompts?: { posted(messageId: string): void; decided(messageId: string): void };
  /** Shown while the turn runs ("typing…"), cleared at its end. */
  busy?: { start(): void; stop(): void };
  now: () => number;
  logger: Logger;
  /** The commands as this channel spells them (in notices and the status line). */
  commands: { new: string; stop: string };
}

export class BufferedRenderer extends Renderer {
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
  private readonly open = new Map<string, { messageId: string | undefined; title: string }>();

  constructor(private readonly o: BufferedRendererOptions) {
    super(o.capabilities);
    this.startedAt = o.now();
    this.notices = new QuietNotices(o.commands.stop);
    this.queue = new SerialQueue((error) => {
      this.deliveryFailed = true;
      o.logger.warn(`${o.channel}: a message did not land`, { error: String(error) });
    });
  }

  override async onTurnStart(): Promise<void> {
    this.o.busy?.start();
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
  ): Promise<boolean> {
    // What the agent said before asking is a complete thought: it goes out above the prompt.
    this.sealAnswer();
    const title = oneLine(context.toolTitle, TITLE_CHARS) || "a tool";
    const purpose = context.toolPurpose ? `\n\n${context.toolPurpose}` : "";
    const text = `🔐 **${PROMPT_MARKER}:** ${title}${purpose}\n\n${typedReplyHint(TYPED_CHOICES, false)}`;
    // Shown once the post returned (it throws on failure; some channels have no ids to return).
    let shown = false;
    await this.queue.run(async () => {
      const [id] = await this.o.post(text);
      if (id) this.o.prompts?.posted(id);
      this.open.set(requestId, { messageId: id, title });
      shown = true;
    });
    return shown;
  }

  /** The outcome under the prompt (it cannot be edited): a decided prompt must not read as open. */
  override markApproval(requestId: string, outcome: string): Promise<void> {
    // Queued at once (before any await): the outcome lands before the continuation it released.
    return this.queue.run(async () => {
      const prompt = this.open.get(requestId);
      if (!prompt) return;
      this.open.delete(requestId);
      if (prompt.messageId) this.o.prompts?.decided(prompt.messageId);
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
    const abandoned = [...this.open.values()].map((p) => p.title);
    this.abandonPrompts();
    this.say(
      finalAnswerText({
        body: this.takeBody(),
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
    this.o.busy?.stop();
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
    this.o.busy?.stop();
  }

  /** Post now, in order with everything else this turn sends. */
  private say(markdown: string): void {
    void this.queue.run(async () => {
      await this.o.post(markdown);
    });
  }

  /** The answer so far goes out (a seal at a prompt): its options as a numbered list. */
  private sealAnswer(): void {
    const body = this.takeBody();
    if (body.trim() === "") return;
    this.answered = true;
    this.say(body);
  }

  /** The answer so far, taken; its options a numbered list (no buttons: every choice is a line). */
  private takeBody(): string {
    const { body, choices } = splitOptionsTrailer(this.body, { hidePartial: false });
    this.body = "";
    return applyOptionsCap(body, choices, this.capabilities).body;
  }

  private abandonPrompts(): void {
    for (const p of this.open.values()) if (p.messageId) this.o.prompts?.decided(p.messageId);
    this.open.clear();
  }
}
