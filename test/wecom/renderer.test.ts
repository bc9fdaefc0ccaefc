/**
 * The WeCom renderer against the fake: a bubble streamed by replacement and sealed, the byte cap in
 * every frame and push (CJK and emoji), fences balanced in each, the over-cap head and tail (the
 * tail only after the sealing frame's verdict, a refused head pushed once, no tail without its
 * head, a missing part said in the chat and the rest following), a connection failing mid-answer
 * (a push or the seal in flight when the socket dies, or never acknowledged: the whole answer
 * arrives in order), the push budget spent (the rest waits, and the head says so), rolling bubbles
 * at the 10-minute lifetime (no text missing, at most one frame repeated),
 * transforms per slice with progress on the raw slice, reasoning redacted on the joined text, the
 * approval prompt and its decision as pushes, and the fresh-session notice above the answer.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { approvalOutcomeLabel } from "../../src/messaging/channel/render-kit.js";
import { WECOM_MAX_REPLY_BYTES, WECOM_MAX_REPLY_CHARS } from "../../src/wecom/limits.js";
import { ERR_RATE, ERR_STREAM_DEAD, ERR_UNROUTABLE } from "../fakes/wecom/server.js";
import { ManualClock, settle } from "../helpers/manual-clock.js";
import type { Wired } from "./helpers.js";
import { fencesBalanced, wire, wireTexts } from "./helpers.js";

let w: Wired | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const cps = (s: string) => Array.from(s).length;
const HOUR = 3_600_000;
const strip = (s: string) =>
  s
    .replace(/<think>[\s\S]*?<\/think>\n*/g, "")
    .replace(/\n*_[^_\n]*(Finished|Thinking|Writing)[^_\n]*_$/u, "")
    .trim();

function expectWithinCaps(texts: string[]) {
  for (const t of texts) {
    expect(Buffer.byteLength(t)).toBeLessThanOrEqual(WECOM_MAX_REPLY_BYTES);
    expect(cps(t)).toBeLessThanOrEqual(WECOM_MAX_REPLY_CHARS);
    expect(fencesBalanced(t), t.slice(0, 200)).toBe(true);
  }
}

describe("a bubble", () => {
  it("streams by replacement and is sealed with the answer and the end's status line", async () => {
    w = await wire();
    const a = w.message();
    const r = w.renderer(a);
    await r.onTurnStart();
    await r.onThinking("Let me think.");
    await r.onTextChunk("Hello ");
    await vi.waitFor(() => expect(w?.fake.bubbles()[0]?.frames ?? 0).toBeGreaterThan(0));
    await r.onTextChunk("there.");
    await r.onDone("end_turn");
    await r.close();
    const [bubble, ...rest] = w.fake.bubbles();
    expect(rest).toEqual([]);
    expect(bubble?.finished).toBe(true);
    expect(bubble?.content).toMatch(
      /^<think>Let me think\.<\/think>\n\nHello there\.\n\n_Finished in \d+s_$/,
    );
    expect(w.fake.pushes).toEqual([]);
  });

  it("a turn that never started still ends on screen", async () => {
    w = await wire();
    const r = w.renderer(w.message());
    await r.close(new Error("no agent"));
    expect(w.fake.visible()).toEqual([expect.stringContaining("The agent did not answer")]);
  });
});

describe("caps and fences", () => {
  it("every frame and push fits 20,480 bytes and 5,120 code points with CJK and emoji, fences balanced, nothing lost", async () => {
    w = await wire();
    const r = w.renderer(w.message());
    const para = "这是一个很长的中文段落，用来测试字节上限。😀🎉 ".repeat(40);
    const chunks: string[] = [];
    for (let i = 0; i < 30; i++)
      chunks.push(i % 6 === 5 ? `\`\`\`ts\nconst 变量${i} = "值😀";\n\`\`\`\n\n` : `${para}${i}\n\n`);
    await r.onTurnStart();
    for (const c of chunks) {
      await r.onTextChunk(c);
      await r.onThinking(`思考 ${"🤔".repeat(50)} `);
    }
    await r.onDone("end_turn");
    await r.close();
    const texts = wireTexts(w.fake);
    expect(texts.length).toBeGreaterThan(3);
    expectWithinCaps(texts);
    // The head sealed in the bubble, the rest as pushes: together, the whole answer in order.
    const delivered = [w.fake.bubbles().at(-1)?.content ?? "", ...w.fake.pushes.map((p) => p.content)].map(
      strip,
    );
    const whole = delivered.join("\n\n").replace(/\s+/g, "");
    expect(whole).toContain(chunks.join("").replace(/\s+/g, "").slice(0, 2000));
    for (const c of chunks) expect(whole).toContain(c.replace(/\s+/g, ""));
    expect(w.fake.pushes.length).toBeGreaterThan(0);
    expect(w.fake.pushes.every((p) => p.accepted)).toBe(true);
  });
});

