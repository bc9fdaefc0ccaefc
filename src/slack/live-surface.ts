/**
 * Slack as a LiveSurface: thread replies in mrkdwn (Markdown converted, escaped and redacted in the
 * form Slack renders: format.ts), bound to 3,900 code points from a 3,500 source cap; the live
 * message a native stream (live.ts) unless streaming is off, was refused, or the turn is resumed
 * (an earlier stream cannot be continued), else one message edited by chat.update; the live status
 * as the thread's assistant status (and, when editing, in italics under the text); Block Kit
 * buttons for choices and prompts (blocks.ts); images uploaded after the text (uploads.ts); the
 * phase ladder as reactions on the user's message.
 */

import type { LiveReactions } from "../messaging/channel/live-decor.js";
import type { LiveFiles, LiveMessage, LiveSurface } from "../messaging/channel/live-surface.js";
import type { OutboundFilePolicy } from "../messaging/channel/surface.js";
import { hideLocalRefs } from "../messaging/files/outbound-files.js";
import { oneLine } from "../messaging/text/clip.js";
import type { PromptOption } from "../messaging/turn/renderer.js";
import { approvalButtons, decidedBlocks, optionButtons, promptBlocks } from "./blocks.js";
import { codePointLength, fitCap, mrkdwnSafe, plainSafe, SEGMENT_LIMIT, SLACK_MAX_TEXT } from "./format.js";
import type { LiveTarget, SlackWidgets } from "./live.js";
import { postMarkdown, postReply, slackStream } from "./live.js";
import { present } from "./segment.js";
import { SLACK_CAPABILITIES } from "./transport.js";
import type { SealFile } from "./uploads.js";
import { extractForSeal } from "./uploads.js";

/** Slack's approval buttons: Approve and Deny (and the grant for the owner), whatever the agent offers. */
const APPROVAL_BUTTON_VERDICTS: readonly Pick<PromptOption, "verdict">[] = [
  { verdict: "approve" },
  { verdict: "deny" },
];
/** The reasoning preview's one line, in code points. */
const THINKING_PREVIEW = 300;
/** Links are never unfurled: a model-written URL must not fetch a preview into the thread. */
const NO_UNFURL = { unfurl_links: false, unfurl_media: false };

export interface SlackSurfaceOptions {
  /** Native streaming for this turn (off, refused before, or a resumed turn: edited). */
  streaming: boolean;
  /** Slack refused streaming: later turns edit instead. */
  onStreamingUnavailable?: (() => void) | undefined;
  /** Absent: uploads are off for this turn (a shared channel thread), images stay as text. */
  uploads?: OutboundFilePolicy | undefined;
  /** "Approve + auto-approve" beside Approve and Deny (the owner, in a DM). */
  grantButton: boolean;
  reactions?: LiveReactions | undefined;
}

/** A body that carries a last line of its own (a prompt's hint, a decided prompt's outcome). */
function lastLine(body: string): [string, string] {
  const at = body.lastIndexOf("\n");
  return [body.slice(0, at), body.slice(at + 1)];
}

export function slackLiveSurface(t: LiveTarget, o: SlackSurfaceOptions): LiveSurface<SlackWidgets> {
  const { api, channel } = t;
  let statusShown = "";
  /** Buttons under an edited message: mrkdwn text and blocks cannot share one (a press rewrites the blocks). */
  const choices = async (buttons: SlackWidgets) => {
    if (buttons.kind !== "options") return;
    if (!(await postReply(t, "Choose an option:", [buttons.buttons])))
      throw new Error("the choices did not land");
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
    fit: (source, footer) =>
      source.trim()
        ? fitCap(
            mrkdwnSafe(present(source)),
            SLACK_MAX_TEXT - (footer === undefined ? 0 : codePointLength(footer) + 1),
          )
        : [],
    join: (body, footer) => (body && footer ? `${body}\n${footer}` : body || footer),
    fits: (body) => codePointLength(body) <= SLACK_MAX_TEXT,
    post: async ({ body, widgets }: LiveMessage<SlackWidgets>) => {
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
    approval: (requestId, nonce, options) => {
      const buttons = approvalButtons(requestId, nonce, o.grantButton);
      return buttons
        ? { widgets: { kind: "prompt", buttons }, shown: APPROVAL_BUTTON_VERDICTS }
        : { widgets: undefined, shown: options };
    },
    noWidgets: { kind: "decided" },
    files: slackFiles(t, o.uploads),
    reactions: o.reactions,
    thinking: (preview) => mrkdwnSafe(`> 💭 ${oneLine(preview, THINKING_PREVIEW)}`),
    stream: o.streaming && !t.parts.resumed ? slackStream(t, () => o.onStreamingUnavailable?.()) : undefined,
    status: async (line) => {
      if (line === statusShown) return;
      statusShown = line;
      const res = await api.setStatus(channel, t.threadTs, line ? plainSafe(line) : "");
      if (!res.ok) t.logger.debug("slack status failed", { error: res.error });
    },
  };
}

/**
 * Local images uploaded after the text. A reference Slack may not have (a shared channel thread,
 * a refused file) keeps its markup, with a note under the text saying why.
 */
function slackFiles(t: LiveTarget, uploads: OutboundFilePolicy | undefined): LiveFiles {
  return {
    hide: hideLocalRefs,
    extract: async (source) => {
      const ups = await extractForSeal("", source, uploads, t.audit);
      const notes = ups.notes.join("\n");
      return {
        text: notes ? `${ups.remainder.replace(/\s+$/u, "")}\n\n${notes}` : ups.remainder,
        files: ups.files,
      };
    },
    send: async (found) => {
      let landed = false;
      let lost = false;
      for (const f of found as readonly SealFile[]) {
        const res = await t.api.uploadFile({
          channel: t.channel,
          threadTs: t.threadTs,
          filename: f.filename,
          title: f.title,
          bytes: f.bytes,
        });
        if (res.ok) {
          landed = true;
          continue;
        }
        // The text still says what the image was: its markup (display-safe) and why it is missing.
        lost = true;
        if (await postMarkdown(t, `${f.markup}\n⚠️ the image upload failed`)) landed = true;
      }
      return { landed, lost };
    },
  };
}
