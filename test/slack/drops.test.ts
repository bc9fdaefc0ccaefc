/**
 * Nothing Slack delivers is dropped silently, in either mode: every delivery the channel does not
 * turn into a message (an event kind parley does not read, an edit, a join, the bot's own echo
 * that Bolt's ignoreSelf takes, another bot, a stranger, channel chatter, the `message` twin of an
 * app_mention, a press nobody draws, a redelivered event) is counted under its reason and
 * acknowledged, through Bolt's real receivers and the fake's Socket Mode and Events API.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Stack } from "./helpers.js";
import {
  ALICE,
  BOB,
  CHANNEL,
  DM,
  done,
  MALLORY,
  settled,
  startStack,
  text,
  until,
  untilFooter,
} from "./helpers.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const MALLORY_DM = "D0000000666";

function countsOf(s: Stack): Record<string, number> {
  return Object.fromEntries(s.dropLedger.counts("slack").map((t) => [t.reason, t.count]));
}

describe.each(["socket", "http"] as const)("slack inbound drops (%s)", (mode) => {
  it("counts every delivery it does not turn into a message, and acknowledges each", async () => {
    stack = await startStack({
      mode,
      turns: [
        [text("answered"), done],
        [text("in the channel"), done],
      ],
    });
    const f = stack.fake;
    const ts = () => f.nextTs();
    const deliveries = [
      // An event kind parley does not read (Events API reaction_added): no listener takes it.
      f.delivery.event({
        type: "reaction_added",
        user: ALICE,
        reaction: "thumbsup",
        item: { type: "message", channel: DM, ts: "1700000000.000100" },
        item_user: ALICE,
        event_ts: ts(),
      }),
      // An edit (message_changed: the new message nested, no top-level user).
      f.delivery.event({
        type: "message",
        subtype: "message_changed",
        hidden: true,
        channel: DM,
        channel_type: "im",
        message: { type: "message", user: ALICE, text: "hi (edited)", ts: "1700000000.000100" },
        previous_message: { type: "message", user: ALICE, text: "hi", ts: "1700000000.000100" },
        event_ts: ts(),
        ts: ts(),
      }),
      f.delivery.event({
        type: "message",
        subtype: "channel_join",
        channel: CHANNEL,
        channel_type: "channel",
        user: BOB,
        text: `<@${BOB}> has joined the channel`,
        ts: ts(),
      }),
      // The bot's own post, echoed back: Bolt's ignoreSelf takes it before any listener.
      f.delivery.event({
        type: "message",
        channel: DM,
        channel_type: "im",
        user: f.botUserId,
        bot_id: f.botId,
        text: "my own answer",
        ts: ts(),
      }),
      ...f.userMessage({ channel: DM, user: "U0000000777", text: "another bot", bot: true }).deliveries,
      ...f.userMessage({ channel: MALLORY_DM, user: MALLORY, text: "let me in" }).deliveries,
      ...f.userMessage({ channel: CHANNEL, user: BOB, text: "just chatting" }).deliveries,
    ];
    for (const d of deliveries) await f.delivery.acked(d);
    const { deliveries: mention } = f.userMessage({
      channel: CHANNEL,
      user: ALICE,
      text: `<@${f.botUserId}> hi`,
    });
    await untilFooter(f, CHANNEL);
    for (const d of mention) await f.delivery.acked(d);
    await settled(stack);

    expect(countsOf(stack)).toEqual({
      unknown_shape: 2,
      edited: 1,
      bot_echo: 2,
      stranger: 1,
      not_addressed: 1,
      duplicate: 1,
    });
    const shapes = stack.audit
      .find("inbound", "dropped")
      .filter((r) => r.fields.reason === "unknown_shape")
      .map((r) => String(r.fields.shape))
      .sort();
    expect(shapes).toEqual(["event_callback/reaction_added", "message/channel_join"]);
    expect(f.delivery.all.every((d) => d.acked)).toBe(true);
  });

  it("counts a press nobody draws and a redelivered event, beside an unknown kind, answering once", async () => {
    stack = await startStack({ mode, turns: [[text("answered"), done]] });
    const f = stack.fake;
    const { deliveries } = f.userMessage({ channel: DM, user: ALICE, text: "hi" });
    await untilFooter(f, DM);
    await settled(stack);
    const [answer] = f.botMessages(DM);
    // Another app's button on the same message (no parley: prefix): no listener takes it.
    await f.delivery.acked(f.press({ ts: answer?.ts ?? "", actionId: "other_app_button", user: ALICE }));
    // parley's prefix, but nothing parley draws.
    await f.delivery.acked(f.press({ ts: answer?.ts ?? "", actionId: "parley:zzz", user: ALICE }));
    const [first] = deliveries;
    if (!first) throw new Error("no delivery");
    // Slack did not see the acknowledgement (say): the same event_id again.
    f.delivery.redeliver(first);
    await until(() => stack?.dropLedger.count("slack", "redelivered") === 1, "the redelivery counted");
    await until(() => stack?.dropLedger.count("slack", "unknown_press") === 1, "the press counted");
    expect(stack.dropLedger.count("slack", "unknown_shape")).toBe(1);
    expect(
      stack.audit.find("inbound", "dropped").find((r) => r.fields.reason === "unknown_shape")?.fields.shape,
    ).toBe("block_actions");
    expect(stack.provider.prompts).toEqual(["hi"]);
    expect(f.delivery.all.every((d) => d.acked)).toBe(true);
  });
});
