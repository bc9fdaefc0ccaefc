/**
 * Telegram's intake: updates from the poller through the transport's audited gate into the hub.
 * Every authorized message is journaled by the hub before the poller's cursor may pass its update
 * (accept-before-ack: the next getUpdates is Telegram's acknowledgement); a redelivered update is
 * dropped there. Albums are journaled item by item and routed as one message. Button presses
 * settle approvals, model lists and [OPTIONS:] choices (a chosen option is journaled like a
 * message). `handleUpdate` answers `accepted` once the update is journaled (or needed no journal),
 * so the poller takes the next one at once and moves the cursor only past what is safe; routing
 * goes on in the background, each chat's messages in order (the hub's `handleInOrder`).
 */
import type { ChannelContext } from "../messaging/channel/contract.js";
import type { ConversationHub } from "../messaging/channel/hub.js";
import { unknownPress } from "../messaging/channel/inbound-drops.js";
import type { IncomingMessage } from "../messaging/channel/surface.js";
import type { InboundMessage } from "../messaging/channel/transport.js";
import { AlbumCollector } from "./albums.js";
import { optionLabel, parseApprovalData, parseModelData } from "./buttons.js";
import { activationOutcome } from "./gate.js";
import type { TelegramSettings } from "./index.js";
import type { Route } from "./routes.js";
import { routeOf } from "./routes.js";
import type { TelegramExtra, TelegramSurface } from "./surface.js";
import { mergeAlbumItems } from "./surface.js";
import type { TelegramTransport } from "./transport.js";
import { threadOf } from "./transport.js";
import type { TgCallbackQuery, TgUpdate } from "./wire.js";
export interface UpdateHandling {
  /**
   * The update is journaled (or needed no journal): the cursor may pass it. Rejects when it could
   * not be journaled; the cursor then stays, and Telegram delivers it again.
   */
  accepted: Promise<void>;
}

const DONE: UpdateHandling = { accepted: Promise.resolve() };

/** One message as the conversation path needs it (an album's items arrive merged into one). */
type Incoming = IncomingMessage<Route, TelegramExtra>;

/** Updates from the poller, through the transport's gate into the hub. */
export class TelegramUpdates {
  readonly albums: AlbumCollector<Incoming>;

  constructor(
    private readonly transport: TelegramTransport,
    private readonly surface: TelegramSurface,
    private readonly hub: ConversationHub<Route, TelegramExtra>,
    private readonly ctx: Pick<ChannelContext, "clock" | "logger" | "audit" | "drops">,
    albums: { settleMs?: number; maxWaitMs?: number } = {},
  ) {
    this.albums = new AlbumCollector<Incoming>({
      timers: ctx.clock,
      logger: ctx.logger,
      flush: (items) => this.hub.handleInOrder(mergeAlbumItems(items)),
      ...albums,
    });
  }

  handleUpdate(update: TgUpdate): UpdateHandling {
    // Without its id an update cannot be deduped against a redelivery, nor confirmed.
    if (!Number.isSafeInteger(update.update_id)) {
      this.ctx.drops.record({ reason: "missing_id", fields: { kind: updateKind(update) } });
      return DONE;
    }
    if (update.callback_query) {
      const q = update.callback_query;
      return { accepted: this.hub.track(this.onCallback(q, update.update_id)).then(() => {}) };
    }
    if (!update.message) {
      this.dropUnhandled(update);
      return DONE;
    }
    const accepted = new Promise<void>((resolve, reject) => {
      let journaled = false;
      const onJournaled = () => {
        journaled = true;
        resolve();
      };
      const work = (async () => {
        const outcome = await this.transport.receive(update);
        if (outcome.status !== "dispatched") return;
        const { turn } = await this.onMessage(outcome.message, update.update_id, onJournaled);
        void this.hub.track(turn);
      })();
      void this.hub.track(
        work.then(resolve, (error: unknown) => {
          // Before the journal: the poller keeps the cursor (Telegram delivers it again).
          if (!journaled) reject(error);
          throw error;
        }),
      );
    });
    return { accepted };
  }

  /**
   * An update that is neither a message nor a press: an edit (parley answers what was sent, not
   * what it became) or a kind outside `allowed_updates` (a shape parley does not read).
   */
  private dropUnhandled(update: TgUpdate): void {
    const kind = updateKind(update);
    if (update.edited_message) {
      const m = update.edited_message;
      this.ctx.drops.record({
        reason: "edited",
        ...(m.from ? { user: String(m.from.id) } : {}),
        conversation: String(m.chat.id),
        fields: { update: update.update_id },
      });
      return;
    }
    this.ctx.drops.record({ reason: "unknown_shape", shape: kind, fields: { update: update.update_id } });
  }

