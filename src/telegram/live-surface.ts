/**
 * Telegram as a LiveSurface: Telegram-HTML bodies bound to 4096 UTF-16 units at the wire (from a
 * 4000 code-point source cap), inline keyboards for choices and prompts, italics for the quiet
 * line, silent notices, "typing…" every few seconds (it expires after 5 s), and photo albums after
 * the text. Every message a turn creates is one of its parts (a resumed turn edits what its first
 * run posted there).
 */
import type { Logger } from "../messaging/base/logger.js";
import type { TurnParts } from "../messaging/channel/delivery.js";
import type { LiveFiles, LiveMessage, LiveSurface } from "../messaging/channel/live-surface.js";
import type { OutboundFile } from "../messaging/files/outbound-files.js";
import { hideLocalRefs } from "../messaging/files/outbound-files.js";
import type { PromptOption } from "../messaging/turn/renderer.js";
import { approvalKeyboard, approvalVerdictsOf, optionsKeyboard } from "./buttons.js";
import { apiErrorOf } from "./errors.js";
import { escapeHtml, fitTelegramHtml, toTelegramHtml } from "./html.js";
import { TELEGRAM_MAX_MESSAGE_UTF16, TELEGRAM_SOURCE_CAP } from "./limits.js";
import type { TelegramTransport } from "./transport.js";
import type { UploadPolicy } from "./uploads.js";
import { albums, extractUploads, recoveryMarkdown } from "./uploads.js";
import type { TgInlineKeyboard } from "./wire.js";

export interface TelegramSurfaceOptions {
  chatId: string;
  threadId?: string | undefined;
  typingIntervalMs: number;
  logger: Logger;
  parts: TurnParts;
  /** Local images to upload after the text; absent = paths stay text (the honest degradation). */
  uploads?: UploadPolicy | undefined;
}

const NO_KEYBOARD: TgInlineKeyboard = { inline_keyboard: [] };

export function telegramLiveSurface(
  t: TelegramTransport,
  o: TelegramSurfaceOptions,
): LiveSurface<TgInlineKeyboard> {
  const post = async ({ body, widgets, quiet }: LiveMessage<TgInlineKeyboard>): Promise<string | null> =>
    o.parts.post(JSON.stringify([body, widgets ?? null]), {
      // "Sending" once the chat's pacing lets the call go: a crash while it waits sent nothing.
      marksSending: true,
      create: async (_key, sending) =>
        String(
          await t.postHtml(o.chatId, body, {
            threadId: o.threadId,
            replyMarkup: widgets,
            disableNotification: quiet ?? false,
            onWire: sending,
          }),
        ),
      // The earlier part's buttons go unless this part has its own.
      replace: async (earlier) => {
        await t.editHtml(o.chatId, Number(earlier), body, widgets ?? NO_KEYBOARD);
        return true;
      },
    });
  return {
    capabilities: t.capabilities,
    sourceCap: TELEGRAM_SOURCE_CAP,
    commands: { new: "/new", stop: "/stop" },
    plain: escapeHtml,
    quiet: (text) => `<i>${escapeHtml(text)}</i>`,
    promptHead: (title, purpose) =>
      `🔐 <b>Permission needed:</b> ${escapeHtml(title)}${purpose ? `\n${escapeHtml(purpose)}` : ""}`,
    promptBody: (head, hint) => `${head}\n\n<i>${escapeHtml(hint)}</i>`,
    decided: (head, outcome) => `${head}\n\n<b>${escapeHtml(outcome)}</b>`,
    // With a footer slot (even an empty one), its separator is kept free too.
    fit: (source, footer) => fitTelegramHtml(source, footer === undefined ? 0 : footer.length + 2),
    join: (body, footer) => (body && footer ? `${body}\n\n${footer}` : body || footer),
    fits: (body) => body.length <= TELEGRAM_MAX_MESSAGE_UTF16,
    post,
    edit: async (id, { body, widgets }) => void (await t.editHtml(o.chatId, Number(id), body, widgets)),
    // Only Telegram's own refusal (gone, or not editable) means a new message is needed.
    refused: (error) => apiErrorOf(error) !== null,
    options: (choices) => optionsKeyboard([...choices]),
    approval: (requestId: string, nonce: string, options: readonly PromptOption[]) => {
      const keyboard = approvalKeyboard(requestId, nonce, [...options]);
      return keyboard
        ? { widgets: keyboard, shown: approvalVerdictsOf(keyboard) }
        : { widgets: undefined, shown: options };
    },
    noWidgets: NO_KEYBOARD,
    typing: { everyMs: o.typingIntervalMs, send: () => t.typing(o.chatId, o.threadId) },
    files: o.uploads ? telegramFiles(t, o, o.uploads, post) : undefined,
  };
}

/** Photos after the text seal; a failed album restores its references as one short follow-up. */
function telegramFiles(
  t: TelegramTransport,
  o: TelegramSurfaceOptions,
  uploads: UploadPolicy,
  post: LiveSurface<TgInlineKeyboard>["post"],
): LiveFiles {
  return {
    hide: hideLocalRefs,
    extract: (source) => extractUploads(source, uploads, o.logger),
    send: async (found) => {
      let landed = false;
      let lost = false;
      for (const album of albums(found as readonly OutboundFile[])) {
        try {
          // A photo cannot be edited into another: the same album is left alone, another is posted.
          const id = await o.parts.post(JSON.stringify(album.map((f) => [f.filename, f.bytes.length])), {
            create: async () => String(await t.sendPhotos(o.chatId, o.threadId, album)),
            replace: async () => false,
          });
          if (id === null) throw new Error("the photos did not land");
          landed = true;
        } catch (error) {
          o.logger.warn("telegram: photo upload failed; restoring the references", { error: String(error) });
          const body = toTelegramHtml(recoveryMarkdown(album));
          try {
            if ((await post({ body, quiet: true })) !== null) landed = true;
            else lost = true;
          } catch (failed) {
            lost = true;
            o.logger.error("telegram: send failed", { error: String(failed) });
          }
        }
      }
      return { landed, lost };
    },
  };
}