describe("the over-cap answer", () => {
  const long = Array.from({ length: 4 }, (_, i) => `Section ${i}\n\n${"word ".repeat(1200)}`).join("\n\n");

  it("holds the tail until the sealing frame's verdict is in", async () => {
    w = await wire();
    const r = w.renderer(w.message());
    await r.onTextChunk(long);
    w.fake.replyAcks = "hold";
    const done = r.onDone("end_turn");
    await vi.waitFor(() => expect(w?.fake.heldAcks).toBe(1));
    await settle();
    expect(w.fake.pushes).toEqual([]);
    w.fake.replyAcks = "immediate";
    w.fake.releaseAcks();
    await done;
    expect(w.fake.bubbles()[0]?.content.startsWith("Section 0")).toBe(true);
    expect(w.fake.pushes.map((p) => p.content.slice(0, 9))).toEqual(
      expect.arrayContaining([expect.stringMatching(/^(Section|word)/)]),
    );
    expect(r.deliveryFailed).toBe(false);
  });

  it("a refused sealing frame is recovered ONCE as a push, ahead of the tail", async () => {
    w = await wire();
    const r = w.renderer(w.message());
    await r.onTextChunk(long);
    w.fake.refuseNext(
      (cmd, body) => cmd === "aibot_respond_msg" && JSON.stringify(body).includes('"finish":true'),
      40_050,
    );
    await r.onDone("end_turn");
    await r.close();
    await r.close();
    const heads = w.fake.pushes.filter((p) => p.content.startsWith("Section 0"));
    expect(heads).toHaveLength(1);
    expect(w.fake.pushes[0]?.content.startsWith("Section 0")).toBe(true);
    expect(w.fake.pushes.length).toBeGreaterThan(1);
    expect(w.fake.bubbles()[0]?.finished).toBe(false);
  });

  it("a tail never arrives without its head", async () => {
    w = await wire();
    const r = w.renderer({ ...w.message({ responseUrl: false }) });
    await r.onTextChunk(long);
    w.fake.refuseNext(
      (cmd, body) => cmd === "aibot_respond_msg" && JSON.stringify(body).includes('"finish":true'),
      40_050,
    );
    w.fake.refuseNext((cmd) => cmd === "aibot_send_msg", 40_051);
    await r.onDone("end_turn");
    expect(w.fake.pushes.filter((p) => p.accepted)).toEqual([]);
    expect(w.fake.pushes).toHaveLength(1);
    expect(r.deliveryFailed).toBe(true);
    expect(w.audit.find("delivery", "failed")[0]?.fields.reason).toBe("head_undelivered");
  });

  it("a refused part of the tail is said in the chat where it belongs, and the rest follows", async () => {
    w = await wire();
    const r = w.renderer(w.message());
    await r.onTextChunk(long);
    w.fake.refuseNext((cmd) => cmd === "aibot_send_msg", 45_009);
    await r.onDone("end_turn");
    const [refused, notice, ...rest] = w.fake.pushes;
    expect(refused?.accepted).toBe(false);
    const total = 2 + rest.length;
    expect(notice).toMatchObject({ accepted: true });
    expect(notice?.content).toContain(`⚠️ Part 2 of ${total} did not arrive: WeCom refused it (error 45009).`);
    expect(rest.length).toBeGreaterThan(0);
    expect(rest.every((p) => p.accepted)).toBe(true);
    // The last part still carries the end's status line.
    expect(rest.at(-1)?.content).toMatch(/Finished/);
    expect(r.deliveryFailed).toBe(true);
    expect(w.audit.find("delivery", "failed")[0]?.fields).toMatchObject({ reason: "part_refused", part: 2 });
  });

  it("a refused part whose notice cannot be pushed either is said through the response_url, and the rest follows", async () => {
    w = await wire();
    const r = w.renderer(w.message());
    await r.onTextChunk(long);
    // The part and the push of its notice are both refused.
    w.fake.refuseNext((cmd) => cmd === "aibot_send_msg", 45_009);
    w.fake.refuseNext((cmd) => cmd === "aibot_send_msg", 45_009);
    await r.onDone("end_turn");
    const [part, notice, ...rest] = w.fake.pushes;
    expect([part?.accepted, notice?.accepted]).toEqual([false, false]);
    expect(notice?.content).toContain("⚠️ Part 2 of");
    expect(w.fake.posts.map((p) => p.content)).toEqual([expect.stringContaining("⚠️ Part 2 of")]);
    expect(rest.length).toBeGreaterThan(0);
    expect(rest.every((p) => p.accepted)).toBe(true);
    expect(r.deliveryFailed).toBe(true);
  });

  it("a refused part and no way to say so: nothing after it is sent, and it is audited", async () => {
    w = await wire();
    const r = w.renderer(w.message({ responseUrl: false }));
    await r.onTextChunk(long);
    w.fake.refuseNext((cmd) => cmd === "aibot_send_msg", 45_009);
    w.fake.refuseNext((cmd) => cmd === "aibot_send_msg", 45_009);
    await r.onDone("end_turn");
    expect(w.fake.pushes).toHaveLength(2);
    expect(w.fake.pushes.some((p) => p.accepted)).toBe(false);
    expect(w.audit.find("delivery", "failed")[0]?.fields).toMatchObject({ reason: "part_refused", part: 2 });
    expect(w.logger.entries.some((e) => e.message.includes("the rest is withheld"))).toBe(true);
  });

  it("with no usable stream (846605) the head goes out as a confirmed push, then the tail", async () => {
    w = await wire();
    const a = w.message();
    const r = w.renderer(a);
    await r.onTurnStart();
    await r.onTextChunk("first words");
    await vi.waitFor(() => expect(w?.fake.bubbles()[0]?.content).toContain("first words"));
    w.fake.makeUnroutable(a.reqId ?? "");
    await r.onTextChunk(` ${long}`);
    await vi.waitFor(() =>
      expect(w?.fake.framesOf("aibot_respond_msg").at(-1)?.errcode).toBe(ERR_UNROUTABLE),
    );
    await r.onDone("end_turn");
    expect(w.fake.pushes.map((p) => p.accepted)).toEqual(w.fake.pushes.map(() => true));
    expect(w.fake.pushes[0]?.content.startsWith("first words")).toBe(true);
    expect(r.deliveryFailed).toBe(false);
  });
});

