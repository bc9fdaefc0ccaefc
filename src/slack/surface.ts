/**
 * Slack's surface for the hub. An address is a thread (a top-level message opens one: the answer and
 * the session live there) in a DM or an allowed channel, and who spoke; a slash command, which
 * Slack cannot send from a thread, addresses the sender's latest thread in that conversation (or
 * the conversation itself when there is none yet). A DM thread is direct; a channel thread is a
 * shared audience (no uploads, no /yolo, no listings).
 */
import type { ChannelContext } from "../messaging/channel/contract.js";
import { TurnParts } from "../messaging/channel/delivery.js";
import type { ChannelSurface, Conversation, PickerSurface, TurnStart } from "../messaging/channel/surface.js";
import type { InboundAttachment } from "../messaging/channel/transport.js";
import type { Attachment } from "../messaging/files/ingest.js";
import type { ReceiptSurface } from "../messaging/queue/receipt.js";
import { buildDmSessionKey } from "../messaging/session/keys.js";
import type { FileFetchOptions } from "./attachments.js";
import { slackAttachment } from "./attachments.js";
import { modelButtons, section } from "./blocks.js";
import { fitCap, mrkdwnSafe, plainSafe, SECTION_MAX } from "./format.js";
import type { SlackSettings } from "./index.js";
import type { LiveTarget } from "./live.js";
import { postMarkdown } from "./live.js";
import type { SlackToggles } from "./renderer.js";
import { SlackRenderer } from "./renderer.js";
import type { SlackApi } from "./transport.js";

/** The reaction that tells a user their mid-turn message was folded into the running turn. */
export const STEER_RECEIPT_EMOJI = "inbox_tray";

/** Where a Slack message was said, and by whom. */
export interface SlackAddress {
  channel: string;
  /** The thread (absent only for a slash command with no thread to act on). */
  threadTs?: string;
  userId: string;
  teamId: string;
  /** A DM with the bot. */
  dm: boolean;
}

/** What a Slack message carries into the hub besides its text: nothing yet. */
export type SlackExtra = undefined;

export interface SlackSurfaceOptions {
  api: SlackApi;
  settings: SlackSettings;
  agentName: string;
  /** The bot's owner: offered "Approve + auto-approve" in a DM. */
  owner: string | undefined;
  files: Omit<FileFetchOptions, "timers">;
  throttleMs?: number;
  /** Streaming was refused once: every later turn edits. */
  streaming: { available: boolean };
}

export class SlackSurface implements ChannelSurface<SlackAddress, SlackExtra> {
  /** `channel:user` -> the thread that user last spoke in there (what a slash command acts on). */
  private readonly latest = new Map<string, string>();

  constructor(
    private readonly o: SlackSurfaceOptions,
    private readonly ctx: Pick<ChannelContext, "clock" | "logger" | "audit" | "sessions">,
  ) {}

  conversation(a: SlackAddress): Conversation {
    return {
      route: a.threadTs ? `thread:${a.channel}:${a.threadTs}` : `top:${a.channel}:${a.userId}`,
      direct: a.dm,
      link: {
        channelType: "slack",
        conversationId: a.channel,
        ...(a.threadTs ? { threadId: a.threadTs } : {}),
      },
    };
  }

  /** A thread is a session (its generations rotate with /new); a DM's key names its peer. */
  sessionKey(a: SlackAddress, generation: number): string {
    const gen = { gen: generation };
    if (a.dm)
      return buildDmSessionKey(
        "slack",
        this.o.agentName,
        a.threadTs ? `${a.userId}:${a.threadTs}` : a.userId,
        gen,
      );
    return a.threadTs
      ? buildDmSessionKey("slack", this.o.agentName, `${a.channel}:${a.threadTs}`, {
          ...gen,
          chatType: "thread",
        })
      : buildDmSessionKey("slack", this.o.agentName, `${a.channel}:${a.userId}`, {
          ...gen,
          chatType: "channel",
        });
  }

  /** The user spoke in this thread: a later slash command from them here acts on it. */
  noteThread(a: SlackAddress): void {
    if (a.threadTs) this.latest.set(`${a.channel}:${a.userId}`, a.threadTs);
  }

  latestThread(channel: string, userId: string): string | undefined {
    return this.latest.get(`${channel}:${userId}`);
  }

  private target(a: SlackAddress, parts: TurnParts | undefined): LiveTarget | null {
    if (!a.threadTs) return null;
    return {
      api: this.o.api,
      channel: a.channel,
      threadTs: a.threadTs,
      ...recipientOf(a),
      // A reply no journaled message stands behind (a command's answer) is recorded nowhere.
      parts: parts ?? TurnParts.unrecorded(),
      logger: this.ctx.logger,
      audit: this.ctx.audit,
    };
  }

