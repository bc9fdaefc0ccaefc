/**
 * Context thresholds: after each turn whose agent reported its context usage, a conversation past
 * the soft threshold is told once (per growth cycle) that it is filling up and what to do, and one
 * past the hard threshold is compacted in place, when the agent offers compaction, with the terse
 * receipt. An overflowing window costs the user the conversation, so the reading and the
 * compaction run for every turn, a muted one included; only the text is conditional (a muted
 * conversation is one the user switched off). Layer: messaging.
 */
import type { Logger } from "../base/logger.js";
import { COMPACTION_RECEIPT } from "../turn/frames.js";
import type { AgentControls } from "./agent-controls.js";
import { compactHeldSession, formatPct } from "./agent-controls.js";
import type { ManagedProvider, SessionManager } from "./session-manager.js";

/** Percentages of the agent's context window; 0 turns that threshold off. */
export interface ContextThresholds {
  softPct: number;
  hardPct: number;
}

/**
 * 80 % leaves the user room to finish a thought or run /compact on their own terms; 90 % is where
 * parley compacts unasked, below the point where an agent starts failing or compacting blindly by
 * itself (real agents run their own auto-compaction around 92-95 %).
 */
export const DEFAULT_CONTEXT_THRESHOLDS: ContextThresholds = { softPct: 80, hardPct: 90 };

/** How the conversation is reached after a turn: its reply path and whether it is muted now. */
export interface ContextNoticeSink {
  /** Posts into the conversation; true when it landed. */
  notify(text: string): Promise<boolean>;
  muted(): boolean;
}

export interface ContextWatchOptions {
  thresholds: ContextThresholds;
  sessions: SessionManager<ManagedProvider & AgentControls>;
  logger: Logger;
  /** How this channel spells the commands the notice names. */
  commands: { compact: string; new: string };
}

export class ContextWatch {
  /** Sessions told about the soft threshold this growth cycle (re-armed when usage falls below it). */
  private readonly nudged = new Set<string>();
  /** Sessions whose automatic compaction failed this cycle: not retried after every turn. */
  private readonly failed = new Set<string>();

  constructor(private readonly o: ContextWatchOptions) {}

  /**
   * After a turn, under the session's lock (the compaction must not run beside the next turn).
   * `pct` is the usage the agent last reported; undefined (it never did) does nothing.
   */
  async afterTurn(key: string, pct: number | undefined, sink: ContextNoticeSink): Promise<void> {
    const { softPct, hardPct } = this.o.thresholds;
    if (pct === undefined || !Number.isFinite(pct)) return;
    // Below the soft threshold again (a compaction, manual or automatic): the next rise is news.
    if (softPct <= 0 || pct < softPct) {
      this.nudged.delete(key);
      this.failed.delete(key);
    }
    const provider = await this.o.sessions.existingProvider(key);
    const canCompact = Boolean(provider?.compact && provider.supportsCompaction?.());
    if (hardPct > 0 && pct >= hardPct && canCompact && !this.failed.has(key)) {
      this.o.logger.info("context past the hard threshold; compacting", { session: key, pct });
      const receipt = await compactHeldSession(this.o.sessions, key, { newCommand: this.o.commands.new });
      // Said once: a compaction that keeps failing must not repeat its failure after every turn.
      if (receipt.startsWith(COMPACTION_RECEIPT)) this.nudged.delete(key);
      else this.failed.add(key);
      if (!sink.muted()) await sink.notify(`Context reached ${formatPct(pct)}: ${receipt}`);
      return;
    }
    if (softPct <= 0 || pct < softPct || this.nudged.has(key)) return;
    // The one nudge is spent only when it was read: a muted conversation keeps it for later.
    if (sink.muted()) return;
    if (await sink.notify(this.softNotice(pct, canCompact))) this.nudged.add(key);
  }

  /** A compaction ran (a user's own /compact): the next rise past the soft threshold is news again. */
  release(key: string): void {
    this.nudged.delete(key);
    this.failed.delete(key);
  }

  private softNotice(pct: number, canCompact: boolean): string {
    const { compact, new: fresh } = this.o.commands;
    const used = `📈 This conversation has used ${formatPct(pct)} of the agent's context.`;
    if (!canCompact)
      return `${used} This agent cannot compact it: ${fresh} starts a fresh conversation (the agent forgets this one).`;
    const auto = this.o.thresholds.hardPct > 0 ? ` (I do it myself at ${this.o.thresholds.hardPct}%)` : "";
    return `${used} ${compact} summarizes it${auto}, or ${fresh} starts fresh.`;
  }
}