  /** Journal the message (`journaled` is told when it is), then route it; resolves once routed. */
  private async onMessage(message: InboundMessage, updateId: number, journaled: () => void) {
    const raw = this.transport.rawOf(message);
    const incoming: Incoming = {
      address: routeOf(message.userId, message.conversationId, message.threadId),
      userId: message.userId,
      text: message.text,
      attachments: message.attachments,
      ...(message.messageId !== undefined ? { messageId: message.messageId } : {}),
      isMention: message.isMention,
    };
    // The update id is what Telegram redelivers under: the dedupe key.
    const source = { platformId: `update:${updateId}` };
    const album = raw?.media_group_id;
    if (album !== undefined && message.attachments.length > 0) {
      // Each item is journaled as it comes (the cursor moves on); the album is routed once, merged.
      const ticket = await this.hub.accept(incoming, { ...source, group: `album:${album}` });
      journaled();
      if (ticket === null) return { turn: Promise.resolve() };
      return this.albums.add(incoming.address.route, album, { ...incoming, tickets: ticket ? [ticket] : [] });
    }
    // Anything else from this conversation comes after the album sent before it: flushing queues
    // the album's routing now, ahead of this message's (no need to wait for it here).
    void this.albums.flush(incoming.address.route);
    return this.hub.receive(incoming, source, { onAccepted: journaled });
  }

  private async onCallback(q: TgCallbackQuery, updateId: number): Promise<void> {
    const t = this.transport;
    // An unauthorized presser gets no answer at all (counted by the transport).
    if (!t.authorizeCallback(q)) return;
    const m = q.message;
    const r = routeOf(String(q.from.id), String(m.chat.id), threadOf(m));
    const data = q.data ?? "";
    if (data.startsWith("a:")) {
      const press = parseApprovalData(data);
      if (!press)
        this.ctx.drops.record({
          reason: "malformed_press",
          operation: "tool_permission",
          outcome: "refused",
          user: String(q.from.id),
        });
      const outcome = press ? await this.hub.press(r, press) : { ok: false as const, text: "" };
      if (!outcome.ok) {
        await t.answerCallback(q.id, outcome.text || undefined);
        // A stale button should not keep inviting presses; an unjudged one may still count.
        if ("unconfirmed" in outcome) return;
        await t
          .clearKeyboard(r.chatId, m.message_id)
          .catch((error: unknown) =>
            this.ctx.logger.debug("telegram: clearing a stale keyboard failed", { error: String(error) }),
          );
        return;
      }
      await t.answerCallback(q.id, outcome.label);
      return;
    }
    const modelIndex = parseModelData(data);
    if (modelIndex !== null) {
      const handle = `${r.chatId}:${m.message_id}`;
      const pick = await this.hub.pickModel(
        r,
        { handle, index: modelIndex, presser: String(q.from.id) },
        this.surface.pickers(r),
      );
      // A refusal is shown to the presser alone; the switch itself runs off the intake path.
      await t
        .answerCallback(q.id, "refusal" in pick ? pick.refusal : undefined)
        .catch((error: unknown) =>
          this.ctx.logger.warn("telegram: answering a press failed", { error: String(error) }),
        );
      if ("applied" in pick) void this.hub.track(pick.applied);
      return;
    }
    const label = optionLabel(data, m.reply_markup);
    await t.answerCallback(q.id, label ?? undefined);
    if (label === null) {
      // Not a button parley drew on that message (or one it no longer shows): nothing to choose.
      this.ctx.drops.record(unknownPress(String(q.from.id), r.chatId, "callback"));
      return;
    }
    await t
      .clearKeyboard(r.chatId, m.message_id)
      .catch((error: unknown) =>
        this.ctx.logger.debug("telegram: clearing an options keyboard failed", { error: String(error) }),
      );
    // A label is model-authored: it is sent as text with command interpretation OFF. Journaled like
    // a message: the choice is the user's next message to the agent.
    await this.surface.reply(r, `› ${label}`);
    const { turn } = await this.hub.receive(
      { address: r, userId: String(q.from.id), text: label, interpretCommands: false },
      { platformId: `update:${updateId}` },
    );
    void this.hub.track(turn);
  }

  /** Shutdown: a held album is routed now, like any message that arrived before the stop. */
  async shutdown(): Promise<void> {
    await this.albums.flushAll();
    await this.hub.shutdown();
  }
}

/** The Topic activation gate, applied after commands (a command in a Topic needs no mention). */
export function topicAdmits(
  settings: Pick<TelegramSettings, "forumActivation">,
  drops: ChannelContext["drops"],
): (message: {
  address: Route;
  userId: string;
  isMention?: boolean;
  interpretCommands?: boolean;
}) => boolean {
  return (message) => {
    // A press on the bot's own keyboard addresses the bot.
    if (message.interpretCommands === false) return true;
    const chatType = message.address.chatType === "forum" ? "supergroup" : "private";
    const activation = activationOutcome(chatType, settings.forumActivation, message.isMention ?? false);
    if (activation === "activated") return true;
    drops.record({
      reason: activation,
      operation: "telegram.activation",
      outcome: "denied",
      user: message.userId,
      conversation: message.address.chatId,
      fields: { chat: message.address.chatId },
    });
    return false;
  };
}

/** The kind of an update: the name of its one optional field (the Bot API sets exactly one). */
function updateKind(update: TgUpdate): string {
  return Object.keys(update).find((key) => key !== "update_id") ?? "(empty update)";
}
