/**
 * Slack as a LiveSurface: thread replies in mrkdwn (Markdown presented for Slack, converted,
 * escaped and redacted in the form Slack renders: format.ts), 3,900 code points from a 3,500
 * source cap. The live message is a native stream (live.ts) unless streaming is off, was refused,
 * or the turn is resumed (an earlier stream cannot be continued), else one message edited by
 * chat.update. The live status is the thread's assistant status (and, when editing, italics under
 * the text); Block Kit buttons carry choices and prompts (blocks.ts); images are uploaded after
 * the text (uploads.ts); the phase ladder is reactions on the user's message (reactions.ts).
 */
import type { Clock } from "../messaging/base/clock.js";
import type { LiveMessage, LiveSurface } from "../messaging/channel/live-surface.js";
import type { LadderTimings } from "../messaging/channel/phase-ladder.js";
import type { OutboundFilePolicy } from "../messaging/channel/surface.js";
import { oneLine } from "../messaging/text/clip.js";
import { splitMarkdownSafe } from "../messaging/text/split.js";
import type { PromptOption } from "../messaging/turn/renderer.js";
import { approvalButtons, decidedBlocks, optionButtons, promptBlocks } from "./blocks.js";
import { codePointLength, fitCap, mrkdwnSafe, plainSafe, SEGMENT_LIMIT, SLACK_MAX_TEXT } from "./format.js";
import type { LiveTarget, SlackWidgets } from "./live.js";
import { postReply, slackStream } from "./live.js";
import { slackReactions } from "./reactions.js";
import { present } from "./segment.js";
import { SLACK_CAPABILITIES } from "./transport.js";
import { slackFiles } from "./uploads.js";

export interface SlackToggles {
  reactionsEnabled: boolean;
  showThinking: boolean;
  /** Native streaming; false (or a refusal by Slack) edits one message instead. */
  streaming: boolean;
}

export interface SlackRendererOptions extends LiveTarget {
  /** The user's message the phase ladder decorates (absent: no ladder). */
  userMessageTs?: string;
  /** Read when the turn starts (the settings can change between turns). */
  toggles: SlackToggles;
  clock?: Clock;
  /** 0: every event is rendered before the next one (tests, goldens); else a frame per interval. */
  throttleMs?: number;
  /** Absent: uploads are off for this turn (a shared channel thread), images stay as text. */
  uploads?: OutboundFilePolicy;
  /** "Approve + auto-approve" beside Approve and Deny (the owner, in a DM). */
  grantButton?: boolean;
  /** Read at turn END, so the footer reports the window as the user leaves it. */
  contextUsage?: () => number | undefined | Promise<number | undefined>;
  ladderTimings?: Partial<LadderTimings>;
  /** Slack refused streaming: later renderers edit instead. */
  onStreamingUnavailable?: () => void;
}

/** Slack's approval buttons: Approve and Deny (and the grant for the owner), whatever the agent offers. */
const APPROVAL_BUTTON_VERDICTS: readonly Pick<PromptOption, "verdict">[] = [
  { verdict: "approve" },
  { verdict: "deny" },
];
/** The reasoning preview's one line, in code points. */
const THINKING_PREVIEW = 300;
/** Links are never unfurled: a model-written URL must not fetch a preview into the thread. */
const NO_UNFURL = { unfurl_links: false, unfurl_media: false };

/** A body that carries a last line of its own (a prompt's hint, a decided prompt's outcome). */
function lastLine(body: string): [string, string] {
  const at = body.lastIndexOf("\n");
  return [body.slice(0, at), body.slice(at + 1)];
}

