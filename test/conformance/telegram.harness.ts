/**
 * Telegram under the channel contract: the real transport and renderer, grammY's real client, and
 * the loopback fake Bot API. Outbound payloads are every sendMessage/editMessageText body (the HTML
 * as sent), with what Telegram would display and every button label as the rendered forms.
 */
import type { MessagingTransport } from "../../src/messaging/channel/transport.js";
import type { AuditSink } from "../../src/messaging/security/audit.js";
import { createTelegramBot, telegramOps } from "../../src/telegram/client.js";
import type { TelegramSettings } from "../../src/telegram/index.js";
import { telegramChannel } from "../../src/telegram/index.js";
import { TelegramRenderer } from "../../src/telegram/renderer.js";
import { routeOf } from "../../src/telegram/routes.js";
import { start as startTelegram } from "../../src/telegram/start.js";
import { TELEGRAM_CAPABILITIES, TelegramTransport } from "../../src/telegram/transport.js";
import type { TgInlineKeyboard, TgUpdate } from "../../src/telegram/wire.js";
import { parseTelegramHtml } from "../fakes/telegram/html.js";
import { FakeTelegram } from "../fakes/telegram/server.js";
import { testChannelContext } from "../helpers/channel-context.js";
import { tempHome } from "../helpers/channel-under-test.js";
import { testDrops } from "../helpers/drops.js";
import { NO_PACE } from "../telegram/helpers.js";
import type { ChannelHarness, OutboundMessage } from "./contract.js";
import type { DispatcherHarness } from "./dispatcher-contract.js";
import { liveChannel } from "./dispatcher-contract.js";

const OWNER = "4242";
let updateId = 1;

function envelope(user: string, text: string, opts?: { bot?: boolean }): TgUpdate {
  const id = Number.parseInt(user, 10);
  // A non-numeric "user" (the contract's stranger) still gets a well-formed, unknown id.
  const from = Number.isFinite(id) ? id : 777;
  return {
    update_id: updateId++,
    message: {
      message_id: updateId,
      chat: { id: from, type: "private" },
      from: { id: from, is_bot: opts?.bot === true },
      text,
    },
  };
}

function labels(markup: unknown): string[] {
  return ((markup as TgInlineKeyboard | undefined)?.inline_keyboard ?? []).flat().map((b) => b.text);
}

export const telegramHarness: ChannelHarness = {
  name: "telegram",
  capabilities: TELEGRAM_CAPABILITIES,
  unconfigured: (audit: AuditSink) =>
    new TelegramTransport({
      drops: testDrops(audit, "telegram"),
      audit,
    }) as unknown as MessagingTransport<unknown>,
  async configured(audit: AuditSink) {
    const fake = await FakeTelegram.start({ lifetimeMs: 60_000 });
    const bot = createTelegramBot({
      token: fake.token,
      apiRoot: fake.apiRoot,
      pace: { privateIntervalMs: 0, groupIntervalMs: 0 },
    });
    const transport = new TelegramTransport({
      drops: testDrops(audit, "telegram"),
      audit,
      ops: telegramOps(bot),
      allowedUserIds: new Set([OWNER]),
    });
    return {
      transport: transport as unknown as MessagingTransport<unknown>,
      conversationId: OWNER,
      allowedUser: OWNER,
      envelope,
      newRenderer: () => new TelegramRenderer(transport, { chatId: OWNER, throttleMs: 0 }),
      outbound: (): OutboundMessage[] =>
        fake.calls
          .filter((c) => c.ok && (c.method === "sendMessage" || c.method === "editMessageText"))
          .map((c) => {
            const body = String(c.params.text ?? "");
            const parseMode = c.params.parse_mode;
            return {
              text: body,
              rendered: [
                parseMode === "HTML" ? parseTelegramHtml(body) : body,
                ...labels(c.params.reply_markup),
              ],
              buttons: labels(c.params.reply_markup).length,
            };
          }),
      close: () => fake.stop(),
    };
  },
};

/** The whole Telegram channel (start()) against the fake Bot API: DMs from the owner and a guest. */
export const telegramDispatcher: DispatcherHarness = {
  name: "telegram",
  async lab() {
    const fake = await FakeTelegram.start({ lifetimeMs: 60_000 });
    const home = tempHome("tg-dispatch");
    const owner = 4242;
    const guest = 4343;
    return {
      owner: String(owner),
      guest: String(guest),
      async start(shared) {
        const ctx = testChannelContext<TelegramSettings>(telegramChannel, {
          section: { allowedUserIds: [owner, guest], owner: String(owner), pollTimeoutSeconds: 1 },
          env: { TELEGRAM_BOT_TOKEN: fake.token, TELEGRAM_API_ROOT: fake.apiRoot },
          home,
          ...shared,
        });
        const running = await startTelegram(ctx, { pace: NO_PACE, renderer: { throttleMs: 0 } });
        return liveChannel(
          running,
          (user) => routeOf(user, user, undefined),
          async (user, text) => void fake.pushMessage({ id: Number(user) }, text),
        );
      },
      visible: () => fake.sentMessages().flatMap((m) => [m.visible, ...labels(m.replyMarkup)]),
      reactions: () => fake.callsOf("setMessageReaction").map((c) => JSON.stringify(c.params.reaction)),
      close: () => fake.stop(),
    };
  },
};
