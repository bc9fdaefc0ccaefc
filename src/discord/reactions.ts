/**
 * The phase-reaction ladder on the user's message, as Discord carries it: one Unicode emoji per
 * phase added and removed by the bot (the kit's LiveDecor decides when), ⏳/🐢 for a stall.
 */
import type { LiveReactions } from "../messaging/channel/live-decor.js";
import type { LadderTimings, PhaseEmojis, StallEmojis } from "../messaging/channel/phase-ladder.js";
import { ensureOk } from "./client.js";
import type { DiscordRest } from "./transport.js";

/** Unicode, one code point each: the reaction route carries the emoji as a path segment. */
export const DISCORD_PHASE_EMOJIS: PhaseEmojis = {
  queued: "👀",
  thinking: "🤔",
  coding: "💻",
  browsing: "🌐",
  tool: "🔧",
  done: "✅",
  error: "😱",
};
export const DISCORD_STALL_EMOJIS: StallEmojis = { soft: "⏳", hard: "🐢" };

export function discordReactions(
  rest: Pick<DiscordRest, "addReaction" | "removeReaction">,
  channelId: string,
  messageId: string,
  timings?: Partial<LadderTimings>,
): LiveReactions {
  return {
    sink: {
      set: async (emoji) => ensureOk("reaction", await rest.addReaction(channelId, messageId, emoji)),
      clear: async (emoji) => ensureOk("reaction", await rest.removeReaction(channelId, messageId, emoji)),
    },
    emojis: DISCORD_PHASE_EMOJIS,
    stall: DISCORD_STALL_EMOJIS,
    ...(timings ? { timings } : {}),
  };
}
