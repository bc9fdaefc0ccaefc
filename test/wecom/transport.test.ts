/**
 * WeComTransport's outbound side against the fake, through the real client: configured targets
 * (allowed or learned userids, cold ones with a reason, membership rechecked on every resolve), the
 * push gate (audited refusal), and a long push refused part-way reported with its position.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { WeComSendError, WeComTransport } from "../../src/wecom/transport.js";
import type { CallbackFrame } from "../../src/wecom/wire.js";
import { testDrops } from "../helpers/drops.js";
import type { Wired } from "./helpers.js";
import { wire } from "./helpers.js";

let w: Wired | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

let n = 0;
function frame(userid: string): CallbackFrame {
  n += 1;
  return {
    cmd: "aibot_msg_callback",
    headers: { req_id: `t-${n}` },
    body: {
      msgid: `t-msg-${n}`,
      chattype: "single",
      from: { userid },
      msgtype: "text",
      text: { content: "hi" },
    },
  };
}

describe("configured targets", () => {
  it("lists the allowed userids, cold with a reason until they write; a stranger never becomes one", async () => {
    const audit = new MemoryAuditSink();
    const t = new WeComTransport({
      drops: testDrops(audit, "wecom"),
      audit,
      allowedUsers: ["zhangsan", "lisi"],
    });
    expect(t.configuredTargets()).toEqual([
      expect.objectContaining({
        targetId: "user:zhangsan",
        available: false,
        reason: expect.stringMatching(/has not written/),
      }),
      expect.objectContaining({ targetId: "user:lisi", available: false }),
    ]);
    expect((await t.receive(frame("zhangsan"))).status).toBe("dispatched");
    expect((await t.receive(frame("wangwu"))).status).toBe("denied");
    expect(t.configuredTargets()).toEqual([
      { targetId: "user:zhangsan", label: "WeCom user zhangsan", available: true },
      expect.objectContaining({ targetId: "user:lisi", available: false }),
    ]);
    expect(t.resolveConfiguredTarget("user:lisi")).toEqual({ conversationId: "lisi" });
    expect(t.resolveConfiguredTarget("user:wangwu")).toBeNull();
    expect(t.resolveConfiguredTarget("lisi")).toBeNull();
  });

  it("with allowAllUsers, a userid is a target only once it has written (learned), and is rechecked", async () => {
    const t = new WeComTransport({
      drops: testDrops(new MemoryAuditSink(), "wecom"),
      audit: new MemoryAuditSink(),
      allowAllUsers: true,
    });
    expect(t.configuredTargets()).toEqual([]);
    expect(t.resolveConfiguredTarget("user:zhaoliu")).toBeNull();
    await t.receive(frame("zhaoliu"));
    expect(t.configuredTargets()).toEqual([
      { targetId: "user:zhaoliu", label: "WeCom user zhaoliu", available: true },
    ]);
    expect(t.resolveConfiguredTarget("user:zhaoliu")).toEqual({ conversationId: "zhaoliu" });
    // A group message proves nothing about a one-to-one conversation: not learned.
    const group = frame("qianqi");
    group.body.chattype = "group";
    await t.receive(group);
    expect(t.resolveConfiguredTarget("user:qianqi")).toBeNull();
  });
});

describe("pushes", () => {
  it("a push to a conversation that is not admitted is refused and audited, never sent", async () => {
    w = await wire();
    const audit = new MemoryAuditSink();
    const t = new WeComTransport({
      drops: testDrops(audit, "wecom"),
      audit,
      allowedUsers: ["zhangsan"],
      pusher: w.client,
    });
    await expect(t.sendMessage("wangwu", "hello")).rejects.toBeInstanceOf(WeComSendError);
    expect(audit.find("channel.proactive_send_authorize", "denied")).toHaveLength(1);
    expect(w.fake.framesOf("aibot_send_msg")).toEqual([]);
  });

  it("a long push refused part-way names the part, and nothing after it is sent", async () => {
    w = await wire();
    const t = new WeComTransport({
      drops: testDrops(new MemoryAuditSink(), "wecom"),
      audit: new MemoryAuditSink(),
      allowedUsers: ["zhangsan"],
      pusher: w.client,
    });
    w.message({ text: "open the conversation" });
    const long = Array.from({ length: 30 }, (_, i) => `段落${i}：${"长连接推送消息。".repeat(60)}`).join(
      "\n\n",
    );
    let pushes = 0;
    w.fake.refuseNext((cmd) => cmd === "aibot_send_msg" && ++pushes === 2, 45_009);
    const error = await t.sendMessage("zhangsan", long).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WeComSendError);
    const part = (error as WeComSendError).part;
    expect(part?.index).toBe(2);
    expect(part?.total).toBeGreaterThan(2);
    expect((error as Error).message).toBe(`part 2 of ${part?.total} was not delivered`);
    expect(w.fake.framesOf("aibot_send_msg")).toHaveLength(2);
    expect(w.fake.pushes.filter((p) => p.accepted)).toHaveLength(1);
  });
});
