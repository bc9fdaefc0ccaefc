/**
 * WeComRenderer: the kit's LiveRenderer on WeCom's surface (live-surface.ts): the answer streams
 * into a bubble by replacement, its reasoning in `<think></think>`, the kit's status as its last
 * line, no stall marks; the first frame at the throttle's slot as the turn starts. A bubble near
 * WeCom's 10-minute stream lifetime is rolled on time (bubbles.ts), even while the agent is silent.
 */
import type { Clock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import { silentLogger } from "../messaging/base/logger.js";
import { TurnParts } from "../messaging/channel/delivery.js";
import { LiveRenderer } from "../messaging/channel/live-renderer.js";
import type { AuditSink } from "../messaging/security/audit.js";
import { presentSlice } from "./frame.js";
import type { WeComWidgets } from "./live-surface.js";
import { wecomLiveSurface } from "./live-surface.js";
import type { Outbox, WeComAddress, WeComWire } from "./outbox.js";
import { ThinkBlock } from "./think-block.js";

export interface WeComRendererOptions {
  wire: WeComWire;
  /** The ladder for everything that is not the bubble (prompts, notices, the answer's tail). */
  outbox: Outbox;
  address: WeComAddress;
  clock: Clock;
  logger?: Logger;
  audit?: AuditSink;
  parts?: TurnParts;
  /** Minimum gap between two live frames. */
  throttleMs?: number;
  /** The per-slice transform before a slice is sent (tables, then display redaction). */
  present?: (slice: string) => string;
}

export class WeComRenderer extends LiveRenderer<WeComWidgets> {
  private readonly think: ThinkBlock;
  private readonly bubbles: { stop(): void };

  constructor(o: WeComRendererOptions) {
    const logger = o.logger ?? silentLogger;
    const think = new ThinkBlock();
    // The roll timer asks the renderer for a frame (bound once the renderer exists).
    const due = { frame: () => {} };
    const surface = wecomLiveSurface({
      ...o,
      logger,
      parts: o.parts ?? TurnParts.unrecorded(),
      present: o.present ?? presentSlice,
      think,
      due: () => due.frame(),
    });
    super({
      channel: "wecom",
      surface,
      timers: o.clock,
      now: () => o.clock.now(),
      logger,
      throttleMs: o.throttleMs ?? 1000,
      frameAtStart: true,
      stallMarks: false,
    });
    due.frame = () => this.scheduleEdit();
    this.think = think;
    this.bubbles = surface;
  }

  /** The reasoning goes into the bubble's think block (the kit's own preview is off). */
  override async onThinking(text: string): Promise<void> {
    this.think.add(text);
    await super.onThinking(text);
  }

  override async close(reason?: unknown): Promise<void> {
    await super.close(reason);
    this.bubbles.stop();
  }
}
