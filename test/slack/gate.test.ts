/**
 * Who and where: owner-only, deny by default, every refusal audited once; bots and the bot itself
 * dropped before authorization; channels only when allowed and addressed, and the threads the bot
 * answers; and the Events API's own gate (a forged signature or a stale timestamp: 401, nothing
 * started).
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
  OTHER_CHANNEL,
  settled,
  shown,
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

const denials = (s: Stack) => s.audit.find("inbound", "denied");

describe("slack gate", () => {
  it("a stranger, a foreign-team user and an allowed user in a channel that is not allowed: no reply, one audit row each", async () => {
    stack = await startStack({ turns: [[text("never"), done]] });
    const f = stack.fake;
    const stranger = f.userMessage({ channel: "D0000000666", user: MALLORY, text: "let me in" });
    const foreign = f.userMessage({
      channel: DM,
      user: ALICE,
      text: "hi from elsewhere",
      team: "TOTHER0001",
    });
    const elsewhere = f.userMessage({ channel: OTHER_CHANNEL, user: ALICE, text: `<@${f.botUserId}> hi` });
    for (const d of [...stranger.deliveries, ...foreign.deliveries, ...elsewhere.deliveries])
      await f.delivery.acked(d);
    await until(() => denials(stack as Stack).length === 3, "three refusals");
    await settled(stack);
    expect(denials(stack).map((r) => [r.fields.user, r.fields.conversation])).toEqual([
      [MALLORY, "D0000000666"],
      [ALICE, DM],
      [ALICE, OTHER_CHANNEL],
    ]);
    // The mention arrived twice (message and app_mention): refused, and audited, once.
    expect(elsewhere.deliveries).toHaveLength(2);
    expect(f.botMessages()).toEqual([]);
    expect(stack.startedKeys).toEqual([]);
  });

  it("drops bot messages and its own before authorization (no audit), and refuses a missing user id", async () => {
    stack = await startStack({ turns: [[text("never"), done]] });
    const f = stack.fake;
    const bot = f.userMessage({ channel: DM, user: "UOTHERBOT1", text: "beep", bot: true });
    const own = f.userMessage({ channel: DM, user: f.botUserId, text: "my own words" });
    for (const d of [...bot.deliveries, ...own.deliveries]) await f.delivery.acked(d);
    const anonymous = f.delivery.event({
      type: "message",
      channel: DM,
      channel_type: "im",
      team: f.teamId,
      text: "who am I",
      ts: f.nextTs(),
    });
    await f.delivery.acked(anonymous);
    await until(() => denials(stack as Stack).length === 1, "the anonymous refusal");
    expect(denials(stack)[0]?.fields.user).toBe("");
    expect(f.botMessages()).toEqual([]);
  });

  it("answers a mention in an allowed channel in its thread, continues there without a mention, ignores chatter", async () => {
    stack = await startStack({
      turns: [
        [text("First answer."), done],
        [text("Second answer."), done],
      ],
    });
    const f = stack.fake;
    f.userMessage({ channel: CHANNEL, user: BOB, text: "just chatting, nothing for the bot" });
    const { ts } = f.userMessage({ channel: CHANNEL, user: ALICE, text: `<@${f.botUserId}> what is up?` });
    await untilFooter(f, CHANNEL);
    await settled(stack);
    expect(f.botMessages(CHANNEL).every((m) => m.threadTs === ts)).toBe(true);
    // A stranger's reply in the bot's thread is refused (audited); Bob's continues without a mention.
    f.userMessage({ channel: CHANNEL, user: MALLORY, text: "me too", threadTs: ts });
    f.userMessage({ channel: CHANNEL, user: BOB, text: "and then?", threadTs: ts });
    await untilFooter(f, CHANNEL, 2);
    expect(shown(f, CHANNEL, ts).join("\n")).toContain("Second answer.");
    expect(denials(stack).map((r) => r.fields.user)).toEqual([MALLORY]);
    // Streaming outside a DM names its recipient.
    expect(
      f.callsTo("chat.startStream").every((c) => c.args.recipient_user_id && c.args.recipient_team_id),
    ).toBe(true);
  });

  it("refuses listings and /yolo in a channel thread (a shared audience)", async () => {
    stack = await startStack({ turns: [[text("hello"), done]] });
    const f = stack.fake;
    const { ts } = f.userMessage({ channel: CHANNEL, user: ALICE, text: `<@${f.botUserId}> hello` });
    await untilFooter(f, CHANNEL);
    await settled(stack);
    f.userMessage({ channel: CHANNEL, user: ALICE, text: "!sessions", threadTs: ts });
    f.userMessage({ channel: CHANNEL, user: ALICE, text: "!yolo on", threadTs: ts });
    await until(() => f.botMessages(CHANNEL).length >= 3, "two refusals");
    const said = shown(f, CHANNEL, ts).join("\n");
    expect(said).toContain("Session listings are only shown in a direct conversation with the bot.");
    expect(said).toContain("Auto-approve can only be switched on in a direct conversation with the bot.");
    expect(stack.audit.find("slack.sessions", "refused")[0]?.fields).toMatchObject({
      reason: "shared_audience",
    });
    expect(stack.audit.find("auto_approve", "refused")[0]?.fields).toMatchObject({
      caller: ALICE,
      reason: "not_direct",
    });
  });
});

describe("the Events API gate (http mode)", () => {
  it("a bad signature or a stale timestamp gets 401 and starts nothing; a signed request is answered", async () => {
    stack = await startStack({ mode: "http", turns: [[text("signed and answered"), done]] });
    const f = stack.fake;
    const body = JSON.stringify({
      type: "event_callback",
      team_id: f.teamId,
      event_id: "EvFORGED01",
      event: {
        type: "message",
        channel: DM,
        channel_type: "im",
        user: ALICE,
        team: f.teamId,
        text: "forged",
        ts: f.nextTs(),
      },
    });
    expect(await f.delivery.signedPost(body, { secret: "not-the-secret" })).toBe(401);
    expect(await f.delivery.signedPost(body, { timestampSec: Math.floor(Date.now() / 1000) - 600 })).toBe(
      401,
    );
    expect(stack.audit.find("slack_http", "denied")).toHaveLength(2);
    expect(await stack.parley.intake.unfinished()).toEqual([]);
    f.userMessage({ channel: DM, user: ALICE, text: "a real one" });
    await untilFooter(f, DM);
    expect(stack.startedKeys).toHaveLength(1);
    expect(f.botMessages().map((m) => f.visible(m))).toEqual([expect.stringMatching(/^signed and answered/)]);
  });
});
