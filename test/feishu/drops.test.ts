/**
 * What Feishu delivers that does not become a turn is counted, with its reason, through the whole
 * channel against the fake: an event of a type parley does not serve (acknowledged, as the SDK
 * answers it, so Feishu does not resend it) and an event delivered again after its acknowledgement
 * was lost (the journal drops it; the person gets one answer).
 */
import { describe, expect, it } from "vitest";
import { done, fakeFeishuLab, OWNER, shown, text } from "./channel-harness.js";

const lab = fakeFeishuLab({ ackTimeoutMs: 300 });

describe("inbound drops", () => {
  it("an event type parley does not serve is counted as an unknown shape, named, and acknowledged", async () => {
    const c = await lab.connected();
    // im.message.message_read_v1: a user read the bot's message (SDK types/index.d.ts, EventHandles).
    const { event } = lab.fake.pushEvent("im.message.message_read_v1", {
      reader: {
        reader_id: { open_id: OWNER.openId, union_id: `on_${OWNER.openId.slice(3)}`, user_id: "u1" },
        read_time: String(Date.now()),
        tenant_key: "tenant-fake",
      },
      message_id_list: ["om_000001"],
    });
    await lab.fake.waitFor(() => event.acked, 5000, "the read event acknowledged");
    expect(event.deliveries).toBe(1);
    expect(c.drops.count("feishu", "unknown_shape")).toBe(1);
    const row = c.audit.records.find((r) => r.operation === "inbound" && r.fields.reason === "unknown_shape");
    expect(row?.fields.shape).toBe("event im.message.message_read_v1");
    expect(shown(lab.fake)).toEqual([]);
    expect(await c.parley.intake.unfinished()).toEqual([]);
  });

  it("a message delivered again after its acknowledgement was lost is counted once as a redelivery, answered once", async () => {
    const c = await lab.connected({ turns: () => [[text("answered once"), done]] });
    lab.fake.ws.loseAcks(1);
    const { event } = lab.fake.pushMessage(OWNER, "hello");
    await lab.fake.waitFor(
      () => c.drops.count("feishu", "redelivered") === 1,
      5000,
      "the redelivery counted",
    );
    await lab.fake.waitFor(() => event.acked, 5000, "the redelivery acknowledged");
    await lab.fake.waitFor(() => shown(lab.fake).length === 1, 5000, "the answer");
    expect(event.deliveries).toBe(2);
    expect(shown(lab.fake)).toHaveLength(1);
    expect(shown(lab.fake)[0]).toContain("answered once");
    expect([...c.providers.values()][0]?.prompts).toEqual(["hello"]);
    // Counted by the journal, which holds the first copy; the channel does not count it again.
    expect(c.drops.count("feishu", "duplicate")).toBe(0);
    const row = c.audit.records.find((r) => r.fields.reason === "redelivered");
    expect(row?.operation).toBe("intake");
    expect(row?.fields).toMatchObject({ channel: "feishu", user: OWNER.openId });
    expect(c.drops.count("feishu", "unknown_shape")).toBe(0);
  });
});
