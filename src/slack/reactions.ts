/**
 * Slack's reactions: the phase ladder's shortcodes on the user's message (Slack's reaction API
 * takes names, not emoji), and the clean-up of a resumed turn's leftovers.
 */
import type { LiveReactions } from "../messaging/channel/live-decor.js";
import type { LadderTimings, PhaseEmojis, StallEmojis } from "../messaging/channel/phase-ladder.js";
import type { LiveTarget } from "./live.js";

export const SLACK_PHASE_EMOJIS: PhaseEmojis = {
  queued: "eyes",
  thinking: "thinking_face",
  coding: "computer",
  browsing: "globe_with_meridians",
  tool: "wrench",
  done: "white_check_mark",
  error: "x",
};
export const SLACK_STALL_EMOJIS: StallEmojis = { soft: "hourglass_flowing_sand", hard: "turtle" };

/** The ladder on `messageTs` (absent: nothing to decorate). A refused reaction throws (the ladder logs it). */
export function slackReactions(
  t: Pick<LiveTarget, "api" | "channel">,
  messageTs: string | undefined,
  timings: Partial<LadderTimings> | undefined,
): LiveReactions | undefined {
  if (!messageTs) return undefined;
  const check = (res: { ok: boolean }) => {
    if (!res.ok) throw new Error("reaction refused");
  };
  return {
    sink: {
      set: async (name) => check(await t.api.addReaction(t.channel, messageTs, name)),
      clear: async (name) => check(await t.api.removeReaction(t.channel, messageTs, name)),
    },
    emojis: SLACK_PHASE_EMOJIS,
    stall: SLACK_STALL_EMOJIS,
    ...(timings ? { timings } : {}),
  };
}

/** Delete what an earlier run of this turn posted beyond this run's messages; a failure is only logged. */
export async function deleteLeftovers(
  t: Pick<LiveTarget, "api" | "channel" | "parts" | "logger">,
): Promise<void> {
  for (const ts of t.parts.leftovers()) {
    const res = await t.api.deleteMessage(t.channel, ts);
    if (!res.ok) t.logger.debug("slack leftover delete failed", { error: res.error });
  }
}
