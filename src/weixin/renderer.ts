/**
 * WeixinRenderer: the kit's buffered renderer (iLink neither streams nor edits): the whole answer
 * when the turn is done, split by the transport's one path into ≤ 4,000 code point messages, choices
 * as a numbered list, each approval prompt its own message answered by typing 1 or 2, its outcome
 * (or its timeout) spoken under it. WeChat shows "typing…" while the turn runs.
 */
import type { Logger } from "../messaging/base/logger.js";
import { BufferedRenderer } from "../messaging/channel/buffered-renderer.js";
import { WEIXIN_CAPABILITIES } from "./transport.js";

export interface WeixinRendererOptions {
  /** Markdown to the peer (split, display-safe); the client_ids, in order. Throws on failure. */
  post(markdown: string): Promise<string[]>;
  /** "typing…" on while the turn runs, off at its end. */
  typing?: { start(): void; stop(): void };
  now: () => number;
  logger: Logger;
  commands: { new: string; stop: string };
}

export class WeixinRenderer extends BufferedRenderer {
  constructor(o: WeixinRendererOptions) {
    super({
      capabilities: WEIXIN_CAPABILITIES,
      channel: "weixin",
      post: o.post,
      ...(o.typing ? { busy: o.typing } : {}),
      now: o.now,
      logger: o.logger,
      commands: o.commands,
    });
  }
}
