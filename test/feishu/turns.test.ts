/**
 * A Feishu turn as its user sees it, the whole channel against the fake: one buffered answer sent
 * when the turn is done, every part a reply to the message that asked, in order, each within 4,000
 * code points and the request-size cap with its fences balanced; what the user must know meanwhile
 * as replies; a key never reaching a body, however the model hides it; `<at all>` notifying nobody;
 * a file answered with a notice; mid-turn messages steered or refused; a rate limit waited out.
 */
import { describe, expect, it } from "vitest";
import { FEISHU_MAX_CHARS, FEISHU_POST_MAX_BYTES } from "../../src/feishu/format.js";
import { resendNotice } from "../../src/messaging/channel/render-kit.js";
import { COMPACT_BUSY } from "../../src/messaging/session/agent-controls.js";
import { iterFenceLines } from "../../src/messaging/text/split.js";
import type { ScriptStep } from "../../src/providers/scripted.js";
import { ManualClock } from "../helpers/manual-clock.js";
import { dmChat, done, fakeFeishuLab, OWNER, shown, text } from "./channel-harness.js";

const lab = fakeFeishuLab();
const SECRET = "AKIAQ7ZR3M5TXW2KP9VB";

/** Every md body the bot sent (replies, creations and edits), as sent. */
function bodies(): string[] {
  return lab.fake.callsTo(/^(POST|PUT) \/open-apis\/im\/v1\/messages/).map((c) => {
    const content = JSON.parse(String(c.body?.content ?? "{}")) as {
      zh_cn?: { content?: { text?: string }[][] };
    };
    return (
      content.zh_cn?.content
        ?.flat()
        .map((e) => e.text ?? "")
        .join("") ?? ""
    );
  });
}

const answered = (n: number, what = "the answer") =>
  lab.fake.waitFor(() => shown(lab.fake).length >= n, 5000, what);

