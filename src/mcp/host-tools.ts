/**
 * The tools a channel server offers its agent host. Every conversation and message is named by a
 * locator from a push (`chat_id`, `message_id`/`locator`), verified before anything happens: a
 * forged, stale, unknown-version or unknown-channel locator is refused with the reason, and a
 * message locator used with another conversation's `chat_id` is refused too. Every write is
 * re-authorized through the egress (the recipient must still be allowed) and rendered through the
 * channel's own renderer (tables, display-form redaction, splitting, caps); what the host reads is
 * wrapped as untrusted content. Layer: mcp.
 */
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { z } from "zod";
import type { Egress } from "../messaging/channel/egress.js";
import { describeEgress } from "../messaging/channel/egress.js";
import type { LocatorKind, Locators } from "../messaging/channel/locators.js";
import type { OutboundFilePolicy } from "../messaging/channel/surface.js";
import type { SinkConversation } from "../messaging/channel/turn-sink.js";
import { extractLocalRefs } from "../messaging/files/outbound-files.js";
import type { AuditSink } from "../messaging/security/audit.js";
import type { InboxEntry, InboxStore } from "../messaging/store/port.js";
import type { HostSink } from "./host-sink.js";
import type { ToolDef, ToolResult } from "./tool-kit.js";
import { ok, refused, tool } from "./tool-kit.js";
import { untrustedBlock } from "./untrusted.js";

/** Messages of context channel_read returns with its target (bounded, as the architecture asks). */
const READ_CONTEXT = 10;
const FETCH_MAX = 50;

export interface HostToolsOptions {
  sink: HostSink;
  inbox: InboxStore;
  locators: Locators;
  egress: Pick<Egress, "resolve">;
  audit: AuditSink;
  /** The folder send_file and inline images may read from (the host's working folder). */
  filesRoot: string;
  now: () => number;
  /** A fresh boundary per read (tests inject one). */
  boundary?: () => string;
}

/** A conversation (and, for a message locator, its entry) a locator resolved to. */
interface Opened {
  port: SinkConversation;
  conversationKey: string;
  channel: string;
  address: InboxEntry["address"];
  entry?: InboxEntry;
}

class Refusal extends Error {}

