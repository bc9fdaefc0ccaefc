/**
 * What leaves for iLink: a credential split across two messages, or in emphasis iLink renders away,
 * never reaches a sendmessage body; a proactive send goes only to a peer the policy admits AND whose
 * context token is stored (refused locally and audited otherwise, never tried blind); a peer removed
 * from the allow-list gets nothing, even one learned earlier.
 */
import { describe, expect, it } from "vitest";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { WeixinSendRefused } from "../../src/weixin/errors.js";
import { weixinBodies } from "../../src/weixin/format.js";
import { PeerPolicy } from "../../src/weixin/policy.js";
import { WeixinTransport } from "../../src/weixin/transport.js";
import { testDrops } from "../helpers/drops.js";
import { done, fakeIlinkLab, GUEST, OWNER, text } from "./channel-harness.js";

const lab = fakeIlinkLab();
const KEY = "AKIAQ7ZR3M5TXW2KP9VB";
const KEY_TAIL = KEY.slice(4);

describe("weixin bodies", () => {
  it("a key split across two messages by the 4,000 cut never shows in either", () => {
    const filler = "x".repeat(3990);
    const bodies = weixinBodies(`${filler} ${KEY} tail`);
    expect(bodies.length).toBeGreaterThanOrEqual(1);
    for (const b of bodies) expect(b).not.toContain(KEY_TAIL.slice(0, 8));
  });

  it("a key in emphasis or code spans iLink renders away is redacted", () => {
    for (const disguised of [
      `AKIA**${KEY_TAIL}**`,
      `AKIA\`${KEY_TAIL}\``,
      `**AKIA**${KEY_TAIL}`,
      `AKIA_${KEY_TAIL}_`,
    ]) {
      const joined = weixinBodies(`here: ${disguised}`).join("\n");
      expect(joined.replace(/[*`_]/g, "")).not.toContain(KEY);
    }
  });

  it("reduces a mermaid diagram to arrows and closes a fence left open", () => {
    const [body] = weixinBodies("```mermaid\ngraph TD\nA-->B\n```\n\n```py\nprint(1)");
    expect(body).toContain("*Diagram*");
    expect(body).toContain("A → B");
    expect((body?.match(/^```/gm) ?? []).length % 2).toBe(0);
  });
});

describe("weixin sends", () => {
  it("the key never reaches a sendmessage body, however the agent splits or dresses it", async () => {
    await lab.channel({
      turns: () => [
        [
          text("x".repeat(3995)),
          text(` ${KEY.slice(0, 10)}`),
          text(`${KEY.slice(10)} and AKIA**${KEY_TAIL}**`),
          done,
        ],
      ],
    });
    lab.fake.push(OWNER, "leak it");
    await lab.fake.waitFor(() => lab.fake.sent.length >= 2, 5000, "the answer");
    await new Promise((r) => setTimeout(r, 200));
    for (const call of lab.fake.callsTo("sendmessage")) {
      const body = JSON.stringify(call.body);
      expect(body).not.toContain(KEY_TAIL.slice(0, 8));
    }
  });

  it("a proactive send without a stored context token is refused locally and audited", async () => {
    const c = await lab.channel({ turns: () => [[text("hi"), done]] });
    await expect(c.running.transport.sendMessage(GUEST, "unasked")).rejects.toBeInstanceOf(WeixinSendRefused);
    expect(lab.fake.callsTo("sendmessage")).toHaveLength(0);
    expect(
      c.audit.records.some((r) => r.operation === "weixin.send" && r.fields.reason === "no_context_token"),
    ).toBe(true);
    // Once the peer wrote, the token is there and the send goes out with it.
    lab.fake.push(GUEST, "hello");
    await lab.fake.waitFor(() => lab.fake.sent.length === 1, 5000, "the answer");
    await c.running.transport.sendMessage(GUEST, "now you may");
    expect(lab.fake.sent.at(-1)?.visible).toBe("now you may");
    expect(c.running.transport.configuredTargets().find((t) => t.targetId === `dm:${GUEST}`)?.available).toBe(
      true,
    );
  });

  it("a peer removed from the allow-list gets no proactive send, though its token is stored", async () => {
    const a = await lab.channel({ turns: () => [[text("hi"), done]] });
    lab.fake.push(GUEST, "hello");
    await lab.fake.waitFor(() => lab.fake.sent.length === 1, 5000, "the answer");
    await a.stop();
    // The operator removes the guest; the store still holds their context token.
    const b = await lab.channel({ home: a.home, weixin: { allowedUserIds: [OWNER] } });
    expect(b.running.transport.maySendTo(GUEST, undefined, { principal: "" })).toBe(false);
    await expect(b.running.transport.sendMessage(GUEST, "still there?")).rejects.toBeInstanceOf(
      WeixinSendRefused,
    );
    expect(lab.fake.sent).toHaveLength(1);
    expect(
      b.audit.records.some(
        (r) => r.operation === "channel.proactive_send_authorize" && r.outcome === "denied",
      ),
    ).toBe(true);
  });

  it("under open, a learned peer is a configured target, yet maySendTo follows the policy alone", () => {
    const audit = new MemoryAuditSink();
    const open = new WeixinTransport({
      drops: testDrops(audit, "weixin"),
      audit,
      policy: new PeerPolicy({ dmPolicy: "open", allowedUserIds: [] }),
    });
    expect(open.maySendTo("anyone@im.wechat", undefined, { principal: "" })).toBe(true);
    const closed = new WeixinTransport({
      drops: testDrops(audit, "weixin"),
      audit,
      policy: new PeerPolicy({ dmPolicy: "disabled", allowedUserIds: [OWNER] }),
    });
    expect(closed.maySendTo(OWNER, undefined, { principal: "" })).toBe(false);
    expect(open.configuredTargets()).toEqual([]);
    const typo = new WeixinTransport({
      drops: testDrops(audit, "weixin"),
      audit,
      policy: new PeerPolicy({ dmPolicy: "opne", allowedUserIds: [OWNER] }),
    });
    expect(typo.maySendTo(OWNER, undefined, { principal: "" })).toBe(false);
  });
});

describe("weixin targets under open", () => {
  it("a peer who wrote is offered as a target, also after a restart (its token is kept)", async () => {
    const a = await lab.channel({
      weixin: { dmPolicy: "open", allowedUserIds: [] },
      turns: () => [[text("hi"), done]],
    });
    lab.fake.push("newcomer@im.wechat", "hello");
    await lab.fake.waitFor(() => lab.fake.sent.length === 1, 5000, "the answer");
    expect(a.running.transport.configuredTargets().map((t) => [t.targetId, t.available])).toContainEqual([
      "dm:newcomer@im.wechat",
      true,
    ]);
    await a.stop();
    const b = await lab.channel({ home: a.home, weixin: { dmPolicy: "open", allowedUserIds: [] } });
    expect(b.running.transport.configuredTargets().map((t) => t.targetId)).toContain("dm:newcomer@im.wechat");
  });
});