describe("a turn", () => {
  it("is one buffered answer, a reply to the message that asked, ending with its status line", async () => {
    await lab.connected({ turns: () => [[text("Hello "), text("**there**."), done]] });
    const { messageId } = lab.fake.pushMessage(OWNER, "hi");
    await answered(1);
    expect(lab.fake.callsTo(/reply$/).map((c) => c.path)).toEqual([
      `/open-apis/im/v1/messages/${messageId}/reply`,
    ]);
    expect(shown(lab.fake)).toEqual([expect.stringMatching(/^Hello there\.\n\nFinished in \d+s$/)]);
    expect(lab.fake.botMessages()[0]?.msgType).toBe("post");
  });

  it("a long answer: parts in order, each within 4,000 code points and the byte cap, fences balanced, all replies to one message", async () => {
    const para = "多字节的中文句子，还有 emoji 😀 and ASCII words to make it long. ".repeat(20);
    const steps: ScriptStep[] = [];
    for (let i = 0; i < 24; i++)
      steps.push(
        text(
          i % 4 === 3 ? `\`\`\`ts\nconst part${i} = "${"x".repeat(900)}";\n\`\`\`\n\n` : `${i}: ${para}\n\n`,
        ),
      );
    await lab.connected({ turns: () => [[...steps, text("THE END."), done]] });
    const { messageId } = lab.fake.pushMessage(OWNER, "write a lot");
    await lab.fake.waitFor(
      () => shown(lab.fake).some((v) => v.includes("THE END.")),
      10_000,
      "the last part",
    );
    const replies = lab.fake.callsTo(/reply$/);
    expect(replies.length).toBeGreaterThan(3);
    expect(replies.every((c) => c.path.includes(messageId))).toBe(true);
    const sent = bodies();
    for (const [i, md] of sent.entries()) {
      expect(Array.from(md).length, `part ${i}`).toBeLessThanOrEqual(FEISHU_MAX_CHARS);
      expect(replies[i]?.bytes, `part ${i} request`).toBeLessThanOrEqual(FEISHU_POST_MAX_BYTES);
      const roles = [...iterFenceLines(md)].map(([, role]) => role);
      expect(roles.filter((r) => r === "open").length, `part ${i} fences`).toBe(
        roles.filter((r) => r === "close").length,
      );
    }
    // In order: the numbered paragraphs rise across the parts, and the end is last.
    const order =
      sent
        .join("\n")
        .match(/^\d+: /gm)
        ?.map((m) => Number.parseInt(m, 10)) ?? [];
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(sent.at(-1)).toMatch(/THE END\.\n\nFinished in \d+s$/);
  });

  it(`${SECRET} split across two chunks, in emphasis or in link syntax never reaches a body`, async () => {
    await lab.connected({
      turns: () => [
        [
          text(`one ${SECRET.slice(0, 9)}`),
          text(`${SECRET.slice(9)} two\n\n`),
          text(`three AKIA**${SECRET.slice(4, 12)}**${SECRET.slice(12)} four\n\n`),
          text(`five [${SECRET.slice(0, 10)}](https://example.com/x)${SECRET.slice(10)} six\n\n`),
          text(`seven _${SECRET.slice(0, 6)}_${SECRET.slice(6)}`),
          done,
        ],
      ],
    });
    lab.fake.pushMessage(OWNER, "show me the keys");
    await answered(1);
    const everything = [...bodies(), ...shown(lab.fake)].join("\n");
    expect(everything).toContain("one");
    expect(everything).not.toContain(SECRET.slice(4));
    expect(everything.replace(/[*_`[\]()]/g, "")).not.toContain(SECRET.slice(4));
  });

  it("options become a numbered list; an unfinished [OPTIONS tail stays as the model wrote it", async () => {
    await lab.connected({
      turns: () => [
        [text("Pick one:\n[OPTIONS: red | green]"), done],
        [text("The syntax is [OPTIONS: a | b"), done],
      ],
    });
    lab.fake.pushMessage(OWNER, "choose");
    await answered(1);
    expect(shown(lab.fake)[0]).toMatch(/^Pick one:\n\n1\. red\n2\. green\n\nFinished in \d+s$/);
    lab.fake.pushMessage(OWNER, "explain");
    await answered(2);
    // Nothing was shown early, so an open marker can only be the model's own prose: it is kept.
    expect(shown(lab.fake)[1]).toMatch(/^The syntax is \[OPTIONS: a \| b\n\nFinished in \d+s$/);
  });

  it('model text with <at user_id="all"> notifies nobody', async () => {
    await lab.connected({
      turns: () => [
        [text('Attention <at user_id="all"></at> and <at id=all></at> and <AT email="x@y.z"></AT>'), done],
      ],
    });
    lab.fake.pushMessage(OWNER, "announce it");
    await answered(1);
    const [message] = lab.fake.botMessages();
    expect(message?.mentionsAll).toBe(false);
    expect(message?.visible).not.toContain("@all");
    expect(message?.visible).toContain("Attention");
  });

  it("a file alone gets a visible 'files are not supported yet', not silence", async () => {
    const c = await lab.connected({ turns: () => [[text("never"), done]] });
    lab.fake.pushMessage(OWNER, "", {
      messageType: "image",
      content: JSON.stringify({ image_key: "img_v2_1" }),
    });
    await answered(1, "the notice");
    expect(shown(lab.fake)[0]).toContain("Files are not supported here yet");
    expect(c.providers.size).toBe(0);
  });

  it("the wait for a free agent and a failure come as replies (buffered, not silent)", async () => {
    const clock = new ManualClock();
    await lab.connected({
      turns: () => [
        [{ type: "agent_wait", position: 2 }, { delayMs: 10 }, { throws: "agent failed: out of memory" }],
      ],
      provider: { timers: clock },
    });
    lab.fake.pushMessage(OWNER, "hello");
    await answered(1, "the waiting notice");
    expect(shown(lab.fake)[0]).toBe("⏳ Waiting for a free agent… (1 ahead)");
    await clock.advance(10);
    await answered(2, "the failure");
    expect(shown(lab.fake)[1]).toContain("Agent failed: out of memory");
  });

  it("mid-turn: steered into a live turn; when it cannot be, the user is asked to send it again", async () => {
    const clock = new ManualClock();
    const steering = await lab.connected({
      supportsSteer: true,
      provider: { timers: clock },
      turns: () => [[{ delayMs: 1000 }, text("done"), done]],
    });
    lab.fake.pushMessage(OWNER, "first");
    await lab.fake.waitFor(
      () => [...steering.providers.values()][0]?.hasActiveTurn() === true,
      5000,
      "the turn",
    );
    const { event } = lab.fake.pushMessage(OWNER, "and this too");
    await lab.fake.waitFor(() => event.acked, 5000, "the steer");
    await lab.fake.waitFor(() => [...steering.providers.values()][0]?.steers.length === 1, 5000, "steered");
    expect(shown(lab.fake)).toEqual([]);
    await clock.advance(1000);
    await answered(1);
    await steering.stop();

    const refusing = await lab.connected({
      supportsSteer: false,
      provider: { timers: clock },
      turns: () => [[{ delayMs: 1000 }, text("done"), done]],
    });
    lab.fake.pushMessage(OWNER, "first again");
    await lab.fake.waitFor(
      () => [...refusing.providers.values()][0]?.hasActiveTurn() === true,
      5000,
      "the turn",
    );
    lab.fake.pushMessage(OWNER, "too soon");
    await answered(2, "the refusal");
    expect(shown(lab.fake)[1]).toBe(resendNotice(false));
    expect(
      refusing.running.hub.router.receiptQueue(
        refusing.running.hub.keyOf({ chatType: "p2p", route: OWNER.openId, chatId: dmChat(OWNER) }),
      ).size,
    ).toBe(0);
    await clock.advance(1000);
    await answered(3);
    expect([...refusing.providers.values()][0]?.prompts).toEqual(["first again"]);
  });

  it("a rate-limit response is waited out: no reply is sent inside the window", async () => {
    await lab.connected({ turns: () => [[text("worth the wait"), done]] });
    lab.fake.inject("reply", {
      status: 429,
      code: 99991400,
      msg: "request trigger frequency limit",
      resetSeconds: 1,
    });
    lab.fake.pushMessage(OWNER, "hi");
    await lab.fake.waitFor(() => shown(lab.fake).length === 1, 8000, "the answer after the window");
    const replies = lab.fake.callsTo(/reply$/);
    expect(replies.map((c) => c.status)).toEqual([429, 200]);
    const [limited, landed] = replies;
    expect((landed?.at ?? 0) - (limited?.at ?? 0)).toBeGreaterThanOrEqual(1000);
  });

  it("a per-chat limit (code 230020 as HTTP 400, no reset named) is backed off, doubling, then sent once", async () => {
    await lab.connected({
      turns: () => [[text("after the backoff"), done]],
      overrides: { rest: { backoffMs: 300 } },
    });
    lab.fake.inject(
      "reply",
      { status: 400, code: 230020, msg: "This operation triggers the frequency limit." },
      2,
    );
    lab.fake.pushMessage(OWNER, "hi");
    await lab.fake.waitFor(() => shown(lab.fake).length === 1, 8000, "the answer after the backoff");
    const replies = lab.fake.callsTo(/reply$/);
    expect(replies.map((c) => c.status)).toEqual([400, 400, 200]);
    const [a, b, c] = replies.map((r) => r.at);
    expect((b ?? 0) - (a ?? 0)).toBeGreaterThanOrEqual(300);
    expect((c ?? 0) - (b ?? 0)).toBeGreaterThanOrEqual(600);
    expect(lab.fake.botMessages()).toHaveLength(1);
  });

  it("context notices come as their own replies: the soft one once per growth cycle, the hard one compacts", async () => {
    const usage = (pct: number): ScriptStep => ({ type: "usage", used: pct * 2_000, size: 200_000 });
    const c = await lab.connected({
      turns: () => [
        [usage(82), text("one"), done],
        [usage(85), text("two"), done],
        [usage(93), text("three"), done],
      ],
      provider: { compaction: { outcome: { ok: true, contextUsagePct: 9 } } },
    });
    for (const [i, words] of ["a", "b", "c"].entries()) {
      lab.fake.pushMessage(OWNER, words);
      await lab.fake.waitFor(
        () => shown(lab.fake).some((v) => v.startsWith(["one", "two", "three"][i] ?? "")),
        5000,
        `answer ${i}`,
      );
      await lab.fake.waitFor(() => !c.sessions.isBusy([...c.providers.keys()][0] ?? ""), 5000, "idle");
    }
    await lab.fake.waitFor(
      () => shown(lab.fake).some((v) => v.includes("Context reached 93%")),
      5000,
      "compacted",
    );
    const notices = shown(lab.fake).filter((v) => v.includes("of the agent's context"));
    expect(notices).toHaveLength(1);
    expect(shown(lab.fake).every((v) => !(v.includes("one") && v.includes("of the agent's context")))).toBe(
      true,
    );
  });

  it("/compact waits its turn (refused while one runs, never beside it) and a manual one re-arms the soft notice", async () => {
    const clock = new ManualClock();
    const usage = (pct: number): ScriptStep => ({ type: "usage", used: pct * 2_000, size: 200_000 });
    const c = await lab.connected({
      provider: { timers: clock, compaction: { outcome: { ok: true, contextUsagePct: 81 } } },
      turns: () => [
        [usage(82), { delayMs: 1000 }, text("one"), done],
        [usage(84), text("two"), done],
      ],
    });
    const notices = () => shown(lab.fake).filter((v) => v.includes("of the agent's context"));
    lab.fake.pushMessage(OWNER, "a");
    await lab.fake.waitFor(() => [...c.providers.values()][0]?.hasActiveTurn() === true, 5000, "the turn");
    lab.fake.pushMessage(OWNER, "/compact");
    await answered(1, "the busy answer");
    expect(shown(lab.fake)[0]).toBe(COMPACT_BUSY);
    expect([...c.providers.values()][0]?.compactions).toBe(0);
    await clock.advance(1000);
    await lab.fake.waitFor(() => notices().length === 1, 5000, "the soft notice");
    await lab.fake.waitFor(() => !c.sessions.isBusy([...c.providers.keys()][0] ?? ""), 5000, "idle");
    lab.fake.pushMessage(OWNER, "/compact");
    await lab.fake.waitFor(
      () => shown(lab.fake).some((v) => v.includes("Context usage is now 81%")),
      5000,
      "compacted",
    );
    expect([...c.providers.values()][0]?.compactions).toBe(1);
    // Still above the soft threshold, but the manual compaction released the latch: said again.
    lab.fake.pushMessage(OWNER, "b");
    await lab.fake.waitFor(() => notices().length === 2, 5000, "the soft notice again");
  });
});