/** `t`: where the turn's messages go (its parts, so a resumed turn edits what its first run posted). */
export function slackLiveSurface(t: LiveTarget, o: SlackRendererOptions): LiveSurface<SlackWidgets> {
  const { api, channel } = t;
  let statusShown = "";
  /** [OPTIONS:] buttons in a message of their own: a press rewrites a message's blocks, never its text. */
  const choices = async (buttons: SlackWidgets) => {
    if (buttons.kind !== "options") return "";
    const ts = await postReply(t, "Choose an option:", [buttons.buttons]);
    if (!ts) throw new Error("the choices did not land");
    return ts;
  };
  const blocksOf = (body: string, widgets: SlackWidgets | undefined) => {
    const [head, last] = lastLine(body);
    if (widgets?.kind === "prompt") return promptBlocks(head, widgets.buttons, last);
    return widgets?.kind === "decided" ? decidedBlocks(head, last) : undefined;
  };
  return {
    capabilities: SLACK_CAPABILITIES,
    sourceCap: SEGMENT_LIMIT,
    commands: { new: "`!new`", stop: "`!stop`" },
    plain: mrkdwnSafe,
    quiet: (text) => mrkdwnSafe(`_${text}_`),
    promptHead: (title, purpose) =>
      mrkdwnSafe(`🔐 **Permission needed:** ${title}${purpose ? `\n${purpose}` : ""}`),
    promptBody: (head, hint) => `${head}\n${hint}`,
    decided: (head, outcome) => `${head}\n${outcome}`,
    // Presented for Slack (tables flattened, link targets shown); the last part leaves room for the footer.
    fit: (source, footer) => {
      const room = SLACK_MAX_TEXT - (footer === undefined ? 0 : codePointLength(footer) + 1);
      if (!source.trim()) return [];
      return splitMarkdownSafe(present(source), SEGMENT_LIMIT).flatMap((part) =>
        fitCap(mrkdwnSafe(part), room),
      );
    },
    join: (body, footer) => (body && footer ? `${body}\n${footer}` : body || footer),
    fits: (body) => codePointLength(body) <= SLACK_MAX_TEXT,
    post: async ({ body, widgets }: LiveMessage<SlackWidgets>) => {
      if (!body && widgets) return choices(widgets);
      const blocks = blocksOf(body, widgets);
      const ts = await postReply(t, blocks ? (fitCap(body)[0] ?? body) : body, blocks);
      if (ts && widgets) await choices(widgets);
      return ts || null;
    },
    edit: async (id, { body, widgets }) => {
      const blocks = blocksOf(body, widgets);
      const text = blocks ? (fitCap(body)[0] ?? body) : body;
      // A decided prompt is rewritten as it stands: text and blocks.
      const extra = widgets?.kind === "decided" ? {} : NO_UNFURL;
      const res = await api.update({ channel, ts: id, text, ...(blocks ? { blocks } : {}), ...extra });
      if (!res.ok) throw new Error(`chat.update refused: ${res.error}`);
      if (widgets) await choices(widgets);
    },
    // Slack's refusal of an edit is final for that message: nothing is posted again in its place.
    refused: () => false,
    options: (labels) => ({ kind: "options", buttons: optionButtons(labels) }),
    optionsApart: true,
    approval: (requestId, nonce, options) => {
      const buttons = approvalButtons(requestId, nonce, o.grantButton === true);
      return buttons
        ? { widgets: { kind: "prompt", buttons }, shown: APPROVAL_BUTTON_VERDICTS }
        : { widgets: undefined, shown: options };
    },
    noWidgets: { kind: "decided" },
    files: slackFiles(t, o.uploads),
    reactions: o.toggles.reactionsEnabled ? slackReactions(t, o.userMessageTs, o.ladderTimings) : undefined,
    thinking: (preview) => mrkdwnSafe(`> 💭 ${oneLine(preview, THINKING_PREVIEW)}`),
    stream: o.toggles.streaming && !t.parts.resumed ? slackStream(t, o.onStreamingUnavailable) : undefined,
    status: async (line) => {
      // Set only when it changes: each call is a Web API request.
      if (line === statusShown) return;
      statusShown = line;
      const res = await api.setStatus(channel, t.threadTs, line ? plainSafe(line) : "");
      if (!res.ok) t.logger.debug("slack status failed", { error: res.error });
    },
  };
}
