/**
 * Telegram's surface for the hub: its address is a Route (a DM, or a forum Topic); replies,
 * receipts and model lists are Telegram-HTML through the transport; the renderer streams by edits.
 */
import type { ChannelContext } from "../messaging/channel/contract.js";
import type { TurnParts } from "../messaging/channel/delivery.js";
import type {
  ChannelSurface,
  Conversation,
  IncomingMessage,
  PickerSurface,
  TurnStart,
} from "../messaging/channel/surface.js";
import type { InboundAttachment } from "../messaging/channel/transport.js";
import type { Attachment } from "../messaging/files/ingest.js";
import type { ReceiptSurface } from "../messaging/queue/receipt.js";
import { splitMarkdownSafe } from "../messaging/text/split.js";
import { distinctNames, TELEGRAM_INGEST_LIMITS } from "./attachments.js";
import { modelKeyboard } from "./buttons.js";
import { fitTelegramHtml } from "./html.js";
import type { TelegramDmScope } from "./index.js";
import { STEER_RECEIPT_EMOJI, TELEGRAM_SOURCE_CAP } from "./limits.js";
import type { TelegramRendererOptions } from "./renderer.js";
import { TelegramRenderer } from "./renderer.js";
import type { Route } from "./routes.js";
import { locationOf, sessionKeyFor } from "./routes.js";
import type { TelegramTransport } from "./transport.js";

/** What a queued Telegram message carries besides its text and files: nothing. */
export type TelegramExtra = undefined;

export interface TelegramSurfaceOptions {
  transport: TelegramTransport;
  agentName: string;
  dmScope: TelegramDmScope;
  /** Only a sender known to BE the operator may share the unified bucket: one allow-listed id. */
  soleOperator: boolean;
  renderer?: Partial<Omit<TelegramRendererOptions, "chatId" | "threadId" | "uploads">>;
}

export class TelegramSurface implements ChannelSurface<Route, TelegramExtra> {
  readonly ingestLimits = TELEGRAM_INGEST_LIMITS;

  constructor(
    private readonly o: TelegramSurfaceOptions,
    private readonly ctx: Pick<ChannelContext, "clock" | "logger">,
  ) {}

  conversation(r: Route): Conversation {
    return { route: r.route, direct: r.chatType === "direct", link: locationOf(r) };
  }

  sessionKey(r: Route, generation: number): string {
    return sessionKeyFor(r, {
      agent: this.o.agentName,
      gen: generation,
      dmScope: this.o.dmScope,
      operator: this.o.soleOperator,
    });
  }

  /** Markdown into a route, split and bound like every body; false when a part did not land. */
  async reply(r: Route, text: string, parts?: TurnParts): Promise<boolean> {
    const t = this.o.transport;
    const post = async (html: string, onWire?: () => Promise<void>) =>
      String(await t.postHtml(r.chatId, html, { threadId: r.threadId, ...(onWire ? { onWire } : {}) }));
    for (const source of splitMarkdownSafe(text, TELEGRAM_SOURCE_CAP)) {
      for (const html of fitTelegramHtml(source)) {
        try {
          if (!parts) await post(html);
          else
            await parts.post(html, {
              marksSending: true,
              create: (_key, sending) => post(html, sending),
              replace: async (earlier) => {
                await t.editHtml(r.chatId, Number(earlier), html, { inline_keyboard: [] });
                return true;
              },
            });
        } catch (error) {
          this.ctx.logger.warn("telegram: reply failed", { error: String(error) });
          return false;
        }
      }
    }
    return true;
  }

  receipts(r: Route): ReceiptSurface {
    const t = this.o.transport;
    return {
      post: async (text) =>
        String(await t.postHtml(r.chatId, fitTelegramHtml(text)[0] ?? "", { threadId: r.threadId })),
      // Edited, never deleted: the receipt is the record that a held message was accepted.
      edit: async (id, text) => t.editHtml(r.chatId, Number(id), fitTelegramHtml(text)[0] ?? ""),
    };
  }

  newRenderer(r: Route, turn: TurnStart<TelegramExtra>): TelegramRenderer {
    return new TelegramRenderer(this.o.transport, {
      chatId: r.chatId,
      threadId: r.threadId,
      timers: this.ctx.clock,
      now: () => this.ctx.clock.now(),
      logger: this.ctx.logger,
      uploads: turn.files,
      parts: turn.parts,
      ...this.o.renderer,
    });
  }

  attachments(files: { refs: readonly InboundAttachment[] }): Attachment[] {
    return distinctNames(files.refs).map((f) => this.o.transport.attachmentSource(f));
  }

  /** An agent host's reaction (channel-server mode); false when Telegram refused it. */
  react(r: Route, messageId: string, emoji: string): Promise<boolean> {
    return this.o.transport.react(r.chatId, Number(messageId), emoji);
  }

  async acknowledgeSteer(r: Route, messageId: string): Promise<void> {
    await this.o.transport.react(r.chatId, Number(messageId), STEER_RECEIPT_EMOJI);
  }

  /** An album's items resumed together after a restart: one message again, as when first sent. */
  mergeGroup(
    messages: readonly IncomingMessage<Route, TelegramExtra>[],
  ): IncomingMessage<Route, TelegramExtra> {
    return mergeAlbumItems(messages);
  }

  pickers(r: Route): PickerSurface & { retire(handle: string): Promise<void> } {
    const t = this.o.transport;
    const log = this.ctx.logger;
    return {
      // Escaping grows the HTML past the source: a margin keeps the list one message.
      maxChars: 3000,
      post: async (text, labels) => {
        try {
          const id = await t.postHtml(r.chatId, fitTelegramHtml(text)[0] ?? "", {
            threadId: r.threadId,
            replyMarkup: modelKeyboard(labels),
          });
          // Telegram numbers messages per chat: the chat is part of the handle.
          return `${r.chatId}:${id}`;
        } catch (error) {
          log.warn("telegram: posting a picker failed", { error: String(error) });
          return null;
        }
      },
      settle: async (handle, text) => {
        try {
          await t.editHtml(r.chatId, messageIdOf(handle), fitTelegramHtml(text)[0] ?? "", {
            inline_keyboard: [],
          });
        } catch (error) {
          log.warn("telegram: settling a picker failed", { error: String(error) });
          await t.clearKeyboard(r.chatId, messageIdOf(handle)).catch(() => undefined);
          await this.reply(r, text);
        }
      },
      retire: (handle) => t.clearKeyboard(r.chatId, messageIdOf(handle)),
    };
  }
}

const messageIdOf = (handle: string) => Number(handle.slice(handle.lastIndexOf(":") + 1));

/**
 * An album as one message: its items in the order Telegram numbered them, the captions joined, every
 * file, a mention if any item had one. Used when the album arrives and when it is resumed.
 */
export function mergeAlbumItems<M extends IncomingMessage<Route, TelegramExtra>>(items: readonly M[]): M {
  const sorted = [...items].sort((a, b) => Number(a.messageId ?? 0) - Number(b.messageId ?? 0));
  const [first] = sorted as [M, ...M[]];
  return {
    ...first,
    text: sorted
      .map((i) => i.text)
      .filter((text) => text.trim() !== "")
      .join("\n\n"),
    attachments: sorted.flatMap((i) => i.attachments ?? []),
    isMention: sorted.some((i) => i.isMention),
    tickets: sorted.flatMap((i) => i.tickets ?? []),
  };
}
