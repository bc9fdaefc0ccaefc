/**
 * Who Feishu answers, through the whole channel against the fake: deny by default at every gate,
 * each refusal audited with source `feishu`, bots dropped first, and the journal's dedupe consulted
 * last, so a stranger's traffic never occupies it. Mentions in a group: the bot's own placeholder
 * is stripped, anyone else becomes a name.
 */
import { describe, expect, it } from "vitest";
import {
  type ChannelUnderTest,
  dmChat,
  done,
  fakeFeishuLab,
  GROUP,
  GUEST,
  OWNER,
  STRANGER,
  shown,
  text,
} from "./channel-harness.js";

const lab = fakeFeishuLab();

/** Wait until the fake holds an acknowledgement for the event (the channel has finished with it). */
async function acked(event: { acked: boolean }, what: string): Promise<void> {
  await lab.fake.waitFor(() => event.acked, 5000, what);
}

const gateRows = (c: ChannelUnderTest) => c.audit.find("feishu.chat_gate", "denied").map((r) => r.fields);

describe("who is answered", () => {
  it("a stranger's DM: no reply, audited, and never in the journal's dedupe window", async () => {
    const c = await lab.connected();
    const { messageId, event } = lab.fake.pushMessage(STRANGER, "let me in");
    await acked(event, "the stranger's message acknowledged");
    expect(shown(lab.fake)).toEqual([]);
    expect(c.audit.find("inbound", "denied")[0]?.fields).toMatchObject({
      channel: "feishu",
      user: STRANGER.openId,
    });
    expect(await c.parley.intake.unfinished()).toEqual([]);
    // The id was never recorded: the journal still accepts it as new.
    expect(
      await c.parley.intake.accept({
        channel: "feishu",
        platformMessageId: `message:${messageId}`,
        conversationKey: "feishu:x",
        payload: null,
        receivedAtMs: 0,
      }),
    ).toMatchObject({ kind: "accepted" });
  });

  it("a group outside the list: no reply, audited denied_group_not_allowed (switch off, or chat unlisted)", async () => {
    const off = await lab.connected();
    const first = lab.fake.pushMessage(OWNER, "hello group", {
      chatType: "group",
      chatId: GROUP,
      mentionBot: true,
    });
    await acked(first.event, "the first group message");
    expect(gateRows(off)).toEqual([
      { source: "feishu", user: OWNER.openId, chat: GROUP, reason: "denied_group_not_allowed" },
    ]);
    await off.stop();
    const listed = await lab.connected({
      feishu: { allowGroup: true, allowedGroupIds: ["oc_another0000000000000000000000001"] },
    });
    const second = lab.fake.pushMessage(OWNER, "hello again", {
      chatType: "group",
      chatId: GROUP,
      mentionBot: true,
    });
    await acked(second.event, "the second group message");
    expect(gateRows(listed).map((r) => r.reason)).toEqual(["denied_group_not_allowed"]);
    expect(shown(lab.fake)).toEqual([]);
  });

  it("a listed group without a mention of the bot: no reply, audited denied_not_mentioned", async () => {
    const c = await lab.connected({ feishu: { allowGroup: true, allowedGroupIds: [GROUP] } });
    const { event } = lab.fake.pushMessage(OWNER, "@_user_1 what do you think", {
      chatType: "group",
      chatId: GROUP,
      mentions: [{ openId: GUEST.openId, name: GUEST.name }],
    });
    await acked(event, "the unaddressed message");
    expect(gateRows(c).map((r) => r.reason)).toEqual(["denied_not_mentioned"]);
    expect(shown(lab.fake)).toEqual([]);
    expect(await c.parley.intake.unfinished()).toEqual([]);
  });

  it("a listed group that mentions the bot is answered; its placeholder goes, others become names", async () => {
    const c = await lab.connected({
      feishu: { allowGroup: true, allowedGroupIds: [GROUP] },
      turns: () => [[text("Sure."), done]],
    });
    lab.fake.pushMessage(OWNER, "ask @_user_2 about it", {
      chatType: "group",
      chatId: GROUP,
      mentionBot: true,
      mentions: [{ openId: GUEST.openId, name: GUEST.name }],
    });
    await lab.fake.waitFor(() => shown(lab.fake, GROUP).length === 1, 5000, "the group answer");
    const [key] = [...c.providers.keys()];
    expect(c.providers.get(key ?? "")?.prompts).toEqual([`ask @${GUEST.name} about it`]);
    expect(shown(lab.fake, GROUP)[0]).toMatch(/^Sure\./);
  });

  it("a chat type parley does not know is refused, audited denied_chat_type", async () => {
    const c = await lab.connected();
    const { event } = lab.fake.pushMessage(OWNER, "hi", { chatType: "topic" as never, chatId: GROUP });
    await acked(event, "the message");
    expect(gateRows(c).map((r) => r.reason)).toEqual(["denied_chat_type"]);
    expect(shown(lab.fake)).toEqual([]);
  });

  it("a message from a bot is dropped before any gate, never journaled", async () => {
    const c = await lab.connected();
    const { event } = lab.fake.pushMessage(OWNER, "I am a bot", { senderType: "app" });
    await acked(event, "the bot's message");
    expect(c.audit.find("inbound", "denied")).toEqual([]);
    expect(await c.parley.intake.unfinished()).toEqual([]);
    expect(shown(lab.fake)).toEqual([]);
  });

  it("a malformed event is an audited drop, acknowledged, and the channel keeps answering", async () => {
    const c = await lab.connected({ turns: () => [[text("still here"), done]] });
    const { event } = lab.fake.pushMessage(OWNER, "", { content: "{not json" });
    await acked(event, "the malformed event");
    expect(c.audit.find("inbound", "dropped")[0]?.fields).toMatchObject({ reason: "unparseable" });
    lab.fake.pushMessage(OWNER, "hello");
    await lab.fake.waitFor(() => shown(lab.fake).length === 1, 5000, "the next answer");
    expect(shown(lab.fake)[0]).toMatch(/^still here/);
  });

  it("an event without a message_id is answered every time (no id, no evidence of a repeat)", async () => {
    const c = await lab.connected({
      turns: () => [
        [text("one"), done],
        [text("two"), done],
      ],
    });
    lab.fake.pushMessage(OWNER, "same words", { omitMessageId: true });
    await lab.fake.waitFor(() => shown(lab.fake).length === 1, 5000, "the first answer");
    lab.fake.pushMessage(OWNER, "same words", { omitMessageId: true });
    await lab.fake.waitFor(() => shown(lab.fake).length === 2, 5000, "the second answer");
    // With nothing to reply to, the answer goes into the chat the message came from.
    expect(lab.fake.callsTo(/POST \/open-apis\/im\/v1\/messages$/)).toHaveLength(2);
    expect(lab.fake.botMessages().every((m) => m.chatId === dmChat(OWNER))).toBe(true);
    expect(c.audit.find("intake", "dropped")).toEqual([]);
  });
});
