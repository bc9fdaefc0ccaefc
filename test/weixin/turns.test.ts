/**
 * The whole Weixin channel against the iLink fake: an answer reaches the peer with its context token,
 * a stranger gets nothing and an audit row, a redelivered message_id is answered once, a bot item is
 * dropped, a send failing in its 200 body is reported, tables stay native, typing is shown.
 */
import { describe, expect, it } from "vitest";
import { codePointLength } from "../../src/messaging/security/redact.js";
import { ManualClock } from "../helpers/manual-clock.js";
import { done, fakeIlinkLab, GUEST, OWNER, STRANGER, text } from "./channel-harness.js";

const lab = fakeIlinkLab();

describe("weixin turns", () => {
  it("answers an allow-listed peer, echoing the context token of their latest message", async () => {
    const c = await lab.channel({ turns: () => [[text("Hello **there**"), done]] });
    const { contextToken } = lab.fake.push(OWNER, "hi");
    await lab.fake.waitFor(() => lab.fake.sent.length >= 1, 5000, "the answer");
    const answer = lab.fake.sent[0];
    expect(answer?.to).toBe(OWNER);
    expect(answer?.contextToken).toBe(contextToken);
    expect(answer?.visible).toContain("Hello there");
    // The ledger's key is the client_id: stable, parley's own.
    expect(answer?.clientId).toMatch(/^parley-[0-9a-f]{32}$/);
    // Typing shown (1) and cleared (2) through a getconfig ticket.
    await lab.fake.waitFor(() => lab.fake.typing.some((t) => t.status === 2), 5000, "typing off");
    expect(lab.fake.typing[0]).toEqual({ user: OWNER, status: 1 });
    expect(lab.fake.callsTo("getconfig").length).toBe(1);
    // The server's suggested long-poll timeout (the fake's 2 s) bounds the next polls.
    expect(c.running.poller.pollTimeoutMs).toBe(2000);
    await c.stop();
  });

  it("a stranger under allowlist gets no reply and an audit row", async () => {
    const c = await lab.channel({ turns: () => [[text("never"), done]] });
    lab.fake.push(STRANGER, "let me in");
    lab.fake.push(OWNER, "hi");
    await lab.fake.waitFor(() => lab.fake.sent.length >= 1, 5000, "the owner's answer");
    expect(lab.fake.sent.every((m) => m.to === OWNER)).toBe(true);
    expect(
      c.audit.records.some(
        (r) => r.operation === "weixin.dm_gate" && r.outcome === "denied" && r.fields.user === STRANGER,
      ),
    ).toBe(true);
    // No token is kept for a stranger: nothing could ever be sent to them.
    expect(c.running.transport.configuredTargets().some((t) => t.targetId === `dm:${STRANGER}`)).toBe(false);
  });

  it("a redelivered message_id is answered once; a bot item is dropped before authorization", async () => {
    const c = await lab.channel({
      turns: () => [
        [text("once"), done],
        [text("twice"), done],
      ],
    });
    lab.fake.push(OWNER, "question", { messageId: 77 });
    await lab.fake.waitFor(() => lab.fake.sent.length >= 1, 5000, "the answer");
    lab.fake.push(OWNER, "question", { messageId: 77 });
    lab.fake.push(OWNER, "an echo of parley's own", { bot: true });
    lab.fake.push(GUEST, "marker");
    await lab.fake.waitFor(() => lab.fake.sent.some((m) => m.to === GUEST), 5000, "the guest's answer");
    expect(lab.fake.sent.filter((m) => m.to === OWNER)).toHaveLength(1);
    expect(c.audit.records.some((r) => r.operation === "intake" && r.outcome === "dropped")).toBe(true);
    expect(c.audit.records.some((r) => r.operation === "weixin.dm_gate")).toBe(false);
  });

  it("a message without an id is never suppressed", async () => {
    await lab.channel({
      turns: () => [
        [text("one"), done],
        [text("two"), done],
      ],
    });
    lab.fake.push(OWNER, "same", { messageId: null });
    await lab.fake.waitFor(() => lab.fake.sent.length >= 1, 5000, "first");
    lab.fake.push(OWNER, "same", { messageId: null });
    await lab.fake.waitFor(() => lab.fake.sent.length >= 2, 5000, "second");
    expect(lab.fake.visible().join("\n")).toContain("two");
  });

  it("a send failing in its 200 body is reported, never counted as delivered", async () => {
    const c = await lab.channel({ turns: () => [[text("will fail"), done]] });
    lab.fake.inject("sendmessage", 40001, 5);
    lab.fake.push(OWNER, "hi");
    await lab.fake.waitFor(
      () => c.audit.records.some((r) => r.operation === "weixin.send" && r.outcome === "failed"),
      5000,
      "the failure",
    );
    expect(lab.fake.sent).toHaveLength(0);
    expect(c.logger.entries.some((e) => e.message.includes("did not land"))).toBe(true);
  });

  it("keeps tables native, every message within 4,000 code points with fences balanced", async () => {
    const table = "| a | b |\n|---|---|\n| 1 | 2 |";
    const long = `${table}\n\n\`\`\`ts\n${"const x = 1; // 😀\n".repeat(500)}\`\`\`\n\nend`;
    await lab.channel({ turns: () => [[text(long), done]] });
    lab.fake.push(OWNER, "go");
    await lab.fake.waitFor(() => lab.fake.sent.some((m) => m.text.includes("end")), 8000, "the whole answer");
    expect(lab.fake.sent[0]?.text).toContain(table);
    for (const m of lab.fake.sent) {
      expect(codePointLength(m.text)).toBeLessThanOrEqual(4000);
      expect((m.text.match(/^```/gm) ?? []).length % 2).toBe(0);
    }
    expect(lab.fake.sent.length).toBeGreaterThan(2);
  });

  it("mid-turn: steered into a live turn that takes it; else a one-shot notice to resend", async () => {
    const clock = new ManualClock();
    const c = await lab.channel({
      supportsSteer: false,
      provider: { timers: clock },
      turns: () => [{ steps: [{ delayMs: 1000 }, text("first answer"), done] }],
    });
    lab.fake.push(OWNER, "long job");
    await lab.fake.waitFor(() => [...c.providers.values()][0]?.hasActiveTurn() === true, 5000, "the turn");
    lab.fake.push(OWNER, "and another thing");
    await lab.fake.waitFor(
      () => lab.fake.visible().some((v) => v.includes("Send it again")),
      5000,
      "the notice",
    );
    expect(lab.fake.visible().filter((v) => v.includes("Send it again"))).toHaveLength(1);
    await clock.advance(1000);
    await lab.fake.waitFor(
      () => lab.fake.visible().some((v) => v.includes("first answer")),
      5000,
      "the answer",
    );
    expect([...c.providers.values()][0]?.prompts).toEqual(["long job"]);
  });

  it("typing failures are ignored: the answer still arrives", async () => {
    await lab.channel({ turns: () => [[text("still here"), done]] });
    lab.fake.inject("getconfig", 50001, 5);
    lab.fake.push(OWNER, "hi");
    await lab.fake.waitFor(
      () => lab.fake.visible().some((v) => v.includes("still here")),
      5000,
      "the answer",
    );
    expect(lab.fake.typing).toHaveLength(0);
  });
});