  /** True only when every part landed. A reply with no thread to go to is an ephemeral one. */
  async reply(a: SlackAddress, text: string, parts?: TurnParts): Promise<boolean> {
    const target = this.target(a, parts);
    if (target) return postMarkdown(target, text);
    return this.ephemeral(a, text);
  }

  /** Seen by `a.userId` alone (a slash command's answer). */
  async ephemeral(a: Pick<SlackAddress, "channel" | "userId" | "threadTs">, text: string): Promise<boolean> {
    for (const part of fitCap(mrkdwnSafe(text))) {
      const res = await this.o.api.postEphemeral({
        channel: a.channel,
        user: a.userId,
        text: part,
        ...(a.threadTs ? { thread_ts: a.threadTs } : {}),
      });
      if (!res.ok) return false;
    }
    return true;
  }

  receipts(a: SlackAddress): ReceiptSurface {
    const api = this.o.api;
    return {
      post: async (text) => {
        const res = await api.postMessage({
          channel: a.channel,
          text: fitCap(mrkdwnSafe(text))[0] ?? "",
          ...(a.threadTs ? { thread_ts: a.threadTs } : {}),
        });
        return res.ok ? res.data.ts : "";
      },
      edit: async (id, text) => {
        if (id) await api.update({ channel: a.channel, ts: id, text: fitCap(mrkdwnSafe(text))[0] ?? "" });
      },
    };
  }

  newRenderer(a: SlackAddress, turn: TurnStart<SlackExtra>): SlackRenderer {
    const s = this.o.settings;
    const threadTs = a.threadTs ?? turn.messageId ?? "";
    const toggles: SlackToggles = {
      reactionsEnabled: s.reactionsEnabled,
      showThinking: s.showThinking,
      streaming: s.streaming && this.o.streaming.available,
    };
    return new SlackRenderer({
      api: this.o.api,
      channel: a.channel,
      threadTs,
      ...recipientOf(a),
      parts: turn.parts,
      logger: this.ctx.logger,
      audit: this.ctx.audit,
      ...(turn.messageId ? { userMessageTs: turn.messageId } : {}),
      toggles,
      clock: this.ctx.clock,
      ...(this.o.throttleMs !== undefined ? { throttleMs: this.o.throttleMs } : {}),
      // A channel thread is read by everyone in the channel: nothing is uploaded there.
      ...(a.dm ? { uploads: turn.files } : {}),
      grantButton: a.dm && a.userId === this.o.owner,
      contextUsage: async () => (await this.ctx.sessions.existingProvider(turn.sessionKey))?.contextUsagePct,
      onStreamingUnavailable: () => {
        this.o.streaming.available = false;
      },
    });
  }

  attachments(files: { refs: readonly InboundAttachment[] }): Attachment[] {
    return files.refs.map((ref) => slackAttachment(ref, { ...this.o.files, timers: this.ctx.clock }));
  }

  async acknowledgeSteer(a: SlackAddress, messageId: string): Promise<void> {
    await this.o.api.addReaction(a.channel, messageId, STEER_RECEIPT_EMOJI);
  }

  /** The auto-title names the thread (Slack's assistant thread title). */
  async retitle(a: SlackAddress, title: string): Promise<void> {
    if (!a.threadTs) return;
    const res = await this.o.api.setTitle(a.channel, a.threadTs, plainSafe(title));
    if (!res.ok) this.ctx.logger.debug("slack thread title failed", { error: res.error });
  }

  /** Model lists as buttons in the thread. */
  pickers(a: SlackAddress): PickerSurface {
    const api = this.o.api;
    const where = { channel: a.channel, ...(a.threadTs ? { thread_ts: a.threadTs } : {}) };
    return {
      maxChars: SECTION_MAX,
      post: async (text, labels) => {
        const body = fitCap(mrkdwnSafe(text), SECTION_MAX)[0] ?? "";
        const res = await api.postMessage({
          ...where,
          text: body,
          blocks: [section(body), modelButtons(labels)],
        });
        return res.ok ? res.data.ts : null;
      },
      settle: async (handle, text) => {
        const body = fitCap(mrkdwnSafe(text), SECTION_MAX)[0] ?? "";
        const res = await api.update({ channel: a.channel, ts: handle, text: body, blocks: [section(body)] });
        if (!res.ok) await this.reply(a, text);
      },
    };
  }
}

/**
 * Who a stream is for: Slack requires it outside a DM and accepts it in one, and Bolt's own
 * sayStream names it everywhere (slackapi/bolt-js src/context/create-say-stream.ts). A message
 * whose workspace is unknown names nobody (an empty team id would be refused).
 */
function recipientOf(a: SlackAddress): { recipient?: { userId: string; teamId: string } } {
  return a.userId && a.teamId ? { recipient: { userId: a.userId, teamId: a.teamId } } : {};
}
