/**
 * The kit's LiveRenderer on a recording surface: what the channels' own suites cannot pin alone
 * (the reasoning preview, the ladder, the one context read), and the pure parts it is built from.
 */
import { describe, expect, it } from "vitest";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import { LiveDecor } from "../../../src/messaging/channel/live-decor.js";
import { LiveRenderer } from "../../../src/messaging/channel/live-renderer.js";
import { liveFrame, sealPlan } from "../../../src/messaging/channel/live-seal.js";
import { ReasoningPreview } from "../../../src/messaging/channel/live-status.js";
import type { LiveMessage, LiveSurface } from "../../../src/messaging/channel/live-surface.js";
import type { ReactionSink } from "../../../src/messaging/channel/phase-ladder.js";
import { ManualClock, settle } from "../../helpers/manual-clock.js";

const TOKEN = `ghp_${"a1B2c3D4e5".repeat(3)}x9Y8z7`;

type Call = { op: "post" | "edit"; id: string; message: LiveMessage<string[]> };

function recordingSurface(extra: Partial<LiveSurface<string[]>> = {}) {
  const calls: Call[] = [];
  let next = 0;
  const surface: LiveSurface<string[]> = {
    capabilities: {
      maxMessageChars: 1000,
      tableMode: "off",
      nativeTables: false,
      reactions: true,
    } as LiveSurface<string[]>["capabilities"],
    sourceCap: 900,
    commands: { new: "/new", stop: "/stop" },
    plain: (t) => t,
    quiet: (t) => `_${t}_`,
    decided: (head, outcome) => `${head}\n${outcome}`,
    promptHead: (title) => `Permission: ${title}`,
    promptBody: (head, hint) => `${head}\n${hint}`,
    fit: (source, footer) => (source ? [footer === undefined ? source : source] : []),
    join: (body, footer) => (body && footer ? `${body}\n${footer}` : body || footer),
    fits: (body) => body.length <= 1000,
    post: async (message) => {
      next += 1;
      calls.push({ op: "post", id: String(next), message });
      return String(next);
    },
    edit: async (id, message) => {
      calls.push({ op: "edit", id, message });
    },
    refused: () => false,
    options: (choices) => [...choices],
    approval: (_r, _n, options) => ({ widgets: options.map((o) => o.label), shown: options }),
    noWidgets: [],
    ...extra,
  };
  return { surface, calls };
}

function renderer(surface: LiveSurface<string[]>, clock: ManualClock, more: object = {}) {
  return new LiveRenderer<string[]>({
    channel: "test",
    surface,
    timers: clock,
    now: () => clock.now(),
    logger: new MemoryLogger(),
    throttleMs: 0,
    ...more,
  });
}

describe("LiveRenderer: the reasoning preview", () => {
  it("is posted once, quietly, ahead of the first message, redacted on the joined reasoning", async () => {
    const clock = new ManualClock();
    const { surface, calls } = recordingSurface({ thinking: (p) => `💭 ${p}` });
    const r = renderer(surface, clock, { showThinking: true });
    await r.onTurnStart();
    // The driver redacts each chunk alone: split in two, neither half is a key.
    await r.onThinking(`checking ${TOKEN.slice(0, 14)}`);
    await r.onThinking(`${TOKEN.slice(14)} now`);
    await r.onTextChunk("The answer.");
    await clock.advance(10);
    await r.onThinking("more reasoning after the answer started");
    await r.onDone("end_turn");
    await r.close();
    const posts = calls.filter((c) => c.op === "post");
    expect(posts[0]?.message.body.startsWith("💭 checking ")).toBe(true);
    expect(posts[0]?.message.quiet).toBe(true);
    expect(calls.map((c) => c.message.body).join("\n")).not.toContain(TOKEN.slice(4, 20));
    expect(posts.filter((c) => c.message.body.startsWith("💭")).length).toBe(1);
    expect(posts[1]?.message.body).toContain("The answer.");
  });

  it("is not shown when the channel turns it off, nor when the surface has no shape for it", async () => {
    for (const [extra, more] of [
      [{ thinking: (p: string) => `💭 ${p}` }, {}],
      [{}, { showThinking: true }],
    ] as const) {
      const clock = new ManualClock();
      const { surface, calls } = recordingSurface(extra);
      const r = renderer(surface, clock, more);
      await r.onTurnStart();
      await r.onThinking("private reasoning");
      await r.onTextChunk("Answer.");
      await r.onDone("end_turn");
      await r.close();
      expect(calls.some((c) => c.message.body.includes("private reasoning"))).toBe(false);
    }
  });
});

