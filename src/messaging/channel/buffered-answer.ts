/**
 * The shared half of a buffered renderer (one final answer, nothing shown live: Feishu, iMessage).
 * Such a channel cannot show a live status line, so what the user must know while waiting is a
 * message of its own, and each is a message that can never be taken back: the wait for a free
 * agent is said once, a long silence when it starts and each time it doubles. The final message is
 * the answer (or the no-answer notice), any prompt the turn abandoned, and the turn-status line.
 */
import type { AgentStatus, TurnEnding } from "../turn/renderer.js";
import { LiveStatus } from "./live-status.js";
import { approvalOutcomeLabel, noAnswerNotice, turnStatusLine } from "./render-kit.js";

export class QuietNotices {
  /** The longest silence already reported in the current quiet stretch (0: none yet). */
  private silenceSaid = 0;
  private waitingSaid = false;

  constructor(private readonly stopCommand: string) {}

  /** The agent did something (text, thinking, a tool): a silence after it is a new one. */
  activity(): void {
    this.silenceSaid = 0;
  }

  /** The notice to post now for a waiting or silent status, or null when it would only repeat. */
  notice(status: Exclude<AgentStatus, { type: "fresh_session" }>): string | null {
    if (status.type === "waiting") {
      // Said once: the place in line changes, and a message per step would be noise.
      if (this.waitingSaid) return null;
      this.waitingSaid = true;
    } else {
      if (this.silenceSaid > 0 && status.seconds < this.silenceSaid * 2) return null;
      this.silenceSaid = Math.max(1, status.seconds);
    }
    const line = new LiveStatus(this.stopCommand);
    line.agent(status);
    return line.line;
  }
}

/** `chip` appended to an answer body, a paragraph below what is there. */
export function appendChip(body: string, chip: string): string {
  const gap = !body.trim() || body.endsWith("\n\n") ? "" : body.endsWith("\n") ? "\n" : "\n\n";
  return body + gap + chip;
}

export interface FinalAnswer {
  /** What is left of the answer (options already rendered). */
  body: string;
  /** Part of the answer already went out (sealed above a prompt): the turn answered something. */
  answered: boolean;
  stopReason: string;
  ending: TurnEnding;
  elapsedMs: number;
  contextUsagePct: number | undefined;
  /** The channel's spelling of /new, for the no-answer notice. */
  newCommand: string;
  /** Titles of prompts still open when the turn ended: each says it was abandoned. */
  abandoned: readonly string[];
}

/** The turn's last message: the answer or the no-answer notice, abandoned prompts, the status line. */
export function finalAnswerText(a: FinalAnswer): string {
  const silent = !a.answered && a.body.trim() === "";
  const status = turnStatusLine(a.stopReason, {
    elapsedMs: a.elapsedMs,
    ...(a.contextUsagePct === undefined ? {} : { contextUsagePct: a.contextUsagePct }),
    ...(a.ending.error ? { error: a.ending.error } : {}),
    reasonShown: silent,
  });
  const text = silent ? noAnswerNotice(a.stopReason === "error", a.newCommand, a.ending.error) : a.body;
  const abandoned = a.abandoned.map((title) => `🔐 ${title}: ${approvalOutcomeLabel("abandoned")}`);
  return [text.trimEnd(), ...abandoned, status].filter(Boolean).join("\n\n");
}
