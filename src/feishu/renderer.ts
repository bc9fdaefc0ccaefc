/**
 * FeishuRenderer: the kit's buffered renderer, as the spec's Feishu is (no streaming, no edits).
 * The whole answer is sent when the turn is done, as replies to the message that started it; what
 * the user must know while they wait comes as its own reply; an approval prompt is answered by
 * typing 1 or 2, and each prompt posted is kept in the PromptLedger, so a typed verdict quoting a
 * decided one is told apart. Every body takes the transport's one path (format.ts): cards for
 * tables, the display-form floor, the split, the byte cap.
 */
import type { Logger } from "../messaging/base/logger.js";
import { BufferedRenderer } from "../messaging/channel/buffered-renderer.js";
import type { PromptLedger } from "./prompts.js";
import { FEISHU_CAPABILITIES } from "./transport.js";

export interface FeishuRendererOptions {
  /** Markdown into the conversation as replies (split, display-safe); the ids, in order. Throws on failure. */
  post(markdown: string): Promise<string[]>;
  prompts: PromptLedger;
  now: () => number;
  logger: Logger;
  /** The commands as this channel spells them (in notices and the status line). */
  commands: { new: string; stop: string };
}

export class FeishuRenderer extends BufferedRenderer {
  constructor(o: FeishuRendererOptions) {
    super({ capabilities: FEISHU_CAPABILITIES, channel: "feishu", ...o });
  }
}
