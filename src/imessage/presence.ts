/**
 * Typing indicators and read receipts: the only progress signals iMessage has (nothing sent can be
 * edited). Each is used only when the status snapshot lists its method (the surface usable now) and
 * is switched off for good at its first rejection, quietly: their parameters are not part of imsg's
 * documented surface, so a rejection means "not on this install", not "try again".
 */
import type { Logger } from "../messaging/base/logger.js";
import type { ImsgCalls } from "./transport.js";

type Signal = "typing" | "read";

export class Presence {
  private methods = new Set<string>();
  private readonly off = new Set<Signal>();
  /** One request of a kind at a time: a refresh never piles onto one imsg has not answered yet. */
  private readonly inFlight = new Set<Signal>();

  constructor(
    private readonly imsg: ImsgCalls,
    private readonly logger: Logger,
  ) {}

  /** The methods the latest status snapshot listed. */
  setMethods(methods: readonly string[]): void {
    this.methods = new Set(methods);
  }

  available(signal: Signal): boolean {
    return this.methods.has(signal) && !this.off.has(signal);
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
