/**
 * Telegram's intake: updates from the poller through the transport's audited gate into the hub.
 * Albums are collected into one message; button presses settle approvals, model lists and
 * [OPTIONS:] choices. `handleUpdate` answers `accepted` once the message is routed (so the poller
 * keeps per-chat order) and `settled` once the update is terminal (the cursor advances past it only
 * then).
 */
import type { ChannelContext } from "../messaging/channel/contract.js";
import type { ConversationHub } from "../messaging/channel/hub.js";
import type { InboundMessage } from "../messaging/channel/transport.js";
import { AlbumCollector } from "./albums.js";
import { optionLabel, parseApprovalData, parseModelData } from "./buttons.js";
import { activationOutcome } from "./gate.js";
import type { TelegramSettings } from "./index.js";
import type { Route } from "./routes.js";
import { routeOf } from "./routes.js";
import type { TelegramExtra, TelegramSurface } from "./surface.js";
import type { TelegramTransport } from "./transport.js";
import { threadOf } from "./transport.js";
import type { TgCallbackQuery, TgMessage, TgUpdate } from "./wire.js";
export interface UpdateHandling {
  accepted: Promise<void>;
  settled: Promise<void>;
}

const DONE: UpdateHandling = { accepted: Promise.resolve(), settled: Promise.resolve() };

/** One message as the conversation path needs it (an album's items arrive merged into one). */
interface Incoming {
  message: InboundMessage;
  raw: TgMessage | undefined;
}

/** Updates from the poller, through the transport's gate into the hub. */
export class TelegramUpdates {
  readonly albums: AlbumCollector<Incoming>;

  constructor(
    private readonly transport: TelegramTransport,
    private readonly surface: TelegramSurface,
    private readonly hub: ConversationHub<Route, TelegramExtra>,
    private readonly ctx: Pick<ChannelContext, "clock" | "logger" | "audit">,
    albums: { settleMs?: number; maxWaitMs?: number } = {},
  ) {
    this.albums = new AlbumCollector<Incoming>({
      timers: ctx.clock,
      logger: ctx.logger,
      flush: (items) => this.converse(mergeAlbum(items)),
      ...albums,
    });
  }

  handleUpdate(update: TgUpdate): UpdateHandling {
    if (update.callback_query) {
      const done = this.hub.track(this.onCallback(update.callback_query)).then(() => {});
      return { accepted: done, settled: done };
    }
    if (!update.message) return DONE;
    let finish: () => void = () => {};
    const turnDone = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const accepted = this.hub
      .track(
        (async () => {
          const outcome = await this.transport.receive(update);
          if (outcome.status !== "dispatched") return finish();
          const { turn } = await this.onMessage(outcome.message);
          turn.then(finish, (error: unknown) => {
            this.ctx.logger.error("telegram: turn failed", { error: String(error) });
            finish();
          });
        })().catch((error: unknown) => {
          finish();
          throw error;
        }),
      )
      .then(() => {});
    return { accepted, settled: accepted.then(() => turnDone) };
  }

  private async onMessage(message: InboundMessage) {
    const raw = this.transport.rawOf(message);
    const r = routeOf(message.userId, message.conversationId, message.threadId);
    const album = raw?.media_group_id;
    if (album !== undefined && message.attachments.length > 0)
      return this.albums.add(r.route, album, { message, raw });
    // Anything else from this conversation comes after the album sent before it.
    await this.albums.flush(r.route);
    return this.converse({ message, raw });
  }

  private converse({ message }: Incoming) {
    return this.hub.handle({
      address: routeOf(message.userId, message.conversationId, message.threadId),
      userId: message.userId,
      text: message.text,
      attachments: message.attachments,
      ...(message.messageId !== undefined ? { messageId: message.messageId } : {}),
      isMention: message.isMention,
    });
  }

  private async onCallback(q: TgCallbackQuery): Promise<void> {
    const t = this.transport;
    // An unauthorized presser gets no answer at all (audited by the transport).
    if (!t.authorizeCallback(q) || !q.message) return;
    const m = q.message;
    const r = routeOf(String(q.from.id), String(m.chat.id), threadOf(m));
    const data = q.data ?? "";
    if (data.startsWith("a:")) {
      const press = parseApprovalData(data);
      if (!press) this.ctx.audit.log("tool_permission", "refused", { reason: "malformed_press" });
      const outcome = press ? await this.hub.press(r, press) : { ok: false as const, text: "" };
      if (!outcome.ok) {
        await t.answerCallback(q.id, outcome.text || undefined);
        // A stale button should not keep inviting presses.
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
    if (label === null) return;
    await t
      .clearKeyboard(r.chatId, m.message_id)
      .catch((error: unknown) =>
        this.ctx.logger.debug("telegram: clearing an options keyboard failed", { error: String(error) }),
      );
    // A label is model-authored: it is sent as text with command interpretation OFF.
    await this.surface.reply(r, `› ${label}`);
    const { turn } = await this.hub.handle({
      address: r,
      userId: String(q.from.id),
      text: label,
      interpretCommands: false,
    });
    void this.hub.track(turn);
  }

  /** Shutdown: a held album is routed now, like any message that arrived before the stop. */
  async shutdown(): Promise<void> {
    await this.albums.flushAll();
    await this.hub.shutdown();
  }
}

/** An album's items as one message: the captions in order, every file, a mention if any had one. */
function mergeAlbum(items: readonly Incoming[]): Incoming {
  const sorted = [...items].sort((a, b) => (a.raw?.message_id ?? 0) - (b.raw?.message_id ?? 0));
  const [first] = sorted as [Incoming, ...Incoming[]];
  const message: InboundMessage = {
    ...first.message,
    text: sorted
      .map((i) => i.message.text)
      .filter((text) => text.trim() !== "")
      .join("\n\n"),
    attachments: sorted.flatMap((i) => i.message.attachments),
    isMention: sorted.some((i) => i.message.isMention),
  };
  return { message, raw: first.raw };
}

/** The Topic activation gate, applied after commands (a command in a Topic needs no mention). */
export function topicAdmits(
  settings: Pick<TelegramSettings, "forumActivation">,
  audit: ChannelContext["audit"],
): (message: { address: Route; isMention?: boolean; interpretCommands?: boolean }) => boolean {
  return (message) => {
    // A press on the bot's own keyboard addresses the bot.
    if (message.interpretCommands === false) return true;
    const chatType = message.address.chatType === "forum" ? "supergroup" : "private";
    const activation = activationOutcome(chatType, settings.forumActivation, message.isMention ?? false);
    if (activation === "activated") return true;
    audit.log("telegram.activation", "denied", { chat: message.address.chatId, reason: activation });
    return false;
  };
}
