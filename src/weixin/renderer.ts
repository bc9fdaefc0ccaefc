/**
 * WeixinRenderer: buffered (iLink neither streams nor edits). The whole answer is sent when the turn
 * is done, split by the transport's one path into ≤ 4,000 code point messages, ending with the kit's
 * turn-status line; choices become a numbered list (no buttons) and an unfinished `[OPTIONS` tail
 * is kept as prose (nothing was shown early, so it can only be the model's own words). Buffered but
 * not silent: WeChat shows "typing…" while the turn runs, and what the user must know while they
 * wait (the wait for a free agent, a long silence, a fresh session, a compaction) arrives as its
 * own message. An approval prompt seals the answer so far above it, is its own message answered by
 * typing 1 or 2, and its outcome (or its timeout) is spoken under it.
 */
import type { Logger } from "../messaging/base/logger.js";
import { LiveStatus, ToolParagraphs } from "../messaging/channel/live-status.js";
import {
  approvalOutcomeLabel,
  freshSessionNotice,
  noAnswerNotice,
  SerialQueue,
  steerChip,
  turnStatusLine,
  typedReplyHint,
} from "../messaging/channel/render-kit.js";
import { oneLine } from "../messaging/text/clip.js";
import { applyOptionsCap, splitOptionsTrailer } from "../messaging/text/options.js";
import type { AgentStatus, PromptOption, TurnEnding } from "../messaging/turn/renderer.js";
import { Renderer } from "../messaging/turn/renderer.js";
import { WEIXIN_CAPABILITIES } from "./transport.js";

const TYPED_CHOICES: readonly Pick<PromptOption, "verdict">[] = [{ verdict: "approve" }, { verdict: "deny" }];
/** Longest tool title a prompt or its outcome repeats (code points). */
const TITLE_CHARS = 200;

export interface WeixinRendererOptions {
  /** Markdown to the peer (split, display-safe); the client_ids, in order. Throws on failure. */
  post(markdown: string): Promise<string[]>;
  /** "typing…" on while the turn runs, off at its end. */
  typing?: { start(): void; stop(): void };
  now: () => number;
  logger: Logger;
  commands: { new: string; stop: string };
}

export class WeixinRenderer extends Renderer {
  private readonly queue: SerialQueue;
  private readonly paragraphs = new ToolParagraphs();
  private readonly startedAt: number;
  private body = "";
  private readonly noted: string[] = [];
  private answered = false;
  private finished = false;
  private contextUsagePct: number | undefined;
  private silenceSaid = 0;
  private waitingSaid = false;
  /** requestId -> the prompt's title, so its outcome can name it. */
  private readonly open = new Map<string, string>();

  constructor(private readonly o: WeixinRendererOptions) {
    super(WEIXIN_CAPABILITIES);
    this.startedAt = o.now();
    this.queue = new SerialQueue((error) => {
      this.deliveryFailed = true;
      o.logger.warn("weixin: a message did not land", { error: String(error) });
    });
  }

  override async onTurnStart(): Promise<void> {
    this.o.typing?.start();
  }

  override noteSteer(text: string): void {
    this.noted.push(text);
  }

  async onTextChunk(text: string): Promise<void> {
    this.body += this.paragraphs.next(this.body, text);
    this.silenceSaid = 0;
  }

  async onThinking(): Promise<void> {
    this.silenceSaid = 0;
  }

  async onToolCall(): Promise<void> {
    this.paragraphs.toolCalled();
    this.silenceSaid = 0;
  }

  async onToolUpdate(): Promise<void> {
    this.silenceSaid = 0;
  }

  async onAgentStatus(status: AgentStatus): Promise<void> {
    if (status.type === "fresh_session") {
      this.say(freshSessionNotice(status.cause, status.reason, status.replayed));
      return;
    }
    if (status.type === "waiting") {
      // Said once: the place in line changes, and a message per step would be noise.
      if (this.waitingSaid) return;
      this.waitingSaid = true;
    } else {
      // A long silence is said when it starts and each time it doubles.
      if (this.silenceSaid > 0 && status.seconds < this.silenceSaid * 2) return;
      this.silenceSaid = Math.max(1, status.seconds);
    }
    const line = new LiveStatus(this.o.commands.stop);
    line.agent(status);
    this.say(line.line);
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
    this.say(`🔐 **Permission needed:** ${title}${purpose}\n\n${typedReplyHint(TYPED_CHOICES, false)}`);
    await this.queue.idle();
  }

  /** The outcome under the prompt (nothing can be edited): a decided prompt must not read as open. */
  override markApproval(requestId: string, outcome: string): Promise<void> {
    return this.queue.run(async () => {
      const title = this.open.get(requestId);
      if (title === undefined) return;
      this.open.delete(requestId);
      await this.o.post(`🔐 ${title}: ${outcome}`);
    });
  }

  async onCompaction(contextUsagePct: number | undefined, receipt: string): Promise<void> {
    if (contextUsagePct !== undefined) this.contextUsagePct = contextUsagePct;
    if (receipt) this.say(receipt);
  }

  override async onSteerConsumed(summary: string): Promise<void> {
    const chip = steerChip(this.noted.shift() ?? summary);
    if (!chip) return;
    const gap =
      !this.body.trim() || this.body.endsWith("\n\n") ? "" : this.body.endsWith("\n") ? "\n" : "\n\n";
    this.body += gap + chip;
  }

  async onDone(stopReason: string, ending: TurnEnding = {}): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    if (ending.contextUsagePct !== undefined) this.contextUsagePct = ending.contextUsagePct;
    const { body, choices } = splitOptionsTrailer(this.body, { hidePartial: false });
    this.body = "";
    const capped = applyOptionsCap(body, choices, this.capabilities);
    const silent = !this.answered && capped.body.trim() === "";
    const status = turnStatusLine(stopReason, {
      elapsedMs: this.o.now() - this.startedAt,
      ...(this.contextUsagePct === undefined ? {} : { contextUsagePct: this.contextUsagePct }),
      ...(ending.error ? { error: ending.error } : {}),
      reasonShown: silent,
    });
    const text = silent
      ? noAnswerNotice(stopReason === "error", this.o.commands.new, ending.error)
      : capped.body;
    // A prompt the turn ended without an answer to says so, since the prompt itself cannot.
    const abandoned = [...this.open.values()].map((t) => `🔐 ${t}: ${approvalOutcomeLabel("abandoned")}`);
    this.open.clear();
    this.say([text.trimEnd(), ...abandoned, status].filter(Boolean).join("\n\n"));
    await this.queue.idle();
    this.o.typing?.stop();
  }

  override async close(reason?: unknown): Promise<void> {
    if (!this.finished && reason) {
      // A turn that never reached its end (no DONE) still says so: never a silent stop.
      this.finished = true;
      this.open.clear();
      this.say(noAnswerNotice(true, this.o.commands.new));
    }
    this.finished = true;
    await this.queue.idle();
    this.o.typing?.stop();
  }

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
}
