/** The chat gate, the activation gate, mention detection from entities (UTF-16 offsets), and the probe. */
import { describe, expect, it } from "vitest";
import { channelSettingsOf } from "../../src/gateway/config.js";
import { probeChannel } from "../../src/messaging/channel/contract.js";
import {
  activationOutcome,
  addressesBot,
  forumGateOutcome,
  mentionHandles,
} from "../../src/telegram/gate.js";
import type { TelegramSettings } from "../../src/telegram/index.js";
import { telegramChannel } from "../../src/telegram/index.js";
import type { TgMessage } from "../../src/telegram/wire.js";

const BOT = { id: 999, username: "parley_bot" };
const policy = { allowForum: true, allowedForumChatIds: new Set(["-100777"]) };

function msg(text: string, extra: Partial<TgMessage> = {}): TgMessage {
  return {
    message_id: 1,
    chat: { id: -100777, type: "supergroup" },
    from: { id: 1, is_bot: false },
    text,
    ...extra,
  };
}

describe("forumGateOutcome", () => {
  it("admits a private chat and an allow-listed Topic only", () => {
    expect(forumGateOutcome("private", "42", undefined, policy)).toBe("allowed_private");
    expect(forumGateOutcome("supergroup", "-100777", "5", policy)).toBe("allowed_forum");
    expect(forumGateOutcome("supergroup", "-100888", "5", policy)).toBe("denied_forum_not_allowed");
    // The supergroup's General chat has no thread: refused even in an allow-listed chat.
    expect(forumGateOutcome("supergroup", "-100777", undefined, policy)).toBe("denied_non_private_chat");
    expect(forumGateOutcome("group", "-5", undefined, policy)).toBe("denied_non_private_chat");
    expect(forumGateOutcome("channel", "-100777", "5", policy)).toBe("denied_non_private_chat");
    expect(forumGateOutcome("supergroup", "-100777", "5", { ...policy, allowForum: false })).toBe(
      "denied_forum_not_allowed",
    );
  });
});

describe("mention detection", () => {
  it("reads the handle through UTF-16 entity offsets (an emoji ahead shifts them)", () => {
    const text = "🎉🎉 hey @parley_bot look";
    // "🎉" is two UTF-16 units each: the handle starts at 9 in UTF-16, at 7 in code points.
    const entities = [{ type: "mention", offset: 9, length: 11 }];
    expect(Array.from(text).indexOf("@")).toBe(7);
    expect(mentionHandles(text, entities)).toEqual(["@parley_bot"]);
    expect(addressesBot(msg(text, { entities }), BOT)).toBe(true);
  });

  it("a link containing @bot is a url entity, never a mention", () => {
    const text = "see https://host/@parley_bot/x please";
    const entities = [{ type: "url", offset: 4, length: 24 }];
    expect(addressesBot(msg(text, { entities }), BOT)).toBe(false);
    const linked = msg("click here", {
      entities: [{ type: "text_link", offset: 0, length: 10, url: "https://t.me/parley_bot" }],
    });
    expect(addressesBot(linked, BOT)).toBe(false);
  });

  it("another bot's handle, a text_mention of us, a command to us, a reply to us", () => {
    expect(
      addressesBot(msg("@other_bot hi", { entities: [{ type: "mention", offset: 0, length: 10 }] }), BOT),
    ).toBe(false);
    expect(
      addressesBot(
        msg("Parley hi", {
          entities: [{ type: "text_mention", offset: 0, length: 6, user: { id: 999, is_bot: true } }],
        }),
        BOT,
      ),
    ).toBe(true);
    expect(
      addressesBot(
        msg("/new@parley_bot", { entities: [{ type: "bot_command", offset: 0, length: 15 }] }),
        BOT,
      ),
    ).toBe(true);
    const reply = msg("and this?", {
      reply_to_message: {
        message_id: 9,
        chat: { id: -100777, type: "supergroup" },
        from: { id: 999, is_bot: true },
      },
    });
    expect(addressesBot(reply, BOT)).toBe(true);
  });

  it("no entity list at all falls back to the token scan; unresolved identity answers false", () => {
    expect(addressesBot(msg("hey @Parley_Bot"), BOT)).toBe(true);
    expect(addressesBot(msg("mail me at a@parley_bot.com"), BOT)).toBe(false);
    expect(
      addressesBot(msg("hey @parley_bot", { entities: [{ type: "mention", offset: 4, length: 11 }] }), null),
    ).toBe(false);
  });
});

describe("activationOutcome", () => {
  it("serves a DM in every mode; a Topic per forumActivation", () => {
    for (const mode of ["always", "mention", "off"] as const)
      expect(activationOutcome("private", mode, false)).toBe("activated");
    expect(activationOutcome("supergroup", "always", false)).toBe("activated");
    expect(activationOutcome("supergroup", "mention", false)).toBe("denied_activation_mention_only");
    expect(activationOutcome("supergroup", "mention", true)).toBe("activated");
    expect(activationOutcome("supergroup", "off", true)).toBe("denied_activation_off");
  });
});

describe("settings and the registry probe", () => {
  const settings = (section: Record<string, unknown>, env: Record<string, string> = {}) =>
    channelSettingsOf(telegramChannel, section, env) as TelegramSettings;
  const probe = (section: Record<string, unknown> | undefined, env: Record<string, string> = {}) =>
    probeChannel(telegramChannel, settings(section ?? {}, env), env, section !== undefined);

  it("validates every key with its default; the token is never a setting", () => {
    const s = settings({
      allowedUserIds: [42, "43"],
      allowForum: true,
      allowedForumChatIds: ["-100777", -100888],
      queueMode: "queue",
      pollTimeoutSeconds: 50,
      apiRoot: "http://127.0.0.1:9/",
    });
    expect(s.allowedUserIds).toEqual(["42", "43"]);
    expect(s.allowedForumChatIds).toEqual(["-100777", "-100888"]);
    expect(s.forumActivation).toBe("always");
    expect(s.queueMode).toBe("queue");
    expect(s.apiRoot).toBe("http://127.0.0.1:9");
    // A bad value is an error naming it, never silently narrowed or widened.
    expect(() => settings({ allowedUserIds: ["x"] })).toThrow(/not a Telegram user id/);
    expect(() => settings({ allowedUserIds: [4.5] })).toThrow();
    expect(() => settings({ forumActivation: "bogus" })).toThrow();
    expect(() => settings({ pollTimeoutSeconds: 999 })).toThrow();
    expect(() => settings({ botToken: "from-config" })).toThrow(/botToken/);
    // One precedence rule: an environment setting wins over the file.
    expect(settings({ apiRoot: "http://file" }, { TELEGRAM_API_ROOT: "http://x" }).apiRoot).toBe("http://x");
  });

  it("is disabled without a token, incomplete without an allow-list, configured with both", () => {
    expect(probe(undefined).status).toBe("disabled");
    expect(probe({}, { TELEGRAM_BOT_TOKEN: "1:a" })).toEqual({
      status: "incomplete",
      missing: ["telegram.allowedUserIds"],
    });
    expect(probe({ allowedUserIds: [42] })).toEqual({
      status: "incomplete",
      missing: ["TELEGRAM_BOT_TOKEN"],
    });
    expect(probe({ allowedUserIds: [42] }, { TELEGRAM_BOT_TOKEN: "1:a" }).status).toBe("configured");
    expect(probe({ enabled: false, allowedUserIds: [42] }, { TELEGRAM_BOT_TOKEN: "1:a" }).status).toBe(
      "disabled",
    );
  });
});
