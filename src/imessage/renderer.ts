/**
 * IMessageRenderer: only the final answer, as plain text. There is no placeholder ("Thinking…"
 * could never be rewritten: nothing sent can be edited) and no streaming; the typing indicator is
 * the progress signal, refreshed while the turn runs (presence.ts). What the user must know while
 * waiting comes as a message of its own at once (the wait for a free agent, a long silence, a fresh
 * session, a compaction). An approval prompt seals the answer so far above it and is its own message,
 * answered by typing 1 or 2; its outcome (a decision, a timeout) is a new message, since the prompt
 * cannot be changed to say so. Choices become a numbered list. Every body goes through the surface's
 * one path: flattened, screened on the flat form, split (plaintext.ts, chunks.ts).
 */
import type { Clock } from "../messaging/base/clock.js";
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
import { IMESSAGE_CAPABILITIES } from "./transport.js";

/** No buttons: a prompt is answered 1 (approve) or 2 (deny), and says exactly that. */
const TYPED_CHOICES: readonly Pick<PromptOption, "verdict">[] = [{ verdict: "approve" }, { verdict: "deny" }];
/** Longest tool title a prompt or its outcome repeats (code points). */
const TITLE_CHARS = 200;
/** Messages shows "typing…" for a while after each signal; refreshed a little inside that. */
export const TYPING_REFRESH_MS = 8_000;

export interface IMessageRendererOptions {
  /** Markdown into the conversation (flattened, screened, split); throws when a part did not land. */
  post(markdown: string): Promise<void>;
  /** Show "typing…" (a no-op once imsg refused it). */
  typing(): Promise<void>;
  clock: Clock;
  logger: Logger;
  /** The commands as this channel spells them (in notices and the status line). */
  commands: { new: string; stop: string };
  typingEveryMs?: number;
}

export class IMessageRenderer extends Renderer {
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
  /** requestId -> the title of the prompt on screen, so its outcome can name it. */
  private readonly open = new Map<string, string>();
  private typingTimer: unknown = null;

  constructor(private readonly o: IMessageRendererOptions) {
    super(IMESSAGE_CAPABILITIES);
    this.startedAt = o.clock.now();
    this.notices = new QuietNotices(o.commands.stop);
    this.queue = new SerialQueue((error) => {
      this.deliveryFailed = true;
      o.logger.warn("imessage: a message did not land", { error: String(error) });
    });
  }

  override async onTurnStart(): Promise<void> {
    this.keepTyping();
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
    this.open.set(requestId, title);
    this.say(`🔐 Permission needed: ${title}${purpose}\n\n${typedReplyHint(TYPED_CHOICES, false)}`);
    await this.queue.idle();
  }

  /** The outcome as a new message (the prompt cannot be edited): a decided prompt must not read as open. */
  override markApproval(requestId: string, outcome: string): Promise<void> {
    const title = this.open.get(requestId);
    if (title === undefined) return Promise.resolve();
    this.open.delete(requestId);
    // Queued at once: the outcome lands before the continuation it released.
    return this.queue.run(() => this.o.post(`🔐 ${title}: ${outcome}`));
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
    this.stopTyping();
    if (ending.contextUsagePct !== undefined) this.contextUsagePct = ending.contextUsagePct;
    const abandoned = [...this.open.values()];
    this.open.clear();
    this.say(
      finalAnswerText({
        body: this.takeBody(),
        answered: this.answered,
        stopReason,
        ending,
        elapsedMs: this.o.clock.now() - this.startedAt,
        contextUsagePct: this.contextUsagePct,
        newCommand: this.o.commands.new,
        abandoned,
      }),
    );
    await this.queue.idle();
  }

  override async close(reason?: unknown): Promise<void> {
    this.stopTyping();
    if (!this.finished && reason) {
      // A turn that never reached its end still says so: never a silent stop.
      this.finished = true;
      this.open.clear();
      this.say(noAnswerNotice(true, this.o.commands.new));
    }
    this.finished = true;
    await this.queue.idle();
  }

  /** Post now, in order with everything else this turn sends. */
  private say(markdown: string): void {
    void this.queue.run(() => this.o.post(markdown));
  }

  /** The answer so far, its options a numbered list (no buttons: every choice is a line). */
  private takeBody(): string {
    const { body, choices } = splitOptionsTrailer(this.body, { hidePartial: false });
    this.body = "";
    return applyOptionsCap(body, choices, this.capabilities).body;
  }

  private sealAnswer(): void {
    const body = this.takeBody();
    if (body.trim() === "") return;
    this.answered = true;
    this.say(body);
  }

  private keepTyping(): void {
    if (this.finished || this.typingTimer !== null) return;
    void this.o.typing();
    this.typingTimer = this.o.clock.setTimeout(() => {
      this.typingTimer = null;
      this.keepTyping();
    }, this.o.typingEveryMs ?? TYPING_REFRESH_MS);
  }

  private stopTyping(): void {
    if (this.typingTimer !== null) this.o.clock.clearTimeout(this.typingTimer);
    this.typingTimer = null;
  }
}
