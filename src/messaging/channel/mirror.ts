/**
 * Mirror delivery: a conversation linked with /link receives the turns of the session it is linked
 * to (a web chat session followed on Telegram), as one message per turn after the turn ends: the
 * person's words quoted, then the answer. It goes through the one egress, so the linked
 * conversation is re-authorized at every delivery. A turn is mirrored only where it was not already
 * shown, never while the mirror leg is muted, and only when it answered. Layer: messaging.
 */
import type { Logger } from "../base/logger.js";
import type { ChannelLink } from "../session/keys.js";
import { channelNamespaceOf, sameLocation } from "../session/keys.js";
import type { SessionStore } from "../session/session-store.js";
import { oneLine } from "../text/clip.js";
import type { PostTurnStep, TurnResult } from "../turn/pipeline.js";
import type { Egress } from "./egress.js";
import { sessionPrincipal } from "./egress.js";

/** How much of the person's message the mirrored turn quotes (code points). */
const QUOTE_CHARS = 200;

export interface MirrorOptions {
  store: Pick<SessionStore, "getMirrorLink" | "getOriginLink" | "isMuted" | "keys" | "titleOf">;
  egress: Pick<Egress, "send">;
  logger: Logger;
}

/**
 * The person at a location: the peer of the conversation whose own session was born there (an
 * authorized inbound turn recorded it), or "" when none was. A mirrored session's key names the
 * person it came from, not the one it is mirrored to.
 */
export function principalAt(store: MirrorOptions["store"], location: ChannelLink): string {
  for (const key of store.keys()) {
    if (channelNamespaceOf(key) !== location.channelType) continue;
    const origin = store.getOriginLink(key);
    if (origin && sameLocation(origin, location)) {
      const principal = sessionPrincipal(key);
      if (principal) return principal;
    }
  }
  return "";
}

/** The text a mirrored turn carries: where it came from, the words it answered, the answer. */
export function mirrorText(result: TurnResult, title: string | undefined): string {
  const from = title ? `🔁 ${oneLine(title, 60)}` : `🔁 from ${result.channelType}`;
  const asked = oneLine(result.prompt, QUOTE_CHARS);
  return `${from}\n> ${asked || "(files)"}\n\n${result.text.trim()}`;
}

export function mirrorStep(o: MirrorOptions): PostTurnStep {
  return {
    name: "mirror",
    run: async (result) => {
      if (!result.ok || result.text.trim() === "") return;
      const key = result.sessionKey;
      const mirror = o.store.getMirrorLink(key);
      if (!mirror) return;
      // Already shown there: a conversation never gets its own turn twice.
      if (result.renderedAt && sameLocation(mirror, result.renderedAt)) return;
      if (o.store.isMuted(key, "mirror")) return;
      const principal = principalAt(o.store, mirror);
      const outcome = await o.egress.send({
        purpose: "mirror",
        destination: { kind: "link", link: mirror, sessionKey: key, principal },
        text: mirrorText(result, o.store.titleOf(key)?.title),
      });
      if (outcome.status !== "sent")
        o.logger.info("mirror: a turn was not delivered to its linked conversation", {
          session: key,
          status: outcome.status,
        });
    },
  };
}