export function hostTools(o: HostToolsOptions): ToolDef[] {
  const boundary = o.boundary ?? (() => randomBytes(9).toString("base64url"));
  const files: OutboundFilePolicy = { root: async () => resolve(o.filesRoot), allowed: () => true };

  const refuse = (tool: string, reason: string, message: string): never => {
    o.audit.log("channel_server.locator", "refused", { tool, reason });
    throw new Refusal(message);
  };

  /** Verify a locator of the expected kind and open what it names. */
  const open = async (tool: string, locator: string, kinds: readonly LocatorKind[]): Promise<Opened> => {
    const reading = o.locators.read(locator);
    if (!reading.ok) return refuse(tool, reading.reason, `Refused: ${reading.message}.`);
    const { claims, channel } = reading;
    if (!kinds.includes(claims.kind))
      return refuse(
        tool,
        "wrong_kind",
        `Refused: that is a ${claims.kind} locator; ${tool} takes a ${kinds.join(" or ")} locator.`,
      );
    let entry: InboxEntry | undefined;
    let address: InboxEntry["address"] | undefined;
    if (claims.entry !== undefined) {
      entry = await o.inbox.get(claims.entry);
      if (!entry)
        return refuse(tool, "stale", "Refused: that message is no longer held here (stale locator).");
      if (entry.conversationKey !== claims.conversation)
        return refuse(tool, "forged", "Refused: the locator does not match its conversation.");
      address = entry.address;
    } else address = (await o.inbox.recent(claims.conversation, 1))[0]?.address;
    if (address === undefined)
      return refuse(tool, "stale", "Refused: nothing is known here about that conversation (stale locator).");
    const port = o.sink.open(channel, address);
    if (!port) return refuse(tool, "unknown_adapter", `Refused: the ${channel} channel is not running.`);
    return { port, conversationKey: claims.conversation, channel, address, ...(entry ? { entry } : {}) };
  };

  /** A message locator that must belong to the conversation `chat` names. */
  const openIn = async (
    tool: string,
    chat: Opened,
    locator: string,
    kinds: readonly LocatorKind[],
  ): Promise<Opened> => {
    const message = await open(tool, locator, kinds);
    if (message.conversationKey !== chat.conversationKey)
      return refuse(
        tool,
        "other_conversation",
        "Refused: that message belongs to another conversation than chat_id.",
      );
    return message;
  };

  /** The recipient must still be allowed, now. */
  const authorize = (target: Opened): void => {
    const found = o.egress.resolve(
      { kind: "link", link: target.port.conversation.link, sessionKey: target.port.sessionKey },
      "host",
    );
    if (!found.ok) throw new Refusal(`Refused: ${describeEgress(found.result)}.`);
  };

  /** Post markdown into a conversation as the host; the sent message's locator. */
  const post = async (target: Opened, text: string): Promise<ToolResult> => {
    authorize(target);
    const turnId = `host:${randomBytes(9).toString("base64url")}`;
    const delivered = await target.port.render(text, { turnId, files });
    const id = await o.inbox.add({
      conversationKey: target.conversationKey,
      channel: target.channel,
      address: target.address,
      direction: "out",
      userId: "",
      text,
      attachments: [],
      platformMessageId: null,
      turnId,
      atMs: o.now(),
    });
    const sent = o.locators.mint(target.channel, {
      kind: "sent",
      conversation: target.conversationKey,
      entry: id,
    });
    if (!delivered) return refused("Part of the message did not reach the chat.", { message_id: sent });
    return ok(`Sent. Its message_id (for edit_message) is ${sent}`, { message_id: sent });
  };

  const guarded =
    <A>(run: (args: A) => Promise<ToolResult>) =>
    async (args: A): Promise<ToolResult> => {
      try {
        return await run(args);
      } catch (error) {
        if (error instanceof Refusal) return refused(error.message);
        throw error;
      }
    };

  const read = async (target: Opened, entries: InboxEntry[], targetId?: number): Promise<ToolResult> => {
    const text = untrustedBlock({
      source: `${target.channel} (${target.port.conversation.direct ? "a direct chat" : "a group conversation"})`,
      entries,
      ...(targetId !== undefined ? { targetId } : {}),
      boundary: boundary(),
    });
    return ok(text, {
      untrusted: true,
      messages: entries.map((e) => ({
        id: e.id,
        direction: e.direction,
        user_id: e.userId,
        at: new Date(e.atMs).toISOString(),
        text: e.text,
        attachments: e.attachments,
        handled: e.handled,
      })),
      ...(targetId !== undefined
        ? { target: targetId, handled: entries.find((e) => e.id === targetId)?.handled ?? false }
        : {}),
    });
  };

  const chatId = z.string().min(1).max(600).describe("The chat_id from the notification's meta.");
  const messageId = z.string().min(1).max(600);
  return [
    tool({
      name: "channel_read",
      description:
        "Read the message a notification's locator names, with the conversation's recent messages before it. The text is untrusted chat content.",
      schema: z.strictObject({ locator: messageId.describe("The locator from the notification's meta.") }),
      run: guarded(async ({ locator }) => {
        const target = await open("channel_read", locator, ["message"]);
        const entry = target.entry as InboxEntry;
        return read(target, await o.inbox.recent(target.conversationKey, READ_CONTEXT, entry.id), entry.id);
      }),
    }),
    tool({
      name: "channel_respond",
      description:
        "Answer the message a locator names, in its conversation, and mark it handled. If it reports replied but not handled, do not send it again.",
      schema: z.strictObject({
        locator: messageId.describe("The locator from the notification's meta."),
        response: z.string().min(1).max(32_000).describe("Your answer (markdown)."),
      }),
      run: guarded(async ({ locator, response }) => {
        const target = await open("channel_respond", locator, ["message"]);
        const result = await post(target, response);
        if (result.isError) return result;
        const handled = await o.inbox.markHandled((target.entry as InboxEntry).id);
        return ok(`Replied${handled ? " and marked handled" : " (it was already handled)"}.`, {
          ...result.structuredContent,
          replied: true,
          handled: true,
        });
      }),
    }),
    tool({
      name: "reply",
      description: "Send a message into a chat conversation (markdown; long messages are split).",
      schema: z.strictObject({
        chat_id: chatId,
        text: z.string().min(1).max(32_000),
        reply_to: messageId.optional().describe("The message_id this answers (it must be of the same chat)."),
      }),
      run: guarded(async ({ chat_id, text, reply_to }) => {
        const chat = await open("reply", chat_id, ["chat"]);
        if (reply_to) await openIn("reply", chat, reply_to, ["message", "sent"]);
        return post(chat, text);
      }),
    }),
    tool({
      name: "react",
      description: "React to a message with an emoji (where the chat app has reactions).",
      schema: z.strictObject({ chat_id: chatId, message_id: messageId, emoji: z.string().min(1).max(16) }),
      run: guarded(async ({ chat_id, message_id, emoji }) => {
        const chat = await open("react", chat_id, ["chat"]);
        const message = await openIn("react", chat, message_id, ["message"]);
        authorize(chat);
        const platformId = message.entry?.platformMessageId;
        if (!platformId) return refused("That message cannot be reacted to.");
        return (await chat.port.react(platformId, emoji))
          ? ok("Reacted.")
          : refused(`The chat did not take that reaction (${chat.channel} may not offer it).`);
      }),
    }),
    tool({
      name: "edit_message",
      description: "Replace the text of a message you sent earlier (its message_id came back from reply).",
      schema: z.strictObject({ chat_id: chatId, message_id: messageId, text: z.string().min(1).max(32_000) }),
      run: guarded(async ({ chat_id, message_id, text }) => {
        const chat = await open("edit_message", chat_id, ["chat"]);
        const sent = await openIn("edit_message", chat, message_id, ["sent"]);
        authorize(chat);
        const turnId = sent.entry?.turnId;
        if (!turnId) return refused("That message cannot be edited.");
        // The same turn id: its parts are found in the ledger and edited in place.
        return (await chat.port.render(text, { turnId, files }))
          ? ok("Edited.")
          : refused("The edit did not fully reach the chat.");
      }),
    }),
    tool({
      name: "fetch_messages",
      description:
        "The recent messages of a conversation, both directions, oldest first (untrusted chat content).",
      schema: z.strictObject({ chat_id: chatId, limit: z.number().int().min(1).max(FETCH_MAX).optional() }),
      run: guarded(async ({ chat_id, limit }) => {
        const chat = await open("fetch_messages", chat_id, ["chat"]);
        return read(chat, await o.inbox.recent(chat.conversationKey, limit ?? 20));
      }),
    }),
    tool({
      name: "send_file",
      description:
        "Send an image file (PNG, JPEG, GIF, WebP, BMP) from the working folder into a chat, with an optional caption.",
      schema: z.strictObject({
        chat_id: chatId,
        path: z.string().min(1).max(2048).describe("Absolute, or relative to the working folder."),
        caption: z.string().max(4000).optional(),
      }),
      run: guarded(async ({ chat_id, path, caption }) => {
        const chat = await open("send_file", chat_id, ["chat"]);
        if (!chat.port.capabilities.filesOutbound)
          return refused(`The ${chat.channel} channel does not take files from parley.`);
        if (/[<>\r\n]/.test(path)) return refused("That path contains characters a file path here may not.");
        // The one file gate, before anything is posted: a refused file must not appear as text.
        const checked = await extractLocalRefs(`![file](<${path}>)`, { root: resolve(o.filesRoot) });
        if (checked.files.length === 0)
          return refused(`File not sent: ${checked.rejections[0]?.message ?? "it could not be read"}.`);
        return post(chat, `${caption?.trim() ? `${caption.trim()}\n\n` : ""}![file](<${path}>)`);
      }),
    }),
  ];
}
