/**
 * Feishu's intake: each `im.message.receive_v1` from the long connection through the transport's
 * audited gates into the hub, which journals it (deduplicated by `message_id`, the last gate) before
 * the handler returns, so the SDK acknowledges only what the journal holds; the turn runs after. A
 * journal that cannot take the message makes the handler throw: the SDK answers "failed" and Feishu
 * delivers it again. An event without a message_id is dispatched and never deduplicated (no id is
 * no evidence of a repeat). A redelivery the journal drops is counted (`duplicate`).
 *
 * A lone 1/2/3 that quotes an approval prompt no longer open (decided, or posted before a restart)
 * is marked stale: it gets the neutral receipt instead of approving whatever newer prompt is open.
 */

import { parseTypedVerdict } from "../messaging/approval/approvals.js";
import type { ChannelContext } from "../messaging/channel/contract.js";
import type { ConversationHub } from "../messaging/channel/hub.js";
import type { IncomingMessage } from "../messaging/channel/surface.js";
import type { FeishuRest } from "./client.js";
import { PROMPT_MARKER, type PromptLedger } from "./prompts.js";
import type { FeishuAddress, FeishuExtra } from "./surface.js";
import type { FeishuTransport } from "./transport.js";

export interface FeishuIntakeOptions {
  prompts: PromptLedger;
  /** The app's id: a bot message Feishu reports is sent by it. */
  appId: string;
  rest: FeishuRest;
}

export class FeishuIntake {
  constructor(
    private readonly transport: FeishuTransport,
    private readonly hub: ConversationHub<FeishuAddress, FeishuExtra>,
    private readonly ctx: Pick<ChannelContext, "logger" | "drops">,
    private readonly o: FeishuIntakeOptions,
  ) {}

  /**
   * The long connection's handler: resolves once the message is journaled (or needed no journal: a
   * refusal, a drop), rejects only when the journal could not take it.
   */
  async onEvent(raw: unknown): Promise<void> {
    const outcome = await this.transport.receive(raw);
    if (outcome.status !== "dispatched") return;
    const message = outcome.message;
    // Always there for a dispatched message (normalize stored it); counted all the same, because
    // no early return of an intake path may drop a message uncounted.
    const read = this.transport.readOf(message);
    if (!read) {
      this.ctx.drops.record({
        reason: "unparseable",
        user: message.userId,
        conversation: message.conversationId,
      });
      return;
    }
    const m = read.event.message;
    const address: FeishuAddress = {
      chatType: m.chat_type === "group" ? "group" : "p2p",
      route: message.conversationId,
      chatId: m.chat_id,
      ...(m.message_id ? { replyTo: m.message_id } : {}),
    };
    if (m.message_id) this.transport.noteAnchor(message.conversationId, m.message_id);
    const incoming: IncomingMessage<FeishuAddress, FeishuExtra> = {
      address,
      userId: message.userId,
      text: message.text,
      attachments: message.attachments,
      isMention: message.isMention,
      ...(message.messageId ? { messageId: message.messageId } : {}),
      ...((await this.quotesStalePrompt(message.text, m.parent_id)) ? { staleVerdict: true } : {}),
    };
    // The message id is what Feishu redelivers under: the dedupe key.
    const source = { platformId: m.message_id ? `message:${m.message_id}` : null };
    // Before the journal, a failure rejects (Feishu delivers it again); after it, the hub logs it.
    // A redelivery the journal already holds is counted there ("redelivered"), not again here.
    await this.hub.receiveJournaled(incoming, source);
  }

  /** A lone verdict quoting a prompt that is not open now (see the module note). */
  private async quotesStalePrompt(text: string, parentId: string | undefined): Promise<boolean> {
    if (!parentId || parseTypedVerdict(text) === null) return false;
    const state = this.o.prompts.state(parentId);
    if (state !== "unknown") return state === "decided";
    try {
      // Not posted by this process: a prompt from before a restart is the app's and says what it is.
      const quoted = await this.o.rest.getMessage(parentId);
      return (
        quoted !== null &&
        quoted.senderType === "app" &&
        quoted.senderId === this.o.appId &&
        quoted.content.includes(PROMPT_MARKER)
      );
    } catch (error) {
      this.ctx.logger.warn("feishu: could not read the quoted message", { error: String(error) });
      return false;
    }
  }
}
