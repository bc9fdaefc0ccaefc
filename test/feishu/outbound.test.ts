/**
 * What Feishu declares about sending, tested on the wire. Two differences from the spec's Feishu are
 * named here: it declared `returnsMessageId: false` (its reply handed back no id, so "" meant
 * success); parley's reply reads `data.message_id`, returns it, and declares true, so an empty id
 * means "not sent" on Feishu as on every other channel. Proactive sends stay off as the spec has
 * them: every configured destination is listed, unavailable, with the reason.
 */
import { describe, expect, it } from "vitest";
import { FEISHU_CAPABILITIES } from "../../src/feishu/transport.js";
import { deliveryConfirmed } from "../../src/messaging/channel/capabilities.js";
import { done, fakeFeishuLab, GROUP, GUEST, OWNER, text } from "./channel-harness.js";

const lab = fakeFeishuLab();

describe("sending on Feishu", () => {
  it("returnsMessageId (beyond the spec, which dropped it): a send answers Feishu's data.message_id", async () => {
    expect(FEISHU_CAPABILITIES.returnsMessageId).toBe(true);
    expect(deliveryConfirmed(FEISHU_CAPABILITIES, "")).toBe(false);
    const c = await lab.connected({ turns: () => [[text("hi"), done]] });
    const { messageId } = lab.fake.pushMessage(OWNER, "hello");
    await lab.fake.waitFor(() => lab.fake.botMessages().length === 1, 5000, "the answer");
    const id = await c.running.transport.sendMessage(OWNER.openId, "one more thing");
    const sent = lab.fake.botMessages().at(-1);
    expect(sent?.messageId).toBe(id);
    expect(id).toMatch(/^om_/);
    // Still a reply: bound to the last message the user sent.
    expect(sent?.parentId).toBe(messageId);
  });

  it("with no message of the person's to answer, nothing is sent: an empty id, audited", async () => {
    const c = await lab.connected();
    expect(await c.running.transport.sendMessage(GUEST.openId, "unasked")).toBe("");
    expect(lab.fake.botMessages()).toHaveLength(0);
    expect(c.audit.find("channel.proactive_send_authorize", "denied").map((r) => r.fields.reason)).toEqual([
      "no_message_to_answer",
    ]);
  });

  it("no proactive sends: every DM and listed group is a target, unavailable, with the reason", async () => {
    expect(FEISHU_CAPABILITIES.supportsProactiveSend).toBe(false);
    const c = await lab.connected({ feishu: { allowGroup: true, allowedGroupIds: [GROUP] } });
    const targets = c.running.transport.configuredTargets();
    expect(targets.map((t) => t.targetId).sort()).toEqual(
      [`dm:${OWNER.openId}`, `dm:${GUEST.openId}`, `group:${GROUP}`].sort(),
    );
    for (const t of targets) {
      expect(t.available).toBe(false);
      expect(t.reason).toMatch(/anchored to a message the user sent/);
    }
  });
});
