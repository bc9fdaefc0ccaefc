/**
 * The live message of a segment, in Slack's two ways of showing text while it is written:
 * - StreamMessage: native streaming. chat.startStream on the first content, chat.appendStream for
 *   more, chat.stopStream to seal it. Appended text is final, so only what the splitter has
 *   committed to this message AND what redaction can no longer change (FinalAppendGate, judged on
 *   the rendered concatenation) is appended; the seal appends the rest of the chunk.
 * - EditMessage: one message posted once and edited by chat.update (throttled by the renderer).
 * Either way the live message BECOMES the sealed chunk: there is never a preview plus a copy.
 * Every message is created through the turn's parts (the delivery ledger).
 */
import type { Logger } from "../messaging/base/logger.js";
import type { TurnParts } from "../messaging/channel/delivery.js";
import { FinalAppendGate } from "../messaging/security/append-gate.js";
import type { AuditSink } from "../messaging/security/audit.js";
import type { Block } from "./blocks.js";
import { defangSlack, fitCap, mrkdwnSafe } from "./format.js";
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

/** A tool call shown as a task in the stream's timeline. */
export interface TaskUpdate {
  id: string;
  title: string;
  status: "pending" | "in_progress" | "complete" | "error";
}

function taskChunk(t: TaskUpdate): Record<string, unknown> {
  return { type: "task_update", id: t.id, title: t.title, status: t.status };
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

export class StreamMessage {
  ts: string | null = null;
  private readonly gate = new FinalAppendGate();
  /** Source units of `lead + chunk` already judged by the gate. */
  private consumed = 0;
  /** The defanged form of everything appended (what Slack shows). */
  private shown = "";
  /** Streaming was refused by Slack at the start: the caller falls back to editing. */
  unavailable = false;

  /** `lead`: text that opens the message before the chunk (a steer chip). */
  constructor(
    private readonly t: LiveTarget,
    private readonly lead: string,
  ) {}

  get started(): boolean {
    return this.ts !== null;
  }

  /** Append what may be shown of `committed` (this message's committed source) and task updates. */
  async progress(committed: string, tasks: readonly TaskUpdate[]): Promise<boolean> {
    const source = committed ? this.lead + committed : "";
    const step = this.gate.next(source.slice(this.consumed), { lineComplete: true });
    this.consumed += step.consumed;
    const text = this.defangDelta(step.append);
    const chunks = [...(text ? [{ type: "markdown_text", text }] : []), ...tasks.map(taskChunk)];
    if (chunks.length === 0) return true;
    if (this.ts === null) return this.start(chunks, text);
    const res = await this.t.api.appendStream({ channel: this.t.channel, ts: this.ts, chunks });
    if (!res.ok) this.t.logger.debug("slack append failed", { error: res.error });
    return res.ok;
  }

  /**
   * Seal this message as `chunk` (its source) plus `tail` (notes, footer), with `blocks` under it.
   * The ts, or "" when nothing landed. A stream Slack would not stop is posted whole instead.
   */
  async seal(chunk: string, tail: string, blocks: Block[], tasks: readonly TaskUpdate[]): Promise<string> {
    const whole = this.lead + chunk + tail;
    const end = this.gate.finish(whole.slice(this.consumed));
    if (end.breach)
      this.t.audit.log("slack_renderer.append", "failed", { reason: "redaction_reached_shown_text" });
    this.consumed = whole.length;
    const text = this.defangDelta(end.append);
    if (this.ts === null) {
      const chunks = [...(text ? [{ type: "markdown_text", text }] : []), ...tasks.map(taskChunk)];
      if (chunks.length === 0 && blocks.length === 0) return "";
      if (chunks.length === 0) chunks.push({ type: "markdown_text", text: " " });
      if (!(await this.start(chunks, text))) return "";
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
        // Refused outright (an app without streaming, an old workspace): the caller edits instead.
        this.unavailable = true;
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
    tasks: readonly TaskUpdate[],
    fallback: string,
  ): Promise<string> {
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
      if (!posted.ok) return "";
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
  /** The message shows answer text (not only the status line). */
  hasText = false;

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