describe("LiveRenderer: the end", () => {
  it("reads the context figure once, at the end, and shows it in the status line", async () => {
    const clock = new ManualClock();
    const { surface, calls } = recordingSurface();
    let reads = 0;
    const r = renderer(surface, clock, {
      contextUsage: async () => {
        reads += 1;
        return 91;
      },
    });
    await r.onTurnStart();
    await r.onTextChunk("Done.");
    await r.onCompaction(40, "");
    await r.onDone("end_turn");
    await r.close();
    expect(reads).toBe(1);
    expect(calls.at(-1)?.message.body).toMatch(/91\s?%/);
  });

  it("a context source that fails shows no figure (not the compaction's stale one)", async () => {
    const clock = new ManualClock();
    const { surface, calls } = recordingSurface();
    const r = renderer(surface, clock, {
      contextUsage: async () => {
        throw new Error("session gone");
      },
    });
    await r.onTurnStart();
    await r.onTextChunk("Done.");
    await r.onCompaction(40, "");
    await r.onDone("end_turn");
    await r.close();
    expect(calls.at(-1)?.message.body).not.toMatch(/40\s?%/);
  });
});

class RecordingSink implements ReactionSink {
  readonly calls: string[] = [];
  set(emoji: string): void {
    this.calls.push(`+${emoji}`);
  }
  clear(emoji: string): void {
    this.calls.push(`-${emoji}`);
  }
}

const EMOJIS = { queued: "👀", thinking: "🤔", tool: "🔧", coding: "🧑‍💻", done: "✅", error: "😱" };

describe("LiveRenderer: the reaction ladder on the user's message", () => {
  it("moves with the turn and lands the terminal mark", async () => {
    const clock = new ManualClock();
    const sink = new RecordingSink();
    const { surface } = recordingSurface({ reactions: { sink, emojis: EMOJIS } });
    const r = renderer(surface, clock);
    await r.onTurnStart();
    await settle();
    expect(sink.calls).toEqual(["+👀"]);
    await r.onTextChunk("Working on it.");
    await clock.advance(1000);
    await r.onDone("end_turn");
    await r.close();
    expect(sink.calls).toEqual(["+👀", "-👀", "+🤔", "-🤔", "+✅"]);
  });

  it("a turn closed before its end is marked failed; nothing arms after close", async () => {
    const clock = new ManualClock();
    const sink = new RecordingSink();
    const { surface } = recordingSurface({ reactions: { sink, emojis: EMOJIS } });
    const r = renderer(surface, clock);
    await r.onTurnStart();
    await r.close(new Error("agent died"));
    expect(sink.calls.at(-1)).toBe("+😱");
    const before = sink.calls.length;
    await r.onToolCall("t1", "Run ls", "execute");
    await clock.advance(60_000);
    expect(sink.calls.length).toBe(before);
    expect(clock.pending).toBe(0);
  });

  it("a failure before anything armed it still marks the message (LiveDecor)", async () => {
    const clock = new ManualClock();
    const sink = new RecordingSink();
    const decor = new LiveDecor({ sink, emojis: EMOJIS }, clock, new MemoryLogger());
    decor.finish(true);
    await decor.close();
    expect(sink.calls).toEqual(["+😱"]);
    // Without a sink there is nothing to decorate and nothing is scheduled.
    const none = new LiveDecor(undefined, clock, new MemoryLogger());
    none.started();
    none.finish(true);
    await none.close();
    expect(clock.pending).toBe(0);
  });
});