describe("a connection that fails mid-answer", () => {
  // Every word distinct, so a part shown twice (or one missing) cannot hide among identical parts.
  const long = Array.from(
    { length: 3 },
    (_, i) => `Section ${i}\n\n${Array.from({ length: 900 }, (_, j) => `w${i}.${j}`).join(" ")}`,
  ).join("\n\n");
  /** The text without its status line and whitespace (a cut may fall inside a word). */
  const bare = (t: string) => strip(t).replace(/\s+/g, "");
  /** What the user reads, bubble then pushes, as one string. */
  const read = (x: Wired) => x.fake.visible().map(bare).join("");
  const isPush = (cmd: string) => cmd === "aibot_send_msg";

  it("the socket closes with a part in flight: the whole answer still arrives, in order, no part twice", async () => {
    w = await wire({ ackTimeoutMs: 2_000 });
    const r = w.renderer(w.message());
    await r.onTextChunk(long);
    let pushes = 0;
    w.fake.mishapNext((cmd) => isPush(cmd) && ++pushes === 2, "drop");
    const subscribes = w.fake.subscribes;
    await r.onDone("end_turn");
    expect(w.fake.subscribes).toBe(subscribes + 1);
    expect(read(w)).toBe(bare(long));
    const contents = w.fake.pushes.map((p) => p.content);
    expect(new Set(contents).size).toBe(contents.length);
    expect(w.fake.pushes.every((p) => p.accepted)).toBe(true);
    expect(r.deliveryFailed).toBe(false);
    expect(w.fake.visible().at(-1)).toMatch(/Finished/);
  });

  it("the ack never comes (the part lost on the way): it is sent again, then the rest, in order", async () => {
    w = await wire({ ackTimeoutMs: 300 });
    const r = w.renderer(w.message());
    await r.onTextChunk(long);
    let pushes = 0;
    w.fake.mishapNext((cmd) => isPush(cmd) && ++pushes === 1, "lost");
    await r.onDone("end_turn");
    expect(read(w)).toBe(bare(long));
    const contents = w.fake.pushes.map((p) => p.content);
    expect(new Set(contents).size).toBe(contents.length);
    // The lost frame reached the wire once and nothing answered it; the re-send did land.
    const sent = w.fake.framesOf("aibot_send_msg");
    expect(sent.filter((f) => f.errcode === null)).toHaveLength(1);
    expect(sent.length).toBe(contents.length + 1);
    expect(r.deliveryFailed).toBe(false);
  });

  it("an ack lost after the part landed: the part shows at most once more, right after itself, and nothing is missing", async () => {
    w = await wire({ ackTimeoutMs: 300 });
    const r = w.renderer(w.message());
    await r.onTextChunk(long);
    let pushes = 0;
    w.fake.mishapNext((cmd) => isPush(cmd) && ++pushes === 1, "ack_lost");
    await r.onDone("end_turn");
    const contents = w.fake.pushes.map((p) => p.content);
    // At least once, never a hole: WeCom gives a push no id to deduplicate on.
    expect(contents[0]).toBe(contents[1]);
    const once = contents.filter((c, i) => i === 0 || c !== contents[i - 1]);
    expect(new Set(once).size).toBe(once.length);
    const head = w.fake.bubbles()[0]?.content ?? "";
    expect([head, ...once].map(bare).join("")).toBe(bare(long));
  });

  it("the socket closes with the sealing frame in flight: the bubble is sealed after the reconnect, nothing pushed", async () => {
    w = await wire({ ackTimeoutMs: 2_000 });
    const r = w.renderer(w.message());
    await r.onTextChunk("a short answer");
    w.fake.mishapNext(
      (cmd, body) => cmd === "aibot_respond_msg" && JSON.stringify(body).includes('"finish":true'),
      "drop",
    );
    await r.onDone("end_turn");
    const [bubble, ...others] = w.fake.bubbles();
    expect(others).toEqual([]);
    expect(bubble?.finished).toBe(true);
    expect(strip(bubble?.content ?? "")).toBe("a short answer");
    expect(bubble?.content).toMatch(/Finished/);
    expect(w.fake.pushes).toEqual([]);
    expect(r.deliveryFailed).toBe(false);
  });
});

