/**
 * Discord as a LiveSurface: Markdown as Discord renders it (every string through `discordSafe`,
 * the display-form floor), 2000 characters a message from an 1800 source cap (the headroom is the
 * chip's and the footer's), -# subtext for the quiet line and the reasoning preview, action-row
 * buttons for choices and prompts (Approve and Deny), "typing…" renewed inside its ~10 s, the phase
 * ladder on the user's message, and local images as attachments of the segment's last message.
 * Every message is one of the turn's parts, created with its nonce (parts.ts).
 */
import type { Logger } from "../messaging/base/logger.js";
import type { TurnParts } from "../messaging/channel/delivery.js";
import type { LiveMessage, LiveSurface } from "../messaging/channel/live-surface.js";
import type { LadderTimings } from "../messaging/channel/phase-ladder.js";
import { hideLocalRefs } from "../messaging/files/outbound-files.js";
import type { AuditSink } from "../messaging/security/audit.js";
import { codePointLength } from "../messaging/security/redact.js";
import { clip } from "../messaging/text/clip.js";
import type { PromptOption } from "../messaging/turn/renderer.js";
import { DiscordCallError, ensureOk } from "./client.js";
import { DISCORD_MAX_TEXT, discordSafe, fitPlatformCap, SEGMENT_LIMIT, subtext, withLine } from "./format.js";
import { createPart } from "./parts.js";
import type { ActionRow, MessageBody } from "./payload.js";
import { discordReactions } from "./reactions.js";
import type { DiscordRest } from "./transport.js";
import { DISCORD_CAPABILITIES } from "./transport.js";
import type { SealFile, UploadPolicy } from "./uploads.js";
import { extractForSeal, sendWithFiles } from "./uploads.js";
import { approvalRows, optionRows } from "./widgets.js";

/** Discord's approval buttons: Approve and Deny, whatever else the agent offers. */
const APPROVAL_BUTTON_VERDICTS: readonly Pick<PromptOption, "verdict">[] = [
  { verdict: "approve" },
  { verdict: "deny" },
];
/** Discord's typing indicator lasts ~10 s; renewed inside that while the turn runs. */
const TYPING_EVERY_MS = 8000;
/** A live frame's text, clipped: the rest of the cap is its status line's. */
const LIVE_MAX = DISCORD_MAX_TEXT - 60;

export interface DiscordLiveOptions {
  channelId: string;
  parts: TurnParts;
  logger: Logger;
  audit: AuditSink;
  /** Absent: uploads off for this turn, and image paths stay visible as text. */
  uploads?: UploadPolicy | undefined;
  /** The user's message the phase ladder decorates (absent: no ladder). */
  ladder?: { messageId: string; timings?: Partial<LadderTimings> | undefined } | undefined;
}

/** A message as Discord's body. `edit`: no widgets clears them (an edit without components keeps them). */
function bodyOf({ body, widgets }: LiveMessage<ActionRow[]>, edit: boolean): MessageBody {
  return { content: body, ...(widgets ? { components: widgets } : edit ? { components: [] } : {}) };
}

export function discordLiveSurface(rest: DiscordRest, o: DiscordLiveOptions): LiveSurface<ActionRow[]> {
  const { channelId, logger } = o;
  const uploads = o.uploads;
  const ladder = o.ladder;
  return {
    capabilities: DISCORD_CAPABILITIES,
    sourceCap: SEGMENT_LIMIT,
    commands: { new: "`!new`", stop: "`!stop`" },
    plain: discordSafe,
    quiet: (text) => subtext(discordSafe(text)),
    promptHead: (title, purpose) =>
      discordSafe(`🔐 **Permission needed:** ${title}${purpose ? `\n${purpose}` : ""}`),
    promptBody: (head, hint) => fitPlatformCap(`${head}\n${subtext(discordSafe(hint))}`)[0] ?? "",
    decided: (head, outcome) => withLine(head, discordSafe(outcome)),
    // The room for a chip or footer is held back in the source cap; a footer that still does not
    // fit is dropped by `join`, never truncated.
    fit: (source, _footer, live) => {
      const text = discordSafe(source);
      if (!text.trim()) return [];
      if (live) return [codePointLength(text) > LIVE_MAX ? clip(text, LIVE_MAX) : text];
      return fitPlatformCap(text);
    },
    join: (body, footer) => withLine(body, footer),
    fits: (body) => codePointLength(body) <= DISCORD_MAX_TEXT,
    post: async (message) => {
      const send = (body: MessageBody, files: SealFile[]) =>
        createPart(rest, channelId, o.parts, body, files);
      return (await sendWithFiles(bodyOf(message, false), message.files, send, Boolean, logger)) || null;
    },
    edit: async (id, message) => {
      const send = (body: MessageBody, files: SealFile[]) => rest.editMessage(channelId, id, body, files);
      ensureOk("edit", await sendWithFiles(bodyOf(message, true), message.files, send, (r) => r.ok, logger));
    },
    // Only a message Discord no longer has (deleted under the turn) needs a new one.
    refused: (error) => error instanceof DiscordCallError && error.status === 404,
    options: (choices) => optionRows(choices),
    approval: (requestId, nonce, options) => {
      const rows = approvalRows(requestId, nonce);
      // The buttons are Approve and Deny whatever the agent offers; typed replies answer either way.
      return rows
        ? { widgets: rows, shown: APPROVAL_BUTTON_VERDICTS }
        : { widgets: undefined, shown: options };
    },
    noWidgets: [],
    typing: { everyMs: TYPING_EVERY_MS, send: async () => ensureOk("typing", await rest.typing(channelId)) },
    files: uploads
      ? { hide: hideLocalRefs, extract: (source) => extractForSeal(source, uploads, o.audit) }
      : undefined,
    reactions: ladder && discordReactions(rest, channelId, ladder.messageId, ladder.timings),
    thinking: (preview) => subtext(`💭 ${discordSafe(preview)}`),
  };
}
