/**
 * The approval prompts this process posted, by message id: open until decided. Feishu lets a user
 * quote the message they answer, so a typed `1` quoting a prompt can be told apart: quoting the open
 * prompt answers it; quoting one already decided (or one an earlier process posted, recognised by
 * its marker) answers nothing and gets the neutral receipt, rather than approving whatever newer
 * prompt is open. Bounded: the oldest entries go first.
 */

/** Every prompt says this (the kit's buffered renderer writes it); it is how a prompt from before a restart is recognised. */
export { PROMPT_MARKER } from "../messaging/channel/buffered-renderer.js";

const MAX_PROMPTS = 500;

export class PromptLedger {
  private readonly prompts = new Map<string, boolean>();

  posted(messageId: string): void {
    this.prompts.set(messageId, true);
    if (this.prompts.size > MAX_PROMPTS) {
      const oldest = this.prompts.keys().next().value;
      if (oldest !== undefined) this.prompts.delete(oldest);
    }
  }

  decided(messageId: string): void {
    if (this.prompts.has(messageId)) this.prompts.set(messageId, false);
  }

  /** "open", "decided", or "unknown" (not posted by this process, or long forgotten). */
  state(messageId: string): "open" | "decided" | "unknown" {
    const open = this.prompts.get(messageId);
    return open === undefined ? "unknown" : open ? "open" : "decided";
  }
}
