/**
 * Groups: listed ones only, by exact JID, each in one of two modes.
 * - mention: the agent answers a message that mentions the linked account or replies to one of
 *   parley's messages; everything else in the group is none of its business.
 * - rules: the agent reads every message, is told the group's rules, and answers an UNPROMPTED
 *   message only if it has something to say: its answer is then exactly {@link SILENCE} to stay
 *   quiet. After it spoke unprompted, the group's cooldown must pass before it may again (a
 *   message that addresses it is always answered).
 * A group is one session for every member, and anything said there is read by all of them, so
 * every group turn is told so (the audience note); the self-chat is where private work belongs.
 */
import type { Clock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { WhatsAppGroupSettings } from "./index.js";

/** The whole answer of an unprompted turn that chose not to speak. */
export const SILENCE = "NO_REPLY";

export function isSilence(text: string): boolean {
  const t = text.trim();
  return t === "" || t === SILENCE || t === `\`${SILENCE}\``;
}

/**
 * The end of an UNPROMPTED group turn (nobody addressed the agent): its answer is held (a streamed
 * prefix cannot be unsent) and goes out only when it is not silence and the group has not gone
 * quiet meanwhile (another unprompted answer landed while this one ran: its cooldown holds).
 */
export class UnpromptedAnswer {
  /** The answer was let out (the renderer tells the group's cooldown once it landed). */
  released = false;

  constructor(
    private readonly maySpeak: (() => boolean) | undefined,
    private readonly logger: Logger,
  ) {}

  release(text: string, files: number): boolean {
    if (isSilence(text) && files === 0) return false;
    if (this.maySpeak && !this.maySpeak()) {
      this.logger.debug("whatsapp: an unprompted answer fell inside the group's cooldown; not sent");
      return false;
    }
    this.released = true;
    return true;
  }
}

/** Told to the agent ahead of a message from a group (never shown, never recorded). */
export function groupNote(group: WhatsAppGroupSettings, unprompted: boolean): string {
  const lines = [
    "[parley: this message comes from a WhatsApp group. Every member reads your answer. Answer from this conversation alone: do not draw on the operator's private notes, memory or files.]",
  ];
  if (group.mode === "rules") {
    if (group.rules) lines.push(`[The group's rules for you: ${group.rules}]`);
    if (unprompted)
      lines.push(
        `[Nobody addressed you. If you have nothing the group needs, answer exactly ${SILENCE} and nothing else.]`,
      );
  }
  return lines.join("\n");
}

/** Told to the agent ahead of a message from someone other than the operator, one to one. */
export const PEER_NOTE =
  "[parley: this message comes from someone the operator admitted to talk to you, not from the operator. Your tools are off for them. Answer from this conversation alone: do not draw on the operator's private notes, memory or files.]";

/** When each group may next hear an unprompted answer. In memory: a restart forgets a cooldown. */
export class GroupCooldowns {
  private readonly until = new Map<string, number>();

  constructor(private readonly clock: Pick<Clock, "now">) {}

  /** An unprompted answer was delivered: quiet for the group's cooldown. */
  spoke(group: string, cooldownSeconds: number): void {
    this.until.set(group, this.clock.now() + cooldownSeconds * 1000);
  }

  cooling(group: string): boolean {
    return (this.until.get(group) ?? 0) > this.clock.now();
  }
}