describe("the push budget spent", () => {
  it("the rest waits for budget rather than be refused, and the head says in the chat that it is coming", async () => {
    const clock = new ManualClock();
    w = await wire({ clock, ackTimeoutMs: HOUR });
    const a = w.message();
    // Earlier pushes this minute (command replies, say) spent the conversation's 30.
    for (let i = 0; i < 30; i++)
      expect(await w.client.push(a.userid, `reply ${i}`)).toEqual({ kind: "accepted" });
    const r = w.renderer(a);
    const long = Array.from({ length: 4 }, (_, i) => `Section ${i}\n\n${"word ".repeat(1200)}`).join("\n\n");
    await r.onTextChunk(long);
    const done = r.onDone("end_turn");
    await vi.waitFor(() => expect(w?.fake.bubbles()[0]?.finished).toBe(true));
    const head = w.fake.bubbles()[0]?.content ?? "";
    expect(head).toMatch(/⏳ The rest of this answer \(\d+ more messages?\) arrives over about 2 min/);
    await settle();
    expect(w.fake.pushes).toHaveLength(30);
    await clock.advance(61_000);
    await done;
    const tail = w.fake.pushes.slice(30);
    expect(tail.length).toBeGreaterThan(0);
    expect(tail.every((p) => p.accepted)).toBe(true);
    expect(w.fake.pushes.filter((p) => p.errcode === ERR_RATE)).toEqual([]);
    expect(r.deliveryFailed).toBe(false);
  });

  it("a wait within the budget's minute says nothing extra", async () => {
    w = await wire();
    const r = w.renderer(w.message());
    await r.onTextChunk(Array.from({ length: 3 }, (_, i) => `S${i}\n\n${"word ".repeat(1200)}`).join("\n\n"));
    await r.onDone("end_turn");
    expect(w.fake.visible().some((v) => v.includes("⏳"))).toBe(false);
  });
});

