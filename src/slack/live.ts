/**
 * Slack's live message, in its two ways of showing text while it is written:
 * - StreamMessage (the kit's LiveStreamMessage): native streaming. chat.startStream on the first
 *   content, chat.appendStream for more, chat.stopStream to seal it. Appended text is final, so the
 *   kit hands it only settled text, and only what redaction can no longer change (FinalAppendGate,
 *   judged on the presented concatenation) is appended; the seal appends the rest.
 * - EditMessage: one message posted once (as the turn's next part) and edited by chat.update.
 * Either way the live message BECOMES the sealed chunk: there is never a preview plus a copy.
 * Every message is created through the turn's parts (the delivery ledger).
 */
import type { Logger } from "../messaging/base/logger.js";
import type { TurnParts } from "../messaging/channel/delivery.js";
import type { LiveStream, LiveStreamMessage, LiveTask } from "../messaging/channel/live-stream.js";
import { FinalAppendGate } from "../messaging/security/append-gate.js";
import type { AuditSink } from "../messaging/security/audit.js";
import { oneLine } from "../messaging/text/clip.js";
import { splitMarkdownSafe } from "../messaging/text/split.js";
import { StreamingSplitter } from "../messaging/text/streaming-splitter.js";
import type { Block } from "./blocks.js";
import { defangSlack, fitCap, mrkdwnSafe, plainSafe, SEGMENT_LIMIT } from "./format.js";
import { present } from "./segment.js";
import type { SlackApi } from "./transport.js";

/** Where a live message goes, and the turn it belongs to. */
export interface LiveTarget {
  api: SlackApi;
  channel: string;
  threadTs: string;
  /** Who a stream is for (chat.startStream's recipient_user_id / recipient_team_id), in DMs too. */
  recipient?: { userId: string; teamId: string };
  parts: TurnParts;
  logger: Logger;
  audit: AuditSink;
}

/** Slack's widgets: [OPTIONS:] buttons, a prompt's buttons, or a decided prompt (none). */
export type SlackWidgets = { kind: "options" | "prompt"; buttons: Block } | { kind: "decided" };

const TASK_STATUS = { in_progress: "in_progress", completed: "complete", failed: "error" } as const;

/** A tool call as a task in the stream's timeline: its title display-safe, one line. */
function taskChunk(t: LiveTask): Record<string, unknown> {
  const title = oneLine(plainSafe(t.title), 200) || "Working";
  return { type: "task_update", id: t.id, title, status: TASK_STATUS[t.status] };
}

/** Create a message as the turn's next part; its ts, or "" when it did not land. */
export async function createPart(
  t: Pick<LiveTarget, "parts">,
  content: string,
  create: () => Promise<string>,
  replace?: (ts: string) => Promise<boolean>,
): Promise<string> {
  const ts = await t.parts.post(content, {
    create: async () => (await create()) || null,
    replace: replace ?? (async () => false),
  });
  return ts ?? "";
}

/**
 * Native streaming for the kit. A sealed stream reads as Markdown presented for Slack (tables
 * flattened, link targets shown), its status line plain under a blank line; the splitter already
 * capped each chunk. `onRefused`: Slack would not stream at all (later turns edit instead).
 */
export function slackStream(t: LiveTarget, onRefused?: () => void): LiveStream<SlackWidgets> {
  return {
    form: {
      // Split as presented: a flattened table can outgrow the chunk the kit cut from the source.
      fit: (source) => splitMarkdownSafe(present(source), SEGMENT_LIMIT).map(trimEnd).filter(Boolean),
      join: (body, footer) => (body && footer ? `${body}\n\n${footer}` : body || footer),
      quiet: (text) => text,
      plain: (text) => text,
      // A stream carries its buttons under its text.
      optionsApart: false,
    },
    open: () => new StreamMessage(t, onRefused),
  };
}

const trimEnd = (text: string) => text.replace(/\s+$/u, "");

export class StreamMessage implements LiveStreamMessage<SlackWidgets> {
  ts: string | null = null;
  /** The presented lines, split as the seal splits them: only what the first message keeps streams. */
  private readonly splitter = new StreamingSplitter(SEGMENT_LIMIT);
  private fed = "";
  /** The first message, once the presented text outgrew it. */
  private first: string | undefined;
  private readonly gate = new FinalAppendGate();
  /** The presented text the gate has judged (a prefix of everything this message will show). */
  private judged = "";
  /** The defanged form of everything appended (what Slack shows). */
  private shown = "";
  /** Slack refused streaming at the start: the kit falls back to editing. */
  refused = false;

  constructor(
    private readonly t: LiveTarget,
    private readonly onRefused?: () => void,
  ) {}

  /** Append what may be shown of `text` (this message's settled source so far) and task updates. */
  async append(text: string, tasks: readonly LiveTask[]): Promise<boolean> {
    const source = present(text);
    // Presentation only grows over settled lines; a text it would rewrite waits for the seal.
    if (this.first === undefined && source.startsWith(this.fed)) {
      this.first = this.splitter.append(source.slice(this.fed.length))[0];
      this.fed = source;
    }
    const settled = this.first ?? this.splitter.committed;
    const delta = settled.startsWith(this.judged) ? settled.slice(this.judged.length) : "";
    const step = this.gate.next(delta, { lineComplete: true });
    this.judged += delta.slice(0, step.consumed);
    const shown = this.defangDelta(step.append);
    const chunks = [...(shown ? [{ type: "markdown_text", text: shown }] : []), ...tasks.map(taskChunk)];
    if (chunks.length === 0) return true;
    if (this.ts === null) return this.start(chunks, shown);
    const res = await this.t.api.appendStream({ channel: this.t.channel, ts: this.ts, chunks });
    if (!res.ok) this.t.logger.debug("slack append failed", { error: res.error });
    return res.ok;
  }

