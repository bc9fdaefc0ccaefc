/**
 * The approval prompt on WeCom. No widget exists, so the prompt is a push with its typed `1`/`2`
 * floor ("always" needs a deliberate press on a channel that has one), else a sealed bubble, else
 * the response_url; its decision is pushed too (a push cannot be edited, so "decided" is a line of
 * its own, naming the tool it settles).
 */
import type { PromptOption } from "../messaging/turn/renderer.js";
import type { Outbox } from "./outbox.js";

export class WeComPrompts {
  /** The prompts shown (their message ids): an edit of one is its decision. */
  private readonly shown = new Set<string>();
  /** Prompt bodies built and not yet shown: how a post is told to be a prompt. */
  private readonly pending = new Set<string>();
  private n = 0;

  constructor(
    private readonly outbox: Outbox,
    private readonly present: (slice: string) => string,
  ) {}

  head(title: string, purpose: string): string {
    return `🔐 **Permission needed:** ${title}${purpose ? `\n${purpose}` : ""}`;
  }

  body(head: string, hint: string): string {
    const body = this.present(`${head}\n\n_${hint}_`);
    this.pending.add(body);
    return body;
  }

  /** The decision line, naming the tool it settles (`title` display-safe, as the head shows it). */
  decided(title: string, outcome: string): string {
    return this.present(`🔐 ${title}: ${outcome}`);
  }

  /** The choices a typed reply offers. */
  offered(options: readonly PromptOption[]): PromptOption[] {
    return options.filter((o) => o.verdict !== "approve_always");
  }

  /** `body` is a prompt still to be shown. */
  is(body: string): boolean {
    return this.pending.has(body);
  }

  /** Show the prompt `body`: its id once one route delivered it, else null. */
  async show(body: string): Promise<string | null> {
    this.pending.delete(body);
    const landed =
      (await this.outbox.push(body)) ||
      (await this.outbox.sealedBubble(body)) ||
      (await this.outbox.lastResort(body));
    if (!landed) return null;
    const id = `prompt-${++this.n}`;
    this.shown.add(id);
    return id;
  }

  /** An edit of message `id`: when it is a prompt, its decision line pushed; undefined when it is none. */
  async decide(id: string, line: string): Promise<boolean | undefined> {
    return this.shown.has(id) ? this.outbox.push(line) : undefined;
  }
}
