/**
 * IMessageRenderer: the kit's buffered renderer (only the final answer, no placeholder: "Thinking…"
 * could never be rewritten, since nothing sent can be edited). What the user must know while
 * waiting comes as a message of its own, an approval prompt is answered by typing 1 or 2, and its
 * outcome is a new message. The typing indicator is the progress signal, refreshed while the turn
 * runs. Every body goes through the surface's one path: flattened, screened on the flat form, split
 * (plaintext.ts, chunks.ts).
 */
import type { Clock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import { BufferedRenderer } from "../messaging/channel/buffered-renderer.js";
import { IMESSAGE_CAPABILITIES } from "./transport.js";

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

export class IMessageRenderer extends BufferedRenderer {
  constructor(o: IMessageRendererOptions) {
    const typing = new TypingRefresh(o);
    super({
      capabilities: IMESSAGE_CAPABILITIES,
      channel: "imessage",
      // A send result carries no id (returnsMessageId false): no prompt is told apart by id.
      post: async (markdown) => {
        await o.post(markdown);
        return [];
      },
      busy: typing,
      now: () => o.clock.now(),
      logger: o.logger,
      commands: o.commands,
    });
  }
}

/** "typing…" signalled now and every refresh interval until stopped. */
class TypingRefresh {
  private timer: unknown = null;
  private stopped = false;

  constructor(private readonly o: IMessageRendererOptions) {}

  start(): void {
    if (this.stopped || this.timer !== null) return;
    void this.o.typing();
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = null;
      this.start();
    }, this.o.typingEveryMs ?? TYPING_REFRESH_MS);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.o.clock.clearTimeout(this.timer);
    this.timer = null;
  }
}