describe("the pure parts", () => {
  it("ReasoningPreview: off gathers nothing; on, one clipped preview", () => {
    const off = new ReasoningPreview(false);
    off.add("thinking");
    expect(off.take()).toBeNull();
    const on = new ReasoningPreview(true);
    on.add("x".repeat(1000));
    const preview = on.take();
    expect(preview === null ? 0 : Array.from(preview).length).toBeLessThanOrEqual(300);
    expect(on.take()).toBeNull();
  });

  it("sealPlan: a silent end says why; a quiet one says nothing; choices alone get a lead line", () => {
    const { surface } = recordingSurface();
    const base = { presented: "", choices: [], files: 0, answered: false, quiet: false, liveOpen: false };
    const failed = sealPlan(surface, { ...base, end: { stopReason: "error", error: "boom", elapsedMs: 5 } });
    expect(failed.kind).toBe("deliver");
    if (failed.kind === "deliver") expect(failed.pieces.join("")).toContain("⚠️ Boom");
    const quiet = sealPlan(surface, { ...base, quiet: true, end: { stopReason: "error", elapsedMs: 5 } });
    expect(quiet).toEqual({ kind: "status", footer: "" });
    const choices = sealPlan(surface, { ...base, choices: ["Yes", "No"] });
    expect(choices).toMatchObject({ kind: "deliver", pieces: ["Choose one:"], widgets: ["Yes", "No"] });
    // Mid-turn with nothing to seal: nothing at all (the live message is kept).
    expect(sealPlan(surface, { ...base, answered: true })).toEqual({ kind: "status", footer: "" });
    // The end after an answer, with the live message open: the status line lands on it.
    const end = sealPlan(surface, {
      ...base,
      answered: true,
      liveOpen: true,
      end: { stopReason: "end_turn", elapsedMs: 5 },
    });
    expect(end.kind === "deliver" && end.pieces).toEqual([""]);
  });

  it("liveFrame: a partial [OPTIONS trailer is hidden, the chip rides only real text", () => {
    const { surface } = recordingSurface();
    expect(liveFrame(surface, "Pick one\n[OPTI", "> you said\n", "writing").body).toBe(
      "> you said\nPick one",
    );
    expect(liveFrame(surface, "   ", "> chip\n", "thinking")).toEqual({ body: "", shown: "_thinking_" });
    expect(liveFrame(surface, "", "", "")).toEqual({ body: "", shown: "" });
  });
});

describe("LiveRenderer: a turn cut before its end", () => {
  it("is sealed as it stands: the answer so far stays, the live footer goes, the end says it failed", async () => {
    const clock = new ManualClock();
    const { surface, calls } = recordingSurface();
    const r = renderer(surface, clock);
    await r.onTurnStart();
    await r.onToolCall("t1", "Run tests", "execute");
    await r.onTextChunk("Half an answer");
    await clock.advance(10);
    expect(calls.at(-1)?.message.live).toBe(true);
    await r.close("turn_failed");
    const last = calls.at(-1);
    expect(last?.op).toBe("edit");
    expect(last?.message.live).toBeFalsy();
    expect(last?.message.body.startsWith("Half an answer")).toBe(true);
    expect(last?.message.body).toContain("⚠️");
    expect(last?.message.body).not.toContain("/stop");
    expect(clock.pending).toBe(0);
  });

  it("one that produced nothing says the agent did not answer", async () => {
    const clock = new ManualClock();
    const { surface, calls } = recordingSurface();
    const r = renderer(surface, clock);
    await r.onTurnStart();
    await r.close("turn_failed");
    expect(calls.map((c) => c.message.body).join("\n")).toContain("The agent did not answer");
  });
});
