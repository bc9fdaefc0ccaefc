import { describe, expect, it } from "vitest";
import { defangMentions, discordSafe, fitPlatformCap, subtext, withLine } from "../../src/discord/format.js";
import type { DiscordSettings } from "../../src/discord/index.js";
import { discordChannel } from "../../src/discord/index.js";
import { commandReply, deferredUpdate, messagePayload } from "../../src/discord/payload.js";
import { approvalRows, optionRows } from "../../src/discord/widgets.js";
import { channelSettingsOf } from "../../src/gateway/config.js";

describe("the one payload builder", () => {
  it("puts allowed_mentions {parse: []} on every message body and interaction callback", () => {
    expect(messagePayload({ content: "@everyone hi" })).toEqual({
      content: "@everyone hi",
      allowed_mentions: { parse: [] },
    });
    expect(commandReply("x")).toEqual({
      type: 4,
      data: { content: "x", flags: 64, allowed_mentions: { parse: [] } },
    });
    expect(deferredUpdate()).toEqual({ type: 6, data: { allowed_mentions: { parse: [] } } });
  });
});

describe("format", () => {
  it("defangs Discord's mention grammar but leaves e-mail addresses and decorators alone", () => {
    expect(defangMentions("@everyone @here <@123> <@!123> <@&9> a@b.c @Override")).toBe(
      "@\u200beveryone @\u200bhere <@\u200b123> <@\u200b!123> <@\u200b&9> a@b.c @Override",
    );
    expect(discordSafe("key AKIA**IOSFODNN7EXAMPLE**")).not.toContain("IOSFODNN7EXAMPLE");
  });

  it("slices anything over the cap at fixed width, keeping every character", () => {
    const text = "😀".repeat(4500);
    const parts = fitPlatformCap(text);
    expect(parts.map((p) => Array.from(p).length)).toEqual([2000, 2000, 500]);
    expect(parts.join("")).toBe(text);
  });

  it("a footer that does not fit is dropped, never truncated", () => {
    expect(withLine("a".repeat(1990), subtext("Finished in 3s"))).toBe("a".repeat(1990));
    expect(withLine("answer", subtext("Finished in\n3s"))).toBe("answer\n-# Finished in 3s");
  });

  it("widgets: option buttons clip labels; approval buttons refuse an id too long for its nonce", () => {
    const [row] = optionRows(["x".repeat(100)]);
    expect(Array.from(row?.components[0]?.label ?? "").length).toBe(80);
    expect(approvalRows("r".repeat(80), "n".repeat(22))).toBeNull();
    expect(approvalRows("r1", "NONCE")?.[0]?.components.map((b) => b.custom_id)).toEqual([
      "a:r1:NONCE:1",
      "a:r1:NONCE:0",
    ]);
  });
});

describe("settings", () => {
  it("validates the section with its schema: snowflakes as strings, a bad entry named, the env origin wins", () => {
    const settings = channelSettingsOf(
      discordChannel,
      { allowedUserIds: ["200000000000000001", 200000000000000], reactionsEnabled: false },
      { DISCORD_API_BASE: "http://127.0.0.1:1/api/" },
    ) as DiscordSettings;
    expect(settings.allowedUserIds).toEqual(["200000000000000001", "200000000000000"]);
    expect(settings.reactionsEnabled).toBe(false);
    expect(settings.apiBase).toBe("http://127.0.0.1:1/api");
    // Deny by default stays deny: a malformed entry is an error naming the key, never dropped silently.
    expect(() => channelSettingsOf(discordChannel, { allowedUserIds: ["not-an-id"] }, {})).toThrow(
      /not a Discord snowflake/,
    );
    expect(() => channelSettingsOf(discordChannel, { allowedUserIds: [2e20] }, {})).toThrow(/too large/);
    expect(() => channelSettingsOf(discordChannel, { autoThread: "yes" }, {})).toThrow();
  });
});
