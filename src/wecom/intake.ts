/**
 * WeCom callbacks into the hub. Each callback runs in its own task (the socket must keep answering
 * pings through a long turn): the transport's audited gate (bot messages dropped, then deny by
 * default, group chats refused), then the journal, deduped by msgid AFTER authorization (a stranger
 * can never occupy the window; a frame without a msgid is never suppressed). WeCom has nothing to
 * acknowledge and delivers each callback once: from the moment the journal has it, the journal is
 * the message's only copy. Until the channel opens (after what a restart left unfinished was
 * routed), callbacks wait in arrival order. Every callback that does not become a message (arriving
 * while stopping, beyond the waiting bound, a duplicate msgid) is counted with its reason.
 */
import type { Logger } from "../messaging/base/logger.js";
import type { ConversationHub } from "../messaging/channel/hub.js";
import type { InboundDrops } from "../messaging/channel/inbound-drops.js";
import type { WeComAddress } from "./outbox.js";
import type { WeComExtra } from "./surface.js";
import type { WeComTransport } from "./transport.js";
import type { CallbackFrame } from "./wire.js";

/** Callbacks held while the channel is still resuming; beyond this the oldest is dropped (and counted). */
const MAX_WAITING = 1000;

export class WeComIntake {
  private open = false;
  private closed = false;
  private readonly waiting: CallbackFrame[] = [];
  private readonly tasks = new Set<Promise<void>>();

  constructor(
    private readonly transport: WeComTransport,
    private readonly hub: ConversationHub<WeComAddress, WeComExtra>,
    private readonly logger: Logger,
    private readonly drops: InboundDrops,
  ) {}

  /** A callback as it arrives: handled in a task of its own, never on the socket's path. */
  onCallback(frame: CallbackFrame): void {
    if (this.closed) {
      // Nothing redelivers it: counted, so a restart's lost message is visible in doctor.
      this.drop(frame, "stopping");
      return;
    }
    if (!this.open) {
      const oldest = this.waiting.length >= MAX_WAITING ? this.waiting.shift() : undefined;
      if (oldest) this.drop(oldest, "overflow");
      this.waiting.push(frame);
      return;
    }
    const task = this.handle(frame).catch((error: unknown) =>
      this.logger.error("wecom: a callback could not be taken", { error: String(error) }),
    );
    this.tasks.add(task);
    void task.finally(() => this.tasks.delete(task));
  }

  /** Start handling, beginning with what arrived while the channel resumed. */
  start(): void {
    this.open = true;
    for (const frame of this.waiting.splice(0)) this.onCallback(frame);
  }

  /** Take no more callbacks; resolves once those taken are journaled and routed. */
  async stop(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.tasks]);
  }

  private drop(frame: CallbackFrame, reason: string): void {
    const user = frame.body.from?.userid;
    this.drops.record({
      reason,
      ...(typeof user === "string" && user ? { user } : {}),
      fields: { ...(typeof frame.body.msgid === "string" ? { msgid: frame.body.msgid } : {}) },
    });
  }

  private async handle(frame: CallbackFrame): Promise<void> {
    const outcome = await this.transport.receive(frame);
    if (outcome.status !== "dispatched") return;
    const m = outcome.message;
    const address: WeComAddress = {
      userid: m.userId,
      reqId: frame.headers.req_id,
      ...(typeof frame.body.response_url === "string" && frame.body.response_url
        ? { responseUrl: frame.body.response_url }
        : {}),
    };
    await this.hub.receive(
      {
        address,
        userId: m.userId,
        text: m.text,
        attachments: m.attachments,
        isMention: true,
        ...(m.messageId !== undefined ? { messageId: m.messageId } : {}),
      },
      // No msgid is no evidence of a duplicate: such a frame is never suppressed.
      { platformId: m.messageId !== undefined ? `msgid:${m.messageId}` : null },
      // A msgid the journal already holds is counted there ("redelivered"), not again here.
    );
  }
}