describe("rolling bubbles", () => {
  it("a turn past 10 minutes rolls to a new bubble: nothing missing, at most one frame repeated", async () => {
    const clock = new ManualClock();
    w = await wire({ clock, ackTimeoutMs: HOUR });
    const r = w.renderer(w.message(), { throttleMs: 1000 });
    await r.onTurnStart();
    const words: string[] = [];
    for (let minute = 0; minute < 14; minute++) {
      const word = `w${minute}`;
      words.push(word);
      await r.onTextChunk(`${word} `);
      await clock.advance(60_000);
      await vi.waitFor(() => expect(w?.fake.frames.at(-1)?.errcode).not.toBeNull());
    }
    await r.onDone("end_turn");
    const bubbles = w.fake.bubbles();
    expect(bubbles.length).toBe(2);
    expect(bubbles.every((b) => b.finished)).toBe(true);
    expect(w.fake.frames.filter((f) => f.errcode === ERR_STREAM_DEAD)).toEqual([]);
    const shown = bubbles.map((b) => strip(b.content).split(/\s+/).filter(Boolean));
    const all = shown.flat();
    for (const word of words) expect(all).toContain(word);
    // At most one frame's worth repeated: here each frame added one word.
    expect(all.length - words.length).toBeLessThanOrEqual(1);
  });

  it("a bubble refused for good mid-stream continues after what it shows: never a hole", async () => {
    const clock = new ManualClock();
    w = await wire({ clock, ackTimeoutMs: HOUR });
    const r = w.renderer(w.message(), { throttleMs: 1000 });
    const words = Array.from({ length: 6 }, (_, i) => `step${i}`);
    for (const [i, word] of words.entries()) {
      if (i === 3)
        w.fake.refuseNext(
          (cmd, body) => cmd === "aibot_respond_msg" && JSON.stringify(body).includes("step3"),
          ERR_STREAM_DEAD,
        );
      await r.onTextChunk(`${word} `);
      await clock.advance(1000);
      await vi.waitFor(() => expect(w?.fake.frames.at(-1)?.errcode).not.toBeNull());
    }
    await r.onDone("end_turn");
    const bubbles = w.fake.bubbles();
    expect(bubbles).toHaveLength(2);
    const all = bubbles.flatMap((b) => strip(b.content).split(/\s+/).filter(Boolean));
    for (const word of words) expect(all).toContain(word);
    expect(all.length - words.length).toBeLessThanOrEqual(1);
    // The refused frame is not shown: the continuation starts right after the last accepted one.
    expect(strip(bubbles[0]?.content ?? "")).toBe("step0 step1 step2");
    expect(strip(bubbles[1]?.content ?? "").startsWith("step3")).toBe(true);
  });

  it("an aged roll resumes one frame early when the latest verdict was a refusal", async () => {
    const clock = new ManualClock();
    w = await wire({ clock, ackTimeoutMs: HOUR });
    const r = w.renderer(w.message(), { throttleMs: 1000 });
    await r.onTextChunk("alpha ");
    await clock.advance(1000);
    await vi.waitFor(() => expect(w?.fake.frames.at(-1)?.errcode).toBe(0));
    w.fake.refuseNext(
      (cmd, body) => cmd === "aibot_respond_msg" && JSON.stringify(body).includes("beta"),
      40_099,
    );
    await r.onTextChunk("beta ");
    await clock.advance(1000);
    await vi.waitFor(() => expect(w?.fake.frames.at(-1)?.errcode).toBe(40_099));
    await clock.advance(10 * 60_000);
    await r.onTextChunk("gamma");
    await r.onDone("end_turn");
    const bubbles = w.fake.bubbles();
    expect(bubbles.length).toBeGreaterThanOrEqual(2);
    const last = strip(bubbles.at(-1)?.content ?? "");
    expect(last).toMatch(/^beta gamma/);
  });

  it("progress is counted on the raw slice: a length-changing transform loses and repeats nothing", async () => {
    const clock = new ManualClock();
    w = await wire({ clock, ackTimeoutMs: HOUR });
    // Doubles every slice's length: an offset taken from its output would index a different text.
    const present = (s: string) => s.replace(/(\S+)/g, "[$1]");
    const r = w.renderer(w.message(), { throttleMs: 1000, present });
    const words = Array.from({ length: 12 }, (_, i) => `t${i}`);
    for (const word of words) {
      await r.onTextChunk(`${word} `);
      await clock.advance(60_000);
      await vi.waitFor(() => expect(w?.fake.frames.at(-1)?.errcode).not.toBeNull());
    }
    await r.onDone("end_turn");
    const all = w.fake.bubbles().flatMap((b) => strip(b.content).split(/\s+/).filter(Boolean));
    expect(w.fake.bubbles().length).toBeGreaterThanOrEqual(2);
    expect(all.filter((x) => x !== "[_Finished")).toEqual(words.map((x) => `[${x}]`));
  });
});

