/**
 * Teams as a LiveSurface: messages in the markdown subset Teams renders (teamsSafe: headings bold,
 * no live HTML, redacted as shown) bound to 16,000 code points and 24,000 UTF-8 bytes, the quiet
 * line in italics, the approval prompt and [OPTIONS:] chips as Adaptive Cards (cards.ts), a typing
 * indicator kept alive, and local pictures after the text (uploads.ts). Every message goes through
 * the conversation's outbox (one place retires a route the Connector refuses for good) as the
 * turn's next part (a resumed turn edits what its first run posted).
 */

import type { Logger } from "../messaging/base/logger.js";
import type { TurnParts } from "../messaging/channel/delivery.js";
import type { LiveMessage, LiveSurface } from "../messaging/channel/live-surface.js";
import { typedReplyHint } from "../messaging/channel/render-kit.js";
import type { OutboundFilePolicy } from "../messaging/channel/surface.js";
import type { AuditSink } from "../messaging/security/audit.js";
import type { PromptOption } from "../messaging/turn/renderer.js";
import type { AdaptiveCardAttachment, ChoiceBook } from "./cards.js";
import { approvalCard, choicesCard, resolvedApprovalCard } from "./cards.js";
import type { OutboundActivity } from "./client.js";
import { teamsSendErrorOf } from "./errors.js";
import { fitsTeams, fitTeams, gridFitsTeams, quietLine, TEAMS_SEGMENT_LIMIT, teamsSafe } from "./format.js";
import type { TeamsOutbox } from "./outbox.js";
import { attachmentsActivity, textActivity } from "./outbox.js";
import { TEAMS_CAPABILITIES } from "./transport.js";
import { teamsImages } from "./uploads.js";

/** A card a message is (an approval prompt, [OPTIONS:] chips), and the choices a chips card offers. */
export interface TeamsCard {
  card: AdaptiveCardAttachment;
  choices?: readonly string[];
}

/** The buttons an approval card's typed-reply hint names (auto-approve is an approve). */
const HINT_VERDICTS: readonly Pick<PromptOption, "verdict">[] = [{ verdict: "approve" }, { verdict: "deny" }];

export interface TeamsSurfaceOptions {
  outbox: TeamsOutbox;
  /** The conversation's user is the owner: the card offers Approve + auto-approve. */
  owner: boolean;
  choices: ChoiceBook;
  audit: AuditSink;
  logger: Logger;
  typingEveryMs: number;
  parts: TurnParts;
  /** Absent: pictures stay as their markup. */
  uploads?: OutboundFilePolicy | undefined;
}

/** Teams splits an activity holding text and an attachment (and withholds an id): a card is the message. */
function activityOf({ body, widgets }: LiveMessage<TeamsCard | null>): OutboundActivity {
  return widgets ? attachmentsActivity([widgets.card]) : textActivity(body);
}

export function teamsLiveSurface(o: TeamsSurfaceOptions): LiveSurface<TeamsCard | null> {
  const send = (activity: OutboundActivity): Promise<string | null> =>
    o.parts.post(JSON.stringify(activity), {
      create: () => o.outbox.send(activity),
      replace: async (earlier) => {
        await o.outbox.update(earlier, activity);
        return true;
      },
    });
  return {
    capabilities: TEAMS_CAPABILITIES,
    sourceCap: TEAMS_SEGMENT_LIMIT,
    commands: { new: "/new", stop: "/stop" },
    plain: teamsSafe,
    quiet: quietLine,
    // The prompt is a card built from its title and purpose; its head is kept only as the kit's record.
    promptHead: (title, purpose) => `🔐 **Permission needed:** ${title}${purpose ? `\n\n${purpose}` : ""}`,
    promptBody: (head, hint) => `${head}\n\n${hint}`,
    decided: (_head, outcome, title, purpose) => ({
      body: "",
      widgets: { card: resolvedApprovalCard(title, purpose, outcome) },
    }),
    fit: (source, footer) => {
      const safe = teamsSafe(source);
      return safe.trim() ? fitTeams(safe, footer) : [];
    },
    join: (body, footer) => (body && footer ? `${body}\n\n${footer}` : body || footer),
    fits: fitsTeams,
    // A grid longer than a message is shown as cards, which read on their own when split.
    tableFits: gridFitsTeams,
    post: async (message) => {
      const id = await send(activityOf(message));
      // A press on a chips card is resolved against what it offered, never against its payload.
      const choices = message.widgets?.choices;
      if (id && choices) o.choices.register(id, o.outbox.address.conversationId, choices);
      return id || null;
    },
    edit: (id, message) => o.outbox.update(id, activityOf(message)),
    // The Connector answered that it took nothing (4xx); a network failure or a 5xx may have landed.
    refused: (error) => {
      const status = teamsSendErrorOf(error)?.status ?? 0;
      return status >= 400 && status < 500;
    },
    options: (choices) => ({ card: choicesCard("", choices, "option"), choices }),
    // A message with a card carries no text: the chips come on their own after the answer.
    optionsApart: true,
    approval: (requestId, nonce, _options, title, purpose) => ({
      widgets: {
        card: approvalCard({
          requestId,
          nonce,
          toolTitle: title,
          toolPurpose: purpose,
          hint: typedReplyHint(HINT_VERDICTS, true),
          owner: o.owner,
        }),
      },
      shown: HINT_VERDICTS,
    }),
    noWidgets: null,
    // Best effort: a missed indicator costs a few seconds of dots, never the answer.
    typing: { everyMs: o.typingEveryMs, send: () => o.outbox.typing() },
    files: o.uploads ? teamsImages(o.uploads, o.audit, o.logger, send) : undefined,
  };
}
