/**
 * The channel server's turn sink: every authorized chat message is kept in the inbox (durable, so
 * its locator resolves after a restart) and pushed to the agent host as `notifications/claude/channel`.
 * Messages of one conversation arriving within a short window are pushed as ONE wake with
 * `meta.count`. With body-free wakes (the default) a push carries only who, where and locators,
 * never the message body: the host reads it through `channel_read`, which marks it untrusted.
 * Pushes wait until the host has finished its handshake. Layer: mcp.
 */
import type { Clock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { Locators } from "../messaging/channel/locators.js";
import type { SinkConversation, SinkMessage, TurnSink } from "../messaging/channel/turn-sink.js";
import type { AuditSink } from "../messaging/security/audit.js";
import type { ChannelLink } from "../messaging/session/keys.js";
import type { InboxStore, JsonValue } from "../messaging/store/port.js";

/** A push: freeform content and meta whose keys are identifiers and values carry no user text. */
export interface ChannelNotification {
  content: string;
  meta: Record<string, string>;
}

/** Commands that still mean something when the agent is the host's. */
export const HOST_COMMANDS: ReadonlySet<string> = new Set([
  "help",
  "title",
  "link",
  "unlink",
  "yolo",
  "every",
  "at",
  "jobs",
  "unschedule",
]);

/** A conversation the sink has heard from: how to reach back into it. */
export interface KnownConversation {
  channel: string;
  conversationKey: string;
  address: JsonValue;
  link: ChannelLink;
  direct: boolean;
}

export interface HostSinkOptions {
  inbox: InboxStore;
  locators: Locators;
  push(notification: ChannelNotification): Promise<void>;
  /** Messages of one conversation within this many ms become one wake. */
  coalesceMs: number;
  /** Wakes carry no message body (read with channel_read). */
  bodyFree: boolean;
  clock: Clock;
  logger: Logger;
  audit: AuditSink;
  /** A typed permission answer (`yes abcde`) is the relay's, not a message for the host. */
  intercept?(message: SinkMessage, from: KnownConversation): Promise<boolean>;
}

interface Pending {
  from: KnownConversation;
  entries: { id: number; message: SinkMessage }[];
  timer: unknown;
  settle: ((pushed: boolean) => void)[];
}

export const conversationKeyOf = (channel: string, route: string): string => `${channel}:${route}`;

export class HostSink implements TurnSink {
  readonly commands = HOST_COMMANDS;
  private readonly ports = new Map<string, (address: JsonValue) => SinkConversation>();
  private readonly pending = new Map<string, Pending>();
  private readonly known = new Map<string, KnownConversation>();
  private ready = false;
  private stopped = false;
  /** Pushes waiting for the handshake: sent by hostReady, reported not pushed by stop. */
  private readonly held: { send: () => Promise<void>; drop: () => void }[] = [];
  /** The conversation that spoke last (where a permission prompt goes without a configured target). */
  last: KnownConversation | undefined;

  constructor(private readonly o: HostSinkOptions) {}

  attach(channel: string, open: (address: JsonValue) => SinkConversation): void {
    this.ports.set(channel, open);
  }

  /** A conversation of a running channel, by its channel and address; undefined when that channel is not running. */
  open(channel: string, address: JsonValue): SinkConversation | undefined {
    return this.ports.get(channel)?.(address);
  }

  channels(): string[] {
    return [...this.ports.keys()];
  }

  /** A conversation heard from since start, by where it is. */
  knownAt(link: ChannelLink): KnownConversation | undefined {
    return this.known.get(linkKey(link));
  }

  async intercept(message: SinkMessage): Promise<boolean> {
    return (await this.o.intercept?.(message, this.remember(message))) ?? false;
  }

  async take(message: SinkMessage): Promise<{ pushed: Promise<boolean> }> {
    const from = this.remember(message);
    const id = await this.o.inbox.add({
      conversationKey: from.conversationKey,
      channel: message.channel,
      address: message.address,
      direction: "in",
      userId: message.userId,
      text: message.text,
      attachments: message.attachments.map((a) => a.name),
      platformMessageId: message.messageId ?? null,
      turnId: null,
      atMs: message.atMs,
    });
    this.last = from;
    return { pushed: this.enqueue(from, id, message) };
  }

  /** A scheduled prompt is due (channel-server mode): kept like a message, pushed at once. */
  async wake(from: KnownConversation, text: string, note: string): Promise<boolean> {
    const id = await this.o.inbox.add({
      conversationKey: from.conversationKey,
      channel: from.channel,
      address: from.address,
      direction: "in",
      userId: "schedule",
      text,
      attachments: [],
      platformMessageId: null,
      turnId: null,
      atMs: this.o.clock.now(),
    });
    return this.deliver(from, [{ id, userId: "schedule", text }], note);
  }

  /** The host finished its handshake: what waited goes out, in order. */
  async hostReady(): Promise<void> {
    this.ready = true;
    for (const waiting of this.held.splice(0)) await waiting.send();
  }

  /** Nothing more is pushed; what waits is reported not pushed (its journal ticket stays open). */
  stop(): void {
    this.stopped = true;
    for (const p of this.pending.values()) {
      this.o.clock.clearTimeout(p.timer);
      for (const settle of p.settle) settle(false);
    }
    this.pending.clear();
    for (const waiting of this.held.splice(0)) waiting.drop();
  }

  private remember(message: SinkMessage): KnownConversation {
    const from: KnownConversation = {
      channel: message.channel,
      conversationKey: conversationKeyOf(message.channel, message.conversation.route),
      address: message.address,
      link: message.conversation.link,
      direct: message.conversation.direct,
    };
    this.known.set(linkKey(from.link), from);
    return from;
  }

  private enqueue(from: KnownConversation, id: number, message: SinkMessage): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    return new Promise<boolean>((settle) => {
      let p = this.pending.get(from.conversationKey);
      if (!p) {
        p = { from, entries: [], timer: null, settle: [] };
        this.pending.set(from.conversationKey, p);
        const mine = p;
        p.timer = this.o.clock.setTimeout(
          () => void this.flush(from.conversationKey, mine),
          this.o.coalesceMs,
        );
      }
      p.entries.push({ id, message });
      p.settle.push(settle);
    });
  }

  private async flush(key: string, p: Pending): Promise<void> {
    if (this.pending.get(key) !== p) return;
    this.pending.delete(key);
    const ok = await this.deliver(
      p.from,
      p.entries.map((e) => ({ id: e.id, userId: e.message.userId, text: e.message.text })),
    );
    for (const settle of p.settle) settle(ok);
  }

  /** One push for these entries (the last is the one its locator names); waits for the handshake. */
  private deliver(
    from: KnownConversation,
    entries: { id: number; userId: string; text: string }[],
    note?: string,
  ): Promise<boolean> {
    const last = entries[entries.length - 1];
    if (!last) return Promise.resolve(true);
    const chat = this.o.locators.mint(from.channel, { kind: "chat", conversation: from.conversationKey });
    const locator = this.o.locators.mint(from.channel, {
      kind: "message",
      conversation: from.conversationKey,
      entry: last.id,
    });
    const count = entries.length;
    const where = from.direct ? "a direct chat" : "a group conversation";
    const who = last.userId === "schedule" ? "a scheduled prompt" : `user ${last.userId}`;
    const content = this.o.bodyFree
      ? `${note ?? `${count === 1 ? "A new message" : `${count} new messages`} on ${from.channel} from ${who} in ${where}.`} Read it with channel_read (locator), answer with channel_respond.`
      : entries.map((e) => e.text).join("\n\n");
    const notification: ChannelNotification = {
      content,
      meta: {
        source: from.channel,
        chat_id: chat,
        message_id: locator,
        locator,
        user_id: last.userId,
        chat_type: from.direct ? "direct" : "group",
        count: String(count),
      },
    };
    const send = async (): Promise<boolean> => {
      if (this.stopped) return false;
      try {
        await this.o.push(notification);
        this.o.audit.log("channel_server.push", "sent", { channel: from.channel, count });
        return true;
      } catch (error) {
        this.o.logger.error("channel server: a push to the host failed", { error: String(error) });
        return false;
      }
    };
    if (this.ready) return send();
    return new Promise<boolean>((resolve) =>
      this.held.push({ send: async () => resolve(await send()), drop: () => resolve(false) }),
    );
  }
}

function linkKey(link: ChannelLink): string {
  return `${link.channelType}\u0000${link.conversationId}\u0000${link.threadId ?? ""}`;
}
