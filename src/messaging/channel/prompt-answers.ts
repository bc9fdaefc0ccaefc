/**
 * How a conversation's answers reach its open approval prompts (the hub's, hub.ts): a press on a
 * widget, a typed 1/2/3 (the floor every channel has), and the prompt on screen marked once decided
 * (a decided prompt must never look live). A prompt is found under whichever of the conversation's
 * keys opened it (its own, or a resumed session's) and the nonce alone decides. It owns no state:
 * the prompts are ChannelApprovals', the renderers the turn's or an agent host's.
 */
import type { ApprovalVerdict, ChannelApprovals } from "../approval/approvals.js";
import { parseTypedVerdict, RECEIPT_EXPIRED } from "../approval/approvals.js";
import type { Logger } from "../base/logger.js";
import type { SessionBinder } from "../session/resume.js";
import type { Renderer } from "../turn/renderer.js";
import type { ConversationKeys } from "./conversation-keys.js";
import type { ApprovalOutcome } from "./press-forwarding.js";
import { approvalOutcomeLabel } from "./render-kit.js";
import type { ChannelSurface } from "./surface.js";

/** A press on an approval widget. */
export interface PromptPress {
  requestId: string;
  nonce: string | null | undefined;
  verdict: ApprovalVerdict;
  /** What the prompt shows once decided, when the press did more than the verdict says. */
  label?: string;
}

export interface PromptAnswersOptions<A> {
  channel: string;
  approvals: ChannelApprovals;
  keys: Pick<ConversationKeys<A>, "keyOf">;
  surface: Pick<ChannelSurface<A, unknown>, "conversation">;
  binder: SessionBinder | undefined;
  logger: Logger;
  /** The renderer showing a prompt: an agent host's by its id, else the session's running turn. */
  rendererOf(key: string, requestId: string): Renderer | undefined;
  /** Several gateways: a press for a prompt not open here, to the gateway serving it (undefined: judge here). */
  forward: ((address: A, press: PromptPress) => Promise<ApprovalOutcome | undefined>) | undefined;
}

export class PromptAnswers<A> {
  constructor(private readonly o: PromptAnswersOptions<A>) {}

  /**
   * A press: the outcome label when it landed, or the neutral expiry receipt. With several gateways,
   * a prompt that is not open here is judged by the gateway serving the conversation, if that is
   * another one.
   */
  async press(address: A, p: PromptPress): Promise<ApprovalOutcome> {
    const openHere = this.conversationKeys(address).some((k) =>
      this.o.approvals.registry.isOpen(k, p.requestId),
    );
    if (!openHere && this.o.forward) {
      const forwarded = await this.o.forward(address, p);
      if (forwarded) return forwarded;
    }
    return this.pressHere(address, p);
  }

  /** `press` judged on this gateway only (a forwarded press is never forwarded again). */
  async pressHere(address: A, p: PromptPress): Promise<ApprovalOutcome> {
    const { approvals } = this.o;
    const keys = this.conversationKeys(address);
    const key = keys.find((k) => approvals.registry.isOpen(k, p.requestId)) ?? keys[0] ?? "";
    // Taken before the press: the verdict can end the turn (and retire its renderer) at once.
    const renderer = this.o.rendererOf(key, p.requestId);
    if (approvals.widget.press(key, p.requestId, p.nonce, p.verdict) === RECEIPT_EXPIRED)
      return { ok: false, text: RECEIPT_EXPIRED };
    const label = p.label ?? approvalOutcomeLabel(p.verdict);
    await renderer?.markApproval?.(p.requestId, label);
    return { ok: true, label };
  }

  /** Whether a press with this nonce would land on an open prompt of this conversation, unsettled. */
  promptOpen(address: A, p: { requestId: string; nonce: string | null | undefined }): boolean {
    return this.conversationKeys(address).some((k) =>
      this.o.approvals.registry.matches(k, p.requestId, p.nonce),
    );
  }

  /** A message that is entirely 1/2/3 answers the open prompt (typed replies are the floor). */
  async typedVerdict(address: A, text: string, nativeKey: string): Promise<boolean> {
    const { approvals } = this.o;
    if (parseTypedVerdict(text) === null || !approvals.registry.anyOpen) return false;
    const keys = this.o.binder ? this.conversationKeys(address) : [nativeKey];
    for (const key of keys) {
      if (!approvals.registry.hasOpen(key)) continue;
      const answer = approvals.typed.handleReply(key, text);
      if (answer === null || answer === RECEIPT_EXPIRED) continue;
      // The prompt on screen is closed too: a decided prompt must never look live.
      await this.markApproval(key, answer.requestId, answer.verdict);
      return true;
    }
    return false;
  }

  /** Show a prompt's outcome on it; a prompt that cannot be edited is logged, never thrown. */
  async markApproval(
    key: string,
    requestId: string,
    outcome: Parameters<typeof approvalOutcomeLabel>[0],
  ): Promise<void> {
    try {
      await this.o.rendererOf(key, requestId)?.markApproval?.(requestId, approvalOutcomeLabel(outcome));
    } catch (error) {
      this.o.logger.warn(`${this.o.channel}: marking the approval prompt failed`, { error: String(error) });
    }
  }

  /** Every key a prompt of this conversation may be open under: its own, then any attached one. */
  private conversationKeys(address: A): string[] {
    const own = this.o.keys.keyOf(address);
    if (!this.o.binder) return [own];
    const attached = this.o.binder.boundKeys(this.o.surface.conversation(address).link);
    return [own, ...attached.filter((k) => k !== own)];
  }
}
