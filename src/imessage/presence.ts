/**
 * Typing indicators and read receipts: the only progress signals iMessage has (nothing sent can be
 * edited). Each is used only when `imsg status --json` lists its method in `rpc_methods` and reports
 * `advanced_features` (both go through the IMCore bridge, steipete/imsg
 * Sources/imsg/Commands/StatusCommand.swift), and is switched off for good at its first rejection,
 * quietly: a rejection means "not on this install", not "try again".
 */
import type { Logger } from "../messaging/base/logger.js";
import type { ImsgCalls } from "./transport.js";
import type { ImsgStatus } from "./wire.js";

type Signal = "typing" | "read";

export class Presence {
  private methods = new Set<string>();
  private bridge = false;
  private readonly off = new Set<Signal>();
  /** One request of a kind at a time: a refresh never piles onto one imsg has not answered yet. */
  private readonly inFlight = new Set<Signal>();

  constructor(
    private readonly imsg: ImsgCalls,
    private readonly logger: Logger,
  ) {}

  /** What the latest status report said. */
  setStatus(status: ImsgStatus): void {
    this.methods = new Set(status.methods);
    this.bridge = status.advancedFeatures;
  }

  available(signal: Signal): boolean {
    // Listed is not usable: imsg lists every rpc method always; the bridge decides if these work.
    return this.methods.has(signal) && this.bridge && !this.off.has(signal);
  }

  /** Show "typing…" to `handle` (it lapses on its own; refresh it while the turn runs). */
  typing(handle: string): Promise<void> {
    return this.signal("typing", { to: handle, typing: true });
  }

  /** Mark what `handle` sent as read. */
  read(handle: string): Promise<void> {
    return this.signal("read", { to: handle });
  }

  private async signal(signal: Signal, params: Record<string, unknown>): Promise<void> {
    if (!this.available(signal) || this.inFlight.has(signal)) return;
    this.inFlight.add(signal);
    try {
      await this.imsg.request(signal, params);
    } catch (error) {
      this.off.add(signal);
      this.logger.info(`imessage: ${signal} is off for this run (imsg refused it)`, { error: String(error) });
    } finally {
      this.inFlight.delete(signal);
    }
  }
}
