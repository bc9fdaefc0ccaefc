/**
 * Nothing the Gateway delivers is dropped silently: every dispatch the channel does not turn into a
 * message (an event kind parley does not read, an interaction type it does not answer, an edit, a
 * bot, a stranger, unrelated guild chatter, a press on a component it did not draw, a replayed
 * MESSAGE_CREATE) is counted under its reason, through the real @discordjs/ws client and the fake
 * Gateway, with the real store.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Stack } from "./helpers.js";
import { ALICE, DM, GUILD, MALLORY, startStack, untilFooter } from "./helpers.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const UNRELATED = "500000000000000009";

function countsOf(s: Stack): Record<string, number> {
  return Object.fromEntries(
    s.running.transport && s.dropLedger.counts("discord").map((t) => [t.reason, t.count]),
  );
}

async function until(predicate: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("discord: inbound drops", () => {
  it("counts each dispatch it does not turn into a message, under its reason", async () => {
    stack = await startStack({ turns: [[{ type: "text", text: "answered" }]] });
    const f = stack.fake;
    // Event kinds outside what parley reads (discord-api-types GatewayDispatchEvents).
    f.dispatch("MESSAGE_REACTION_ADD", {
      user_id: ALICE,
      channel_id: DM,
      message_id: f.snowflake(),
      emoji: { id: null, name: "👍" },
      burst: false,
      type: 0,
    });
    f.dispatch("TYPING_START", { channel_id: DM, user_id: ALICE, timestamp: 0 });
    // An autocomplete interaction (InteractionType 4): parley registers no autocomplete option.
    f.interaction({
      type: 4,
      channelId: DM,
      userId: ALICE,
      data: {
        id: f.snowflake(),
        name: "model",
        type: 1,
        options: [{ name: "id", type: 3, value: "g", focused: true }],
      },
    });
    f.dispatch("MESSAGE_UPDATE", {
      id: f.snowflake(),
      channel_id: DM,
      author: { id: ALICE, username: "alice" },
      content: "edited",
      edited_timestamp: new Date(0).toISOString(),
    });
    f.userMessage({ channelId: DM, userId: "200000000000000077", content: "a bot", bot: true });
    f.userMessage({ channelId: DM, userId: MALLORY, content: "let me in" });
    f.userMessage({ channelId: UNRELATED, guildId: GUILD, userId: MALLORY, content: "chatter" });
    f.userMessage({ channelId: DM, userId: ALICE, content: "hi" });
    await untilFooter(f, DM);
    const [answer] = f.channelMessages(DM);
    f.press({ messageId: answer?.id ?? "", customId: "not-ours", userId: ALICE });
    await until(() => stack?.dropLedger.count("discord", "unknown_press") === 1, "the press counted");

    expect(countsOf(stack)).toEqual({
      unknown_shape: 3,
      edited: 1,
      bot_echo: 1,
      stranger: 1,
      not_addressed: 1,
      unknown_press: 1,
    });
    const shapes = stack.audit
      .find("inbound", "dropped")
      .filter((r) => r.fields.reason === "unknown_shape")
      .map((r) => r.fields.shape);
    expect(shapes).toEqual(["MESSAGE_REACTION_ADD", "TYPING_START", "INTERACTION_CREATE type 4"]);
    expect(
      stack.logger.entries.filter((e) => e.level === "warn" && e.message.includes("does not know")),
    ).toHaveLength(3);
    expect(f.channelMessages(DM).filter((m) => m.content.includes("answered"))).toHaveLength(1);
  });

  it("counts a replayed MESSAGE_CREATE as a redelivery, beside an unknown kind, and answers once", async () => {
    stack = await startStack({
      turns: [[{ type: "text", text: "answered" }], [{ type: "text", text: "AGAIN" }]],
    });
    const f = stack.fake;
    const message = {
      id: f.snowflake(),
      channel_id: DM,
      author: { id: ALICE, username: "alice" },
      content: "hi",
      attachments: [],
      mentions: [],
      type: 0,
      timestamp: new Date(0).toISOString(),
    };
    f.dispatch("MESSAGE_CREATE", message);
    await untilFooter(f, DM);
    // A Gateway replay (after a RESUME from an older sequence) carries the same message again.
    f.dispatch("MESSAGE_CREATE", message);
    f.dispatch("CHANNEL_PINS_UPDATE", { channel_id: DM, last_pin_timestamp: null });
    await until(() => stack?.dropLedger.count("discord", "redelivered") === 1, "the replay counted");
    await until(() => stack?.dropLedger.count("discord", "unknown_shape") === 1, "the unknown kind counted");
    expect(f.channelMessages(DM).filter((m) => m.content.includes("AGAIN"))).toHaveLength(0);
    expect(stack.provider.prompts).toEqual(["hi"]);
  });
});
