/**
 * What a Webex user receives: a redelivered activity is neither steered in nor answered twice, a
 * restart mid-turn posts no duplicate, no message gets an 11th edit, every body fits 7,439 bytes
 * (CJK included) with fences balanced, a 429 is waited out, and a planted key never shows.
 */
import { describe, expect, it } from "vitest";
import { WEBEX_MAX_BYTES } from "../../src/webex/format.js";
import { shown } from "../conformance/webex.harness.js";
import { ManualClock } from "../helpers/manual-clock.js";
import type { WebexOptions } from "./harness.js";
import { ALICE, DM, done, text, until, webexLab } from "./harness.js";

const lab = webexLab();
const channel = (o?: WebexOptions) => lab.channel(o);

const everything = () => lab.fake.botMessages().flatMap(shown);

describe("webex delivery", () => {
  it("a redelivered activity mid-turn is not steered in and is answered once", async () => {
    const timers = new ManualClock();
    const c = await channel({
      turns: [[{ delayMs: 60_000 }, text("the one answer"), done]],
      provider: { timers, supportsSteer: true },
    });
    const first = lab.fake.userMessage({ email: ALICE, roomId: DM, text: "first" });
    await until(() => c.providers[0]?.hasActiveTurn() === true, "the turn running");
    await until(() => lab.fake.acked(first.frameId), "the ack");
    lab.fake.redeliver(first.frameId);
    lab.fake.redeliver(first.frameId);
    // A message after the redeliveries proves they were handled (frames are processed in order).
    await until(() => lab.fake.callsTo("GET", /^\/v1\/messages\//).length === 1, "one hydration only");
    await timers.advance(60_000);
    await until(() => everything().some((v) => v.includes("the one answer")), "the answer");
    expect(c.providers[0]?.steers).toEqual([]);
    expect(c.providers[0]?.prompts).toHaveLength(1);
    expect(lab.fake.botMessages(DM).filter((m) => m.markdown.includes("the one answer"))).toHaveLength(1);
  });

  it("kill mid-turn and restart: the turn is answered on its own placeholder, no duplicate", async () => {
    const timers = new ManualClock();
    const a = await channel({ turns: [[{ delayMs: 60_000 }]], provider: { timers } });
    const sent = lab.fake.userMessage({ email: ALICE, roomId: DM, text: "survive this" });
    await until(() => lab.fake.botMessages(DM).length === 1, "the placeholder");
    await until(() => lab.fake.acked(sent.frameId), "the ack");
    // The process dies: no more frames are handled and the running turn is abandoned.
    await a.running.client.close();
    const b = await channel({ home: a.home, turns: [[text("answered after the restart"), done]] });
    await until(() => everything().some((v) => v.includes("answered after the restart")), "the answer");
    // Webex delivers the activity again: the journal holds it, nothing new is answered.
    lab.fake.redeliver(sent.frameId);
    await until(() => b.audit.find("intake", "dropped").length === 1, "the redelivery dropped");
    const answers = lab.fake.botMessages(DM);
    expect(answers).toHaveLength(1);
    expect(answers[0]?.markdown).toContain("answered after the restart");
    expect(b.providers).toHaveLength(1);
  });

  it("no message gets an 11th edit, every body fits the byte cap with fences balanced, the answer lands", async () => {
    const steps = [];
    for (let i = 0; i < 30; i++) {
      steps.push({ type: "tool_call" as const, toolCallId: `t${i}`, title: `步骤 ${i}`, kind: "read" });
      steps.push(
        text(
          `第${i}段：${"数据分析结果显示增长。".repeat(40)}\n\n\`\`\`python\nprint("${"中".repeat(300)}")\n\`\`\`\n\n`,
        ),
      );
    }
    await channel({ turns: [[...steps, text("全部完成。"), done]] });
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "analyse" });
    await until(() => everything().some((v) => v.includes("全部完成。")), "the end of the answer", 15_000);
    const messages = lab.fake.botMessages(DM);
    expect(messages.length).toBeGreaterThan(3);
    expect(lab.fake.calls.filter((c) => c.method === "PUT" && c.status !== 200)).toEqual([]);
    for (const m of messages) {
      expect(m.edits).toBeLessThanOrEqual(10);
      for (const v of m.versions) expect(Buffer.byteLength(v, "utf8")).toBeLessThanOrEqual(WEBEX_MAX_BYTES);
      const fences = m.markdown.split("\n").filter((l) => l.startsWith("```")).length;
      expect(fences % 2, m.markdown.slice(0, 80)).toBe(0);
    }
    // Every paragraph arrived, in order.
    const all = messages.map((m) => m.markdown).join("\n");
    for (let i = 0; i < 30; i++) expect(all).toContain(`第${i}段`);
    expect(all.indexOf("第29段")).toBeGreaterThan(all.indexOf("第0段"));
  });

  it("a key split across two chunks, or in a status frame's tail, reaches no message or card", async () => {
    const key = "AKIAQ7ZR3M5TXW2KP9VB";
    const timers = new ManualClock();
    // Filler that ends just before a chunk boundary, so the key straddles it.
    const filler = "word ".repeat(352);
    await channel({
      turns: [
        [
          text(`${filler}${key} trailing`),
          { type: "tool_call", toolCallId: "t", title: "reading", kind: "read" },
          { delayMs: 1000 },
          text(`\n\nand again ${key}\n[OPTIONS: use ${key} | no]`),
          done,
        ],
      ],
      provider: { timers },
    });
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "leak please" });
    await until(() => lab.fake.botMessages(DM).some((m) => m.versions.length > 1), "a status frame");
    await timers.advance(1000);
    await until(() => everything().some((v) => v.includes("and again")), "the answer");
    for (const v of everything()) {
      expect(v).not.toContain("AKIAQ7ZR");
      expect(v).not.toContain("M5TXW2KP9VB");
      expect(v).not.toContain("3M5TXW");
    }
  });

  it("a 429 is waited out (Retry-After) and the answer still lands", async () => {
    await channel({ turns: [[text("after the wait"), done]] });
    lab.fake.throttleNext(2, 0);
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "hi" });
    await until(() => everything().some((v) => v.includes("after the wait")), "the answer");
    expect(lab.fake.calls.filter((c) => c.status === 429)).toHaveLength(2);
  });

  it("the device is deleted on shutdown and every call carried the token to the fake only", async () => {
    const c = await channel({ turns: [[text("ok"), done]] });
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "hi" });
    await until(() => everything().some((v) => v.includes("ok")), "the answer");
    expect(lab.fake.devices.size).toBe(1);
    await c.stop();
    expect(lab.fake.devices.size).toBe(0);
    expect(lab.fake.calls.every((call) => call.authorized)).toBe(true);
  });
});