describe("options and reasoning", () => {
  it("[OPTIONS] becomes a numbered list; a partial trailer never flashes on a live frame", async () => {
    w = await wire();
    const r = w.renderer(w.message());
    await r.onTurnStart();
    await r.onTextChunk("Pick one:\n[OPTIONS: Yes | No");
    await vi.waitFor(() => expect(w?.fake.bubbles()[0]?.content).toContain("Pick one"));
    expect(w.fake.bubbles()[0]?.content).not.toContain("[OPTIONS");
    await r.onTextChunk(" | Maybe]");
    await r.onDone("end_turn");
    const sealed = w.fake.bubbles()[0]?.content ?? "";
    expect(sealed).toContain("1. Yes\n2. No\n3. Maybe");
    expect(wireTexts(w.fake).join("\n")).not.toContain("[OPTIONS");
  });

  it("reasoning is redacted on the JOINED text: a key split across two chunks never reaches the wire", async () => {
    w = await wire();
    const r = w.renderer(w.message());
    await r.onTurnStart();
    await r.onThinking("the key is AKIAQ7ZR3M");
    await r.onThinking("5TXW2KP9VB, I should not show it");
    await r.onTextChunk("Done.");
    await r.onDone("end_turn");
    const all = wireTexts(w.fake).join("\n");
    expect(all).toContain("<think>");
    expect(all).not.toContain("AKIAQ7ZR3M5TXW2KP9VB");
    expect(all).not.toContain("5TXW2KP9VB");
  });
});

describe("approvals and notices", () => {
  it("the prompt is a push between the answer above and its continuation below; the decision is pushed", async () => {
    w = await wire();
    const r = w.renderer(w.message());
    await r.onTurnStart();
    await r.onTextChunk("Let me check.");
    await r.onPromptChoice(
      [
        { id: "a", label: "Allow", verdict: "approve" },
        { id: "b", label: "Always", verdict: "approve_always" },
        { id: "c", label: "Reject", verdict: "deny" },
      ],
      "r1",
      { toolTitle: "cat build.log", toolPurpose: "", nonce: "n" },
    );
    await r.markApproval("r1", approvalOutcomeLabel("approve"));
    await r.onTextChunk("The log is clean.");
    await r.onDone("end_turn");
    const shown = w.fake.visible();
    expect(shown[0]).toContain("Let me check.");
    expect(shown[1]).toMatch(/Permission needed:\*\* cat build\.log[\s\S]*Reply 1 to approve or 2 to deny\./);
    // No widget: "always" is not offered by a single typed character.
    expect(shown[1]).not.toContain("3 to always allow");
    expect(shown[2]).toBe("🔐 cat build.log: ✅ Approved (this once)");
    expect(shown[3]).toContain("The log is clean.");
  });

  it("a fresh session's notice sits above the answer (a bubble that showed nothing becomes it)", async () => {
    w = await wire();
    const r = w.renderer(w.message());
    await r.onTurnStart();
    await vi.waitFor(() => expect(w?.fake.bubbles()).toHaveLength(1));
    await r.onAgentStatus({ type: "fresh_session", cause: "agent_exited", reason: "no restore" });
    await r.onTextChunk("Hello again.");
    await r.onDone("end_turn");
    const shown = w.fake.visible();
    expect(shown[0]).toContain("earlier context of this conversation is gone");
    expect(shown[1]).toContain("Hello again.");
  });
});