  /**
   * Seal this message as `body` (presented, its status line joined) with `widgets` under it. The
   * ts, or null when nothing landed. A stream Slack would not stop is posted whole instead.
   */
  async seal(
    body: string,
    widgets: SlackWidgets | undefined,
    tasks: readonly LiveTask[],
  ): Promise<string | null> {
    const blocks = widgets?.kind === "options" ? [widgets.buttons] : [];
    const end = this.gate.finish(body.slice(this.judged.length));
    if (end.breach)
      this.t.audit.log("slack_renderer.append", "failed", { reason: "redaction_reached_shown_text" });
    this.judged = body;
    const text = this.defangDelta(end.append);
    if (this.ts === null) {
      const chunks = [...(text ? [{ type: "markdown_text", text }] : []), ...tasks.map(taskChunk)];
      if (chunks.length === 0 && blocks.length === 0) return null;
      if (chunks.length === 0) chunks.push({ type: "markdown_text", text: " " });
      if (!(await this.start(chunks, text))) return null;
      // Everything is already in the started stream: a failed stop must not post it twice.
      return this.stop("", blocks, [], "");
    }
    return this.stop(text, blocks, tasks, text);
  }

  private async start(chunks: Record<string, unknown>[], text: string): Promise<boolean> {
    const ts = await createPart(this.t, text || JSON.stringify(chunks), async () => {
      const res = await this.t.api.startStream({
        channel: this.t.channel,
        thread_ts: this.t.threadTs,
        ...(this.t.recipient
          ? { recipient_user_id: this.t.recipient.userId, recipient_team_id: this.t.recipient.teamId }
          : {}),
        chunks,
      });
      if (!res.ok) {
        // Refused outright (an app without streaming, an old workspace): the kit edits instead.
        this.refused = true;
        this.t.logger.warn("slack: streaming refused; editing messages instead", { error: res.error });
        this.onRefused?.();
        return "";
      }
      return res.data.ts;
    });
    if (!ts) return false;
    this.ts = ts;
    return true;
  }

  private async stop(
    text: string,
    blocks: Block[],
    tasks: readonly LiveTask[],
    fallback: string,
  ): Promise<string | null> {
    const ts = this.ts ?? "";
    const chunks = [...(text ? [{ type: "markdown_text", text }] : []), ...tasks.map(taskChunk)];
    const res = await this.t.api.stopStream({
      channel: this.t.channel,
      ts,
      ...(chunks.length ? { chunks } : {}),
      ...(blocks.length ? { blocks } : {}),
    });
    if (res.ok) return ts;
    // The stream is stuck open: what it still owed goes as an ordinary reply, so nothing is lost.
    this.t.logger.warn("slack stopStream failed; posting the rest", { error: res.error });
    if (!fallback.trim()) return ts;
    for (const part of fitCap(fallback)) {
      const posted = await this.t.api.postMessage({
        channel: this.t.channel,
        thread_ts: this.t.threadTs,
        text: part,
      });
      if (!posted.ok) return null;
    }
    return ts;
  }

  /** The defanged continuation of what was shown: defanging only inserts after a `<`. */
  private defangDelta(append: string): string {
    if (!append) return "";
    const next = defangSlack(this.shown + append);
    const delta = next.slice(this.shown.length);
    this.shown = next;
    return delta;
  }
}

export class EditMessage {
  ts: string | null = null;
  private shown = "";

  constructor(private readonly t: LiveTarget) {}

  /** Show `text` (mrkdwn, display-safe, within the cap): post it once, edit it after. */
  async show(text: string, blocks?: Block[]): Promise<string> {
    if (text === this.shown && !blocks) return this.ts ?? "";
    const body = { text, ...(blocks ? { blocks } : {}), unfurl_links: false, unfurl_media: false };
    if (this.ts === null) {
      // The blocks are part of what the message says: a prompt posted again carries a new nonce.
      const ts = await createPart(
        this.t,
        blocks ? `${text}\n${JSON.stringify(blocks)}` : text,
        async () => {
          const res = await this.t.api.postMessage({
            channel: this.t.channel,
            thread_ts: this.t.threadTs,
            ...body,
          });
          return res.ok ? res.data.ts : "";
        },
        async (earlier) => {
          if ((await this.t.api.update({ channel: this.t.channel, ts: earlier, ...body })).ok) return true;
          // Slack would not edit it (a stream the dead run never closed, say): it goes, so the
          // fresh post below is the only copy (a message already gone just fails to go again).
          await this.t.api.deleteMessage(this.t.channel, earlier);
          return false;
        },
      );
      if (ts) this.ts = ts;
    } else {
      const res = await this.t.api.update({ channel: this.t.channel, ts: this.ts, ...body });
      if (!res.ok) return "";
    }
    if (this.ts) this.shown = text;
    return this.ts ?? "";
  }
}

/** Post one mrkdwn reply (already display-safe) into the thread as the turn's next part. */
export async function postReply(t: LiveTarget, text: string, blocks?: Block[]): Promise<string> {
  return new EditMessage(t).show(text, blocks);
}

/** A reply from Markdown: display-safe mrkdwn, split under the cap; true when every part landed. */
export async function postMarkdown(t: LiveTarget, markdown: string): Promise<boolean> {
  for (const part of fitCap(mrkdwnSafe(markdown))) if (!(await postReply(t, part))) return false;
  return true;
}
