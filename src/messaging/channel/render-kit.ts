/**
 * The render kit: what every channel's renderer shows the same way, written once. The turn-status
 * line, the no-answer and fresh-session notices, the steer chip, the approval outcome labels and
 * typed-reply hint, the edit throttle and the serial operation queue (the live status line and the
 * paragraph rule around tool calls: live-status.ts). Sealing stays each channel's own (platforms differ
 * in what a message can be); these are the parts that must not differ.
 */
import type { ApprovalVerdict } from "../approval/approvals.js";
import type { Timers } from "../base/clock.js";
import type { Logger } from "../base/logger.js";
import { oneLine } from "../text/clip.js";
import type { SessionResumeCause } from "../turn/provider-events.js";
import type { PromptOption } from "../turn/renderer.js";
import { formatElapsed, formatTurnStatus } from "./phase-ladder.js";

/**
 * "Finished in 3s · 🟢 ctx 12%", prefixed by how the turn ended when it did not end normally. A
 * failed turn says why when the reason is known (`error`, already one redacted line), unless the
 * caller shows the reason elsewhere (the no-answer notice carries it: `reasonShown`).
 */
export function turnStatusLine(
  stopReason: string,
  status: { elapsedMs: number; contextUsagePct?: number; error?: string; reasonShown?: boolean },
): string {
  const line = formatTurnStatus(status);
  if (stopReason === "cancelled") return `🛑 Stopped · ${line}`;
  if (stopReason === "error") {
    if (status.error && !status.reasonShown)
      return `⚠️ Failed after ${formatElapsed(status.elapsedMs)}: ${status.error}`;
    return `⚠️ ${line}`;
  }
  return line;
}

/**
 * The footer's context figure, read as the turn ends: the session's own, else what the last
 * compaction reported. A source that fails gives no figure (no chip rather than a reassuring green
 * one), and the failure is logged.
 */
export async function contextUsageAtEnd(
  source: (() => number | undefined | Promise<number | undefined>) | undefined,
  fallback: number | undefined,
  logger: Pick<Logger, "debug">,
): Promise<number | undefined> {
  try {
    return (await source?.()) ?? fallback;
  } catch (error) {
    logger.debug("context usage unavailable", { error: String(error) });
    return undefined;
  }
}

/**
 * What a turn that produced nothing leaves behind: never a spinner, never an empty bubble. A failed
 * turn says why (`error`: one redacted line) and points at the way out (`newCommand` as the channel
 * spells it).
 */
export function noAnswerNotice(failed: boolean, newCommand: string, error?: string): string {
  if (!failed) return "(no answer)";
  const way = `Try again, or ${newCommand} to start fresh.`;
  if (!error) return `⚠️ The agent did not answer. ${way}`;
  return `⚠️ ${error.charAt(0).toUpperCase()}${error.slice(1)}\n${way}`;
}

/** Why the conversation's agent session had been closed, as the fresh-session notice says it. */
const CLOSED_BECAUSE: Readonly<Record<SessionResumeCause, string>> = {
  idle: "it had been idle",
  capacity: "its place was needed for another conversation",
  agent_exited: "the agent stopped",
  post_cancel: "it had to be reopened after a stop",
  replaced: "the agent was restarted",
};

/**
 * The agent session was reopened without its history: the user must know that what they said
 * before is gone, or the next answer reads as the agent having forgotten on a whim.
 */
export function freshSessionNotice(cause: SessionResumeCause, reason: string, replayed = 0): string {
  const why = CLOSED_BECAUSE[cause] ?? "it had been closed";
  const detail = reason ? ` (${oneLine(reason, 200)})` : "";
  // The replay is partial context: say how much came along rather than "gone" or "restored".
  const lost =
    replayed > 0
      ? `it was given this conversation's last ${replayed === 1 ? "message" : `${replayed} messages`}; anything earlier is gone.`
      : "the earlier context of this conversation is gone.";
  return `⚠️ I had to start a fresh agent session because ${why}${detail}: ${lost}`;
}

/** Quoted user words opening the continuation after a steer; one line, bounded. */
export const STEER_CHIP_CHARS = 200;
export function steerChip(words: string): string {
  const line = oneLine(words, STEER_CHIP_CHARS);
  return line ? `> ↪️ ${line}\n\n` : "";
}

/** Reported on the prompt itself once it is decided: a one-time approval and "always" differ. */
export type ApprovalOutcome = ApprovalVerdict | "timeout" | "abandoned";
export function approvalOutcomeLabel(outcome: ApprovalOutcome): string {
  switch (outcome) {
    case "approve":
      return "✅ Approved (this once)";
    case "approve_always":
      // The agent's own "always allow this": it will not ask again for this tool.
      return "✅ Always allowed";
    case "deny":
      return "❌ Denied";
    case "timeout":
      return "⌛ No answer in time: denied";
    case "abandoned":
      return "⏹️ The turn ended before this was answered";
  }
}

/**
 * The typed-reply line under a prompt, naming exactly the choices the user can see and read the way
 * the prompt is answered: "Or reply …" beside buttons, "Reply …" without them. `shown` is what the
 * buttons offer (a channel may show fewer buttons than the agent's options), or the prompt's options
 * when it has no buttons: a hint that offers "3" beside two buttons, or omits it beside three,
 * reads as a different question.
 */
export function typedReplyHint(
  shown: readonly Pick<PromptOption, "verdict">[],
  withButtons: boolean,
): string {
  const verdicts = new Set(shown.map((o) => o.verdict));
  const parts: string[] = [];
  if (verdicts.has("approve")) parts.push("1 to approve");
  if (verdicts.has("deny") || verdicts.size === 0) parts.push("2 to deny");
  if (verdicts.has("approve_always")) parts.push("3 to always allow");
  // "1 to approve or 2 to deny"; three read as a list: "1 to approve, 2 to deny, 3 to always allow".
  const list = parts.length === 2 ? `${parts[0]} or ${parts[1]}` : parts.join(", ");
  return `${withButtons ? "Or reply" : "Reply"} ${list}.`;
}

/**
 * At most one pending edit, never closer than `gapMs` after the previous one: platforms rate-limit
 * edits per message and per channel, and a burst of chunks must become one frame, not fifty.
 */
export class EditThrottle {
  private pending: unknown = null;
  private lastAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly timers: Timers,
    private readonly now: () => number,
    private readonly gapMs: number,
    private readonly flush: () => void,
  ) {}

  get scheduled(): boolean {
    return this.pending !== null;
  }

  /** Ask for a frame; the flush runs once the gap since the last one has passed. */
  schedule(): void {
    if (this.pending !== null) return;
    const wait = Math.max(0, this.lastAt + this.gapMs - this.now());
    this.pending = this.timers.setTimeout(() => {
      this.pending = null;
      this.mark();
      this.flush();
    }, wait);
  }

  /** A frame is going out now by another path (a seal): the gap restarts from here. */
  mark(): void {
    this.lastAt = this.now();
  }

  cancel(): void {
    if (this.pending !== null) this.timers.clearTimeout(this.pending);
    this.pending = null;
  }
}

/**
 * One queue of platform calls per renderer, so an edit decided before a seal can never land after
 * it. A failed step is reported (the renderer marks deliveryFailed) and the queue keeps going.
 */
export class SerialQueue {
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly onError: (error: unknown) => void) {}

  run(op: () => Promise<void>): Promise<void> {
    const next = this.tail.then(op);
    this.tail = next.catch((error: unknown) => this.onError(error));
    return this.tail;
  }

  /** Resolves when everything queued so far has run. */
  idle(): Promise<void> {
    return this.tail;
  }
}
