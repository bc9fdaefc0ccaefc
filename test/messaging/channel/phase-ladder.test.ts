import { describe, expect, it } from "vitest";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import {
  formatElapsed,
  formatTurnStatus,
  type LadderOptions,
  mergePhaseEmojis,
  PhaseReactionLadder,
  phaseForToolTitle,
  type ReactionSink,
  toolToPhase,
} from "../../../src/messaging/channel/phase-ladder.js";
import { ManualClock, settle } from "../../helpers/manual-clock.js";

/** Deterministic timers starting at 0. */
class FakeTimers extends ManualClock {
  constructor() {
    super(0);
  }
}

class RecordingSink implements ReactionSink {
  readonly calls: string[] = [];
  set(emoji: string): void {
    this.calls.push(`+${emoji}`);
  }
  clear(emoji: string): void {
    this.calls.push(`-${emoji}`);
  }
}

const EMOJIS = {
  queued: "👀",
  thinking: "🤔",
  coding: "🧑‍💻",
  browsing: "🌐",
  tool: "🔧",
  done: "✅",
  error: "😱",
};
const STALL = { soft: "🥱", hard: "😨" };

function ladder(overrides: Partial<LadderOptions> = {}) {
  const timers = new FakeTimers();
  const sink = new RecordingSink();
  const logger = new MemoryLogger();
  const l = new PhaseReactionLadder({
    sink,
    emojis: EMOJIS,
    stall: STALL,
    clock: timers,
    logger,
    ...overrides,
  });
  return { l, timers, sink, logger };
}

describe("PhaseReactionLadder transitions", () => {
  it("lands queued immediately, with no timer advance", async () => {
    const { l, sink } = ladder();
    l.setPhase("queued");
    await settle();
    expect(sink.calls).toEqual(["+👀"]);
  });

  it("swaps: exactly one phase reaction at a time", async () => {
    const { l, sink, timers } = ladder();
    l.setPhase("queued");
    l.setPhase("thinking");
    await timers.advance(700);
    l.setPhase("coding");
    await timers.advance(700);
    expect(sink.calls).toEqual(["+👀", "-👀", "+🤔", "-🤔", "+🧑‍💻"]);
  });

  it("coalesces a burst into one swap, re-arming the debounce on every transition", async () => {
    const { l, sink, timers } = ladder();
    l.setPhase("queued");
    await settle();
    l.setPhase("thinking");
    await timers.advance(500);
    l.setPhase("tool");
    await timers.advance(500);
    l.setPhase("browsing");
    await timers.advance(699);
    expect(sink.calls).toEqual(["+👀"]);
    await timers.advance(1);
    expect(sink.calls).toEqual(["+👀", "-👀", "+🌐"]);
  });

  it("lands a terminal phase at once, drops the pending debounced one, and ignores everything after", async () => {
    const { l, sink, timers } = ladder();
    l.setPhase("queued");
    l.setPhase("thinking");
    l.setPhase("done");
    l.finalize(true);
    l.setPhase("coding");
    await timers.advance(60_000);
    expect(sink.calls).toEqual(["+👀", "-👀", "+✅"]);
    expect(timers.pending).toBe(0);
  });

  it("uses the error emoji for an error", async () => {
    const { l, sink } = ladder();
    l.setPhase("queued");
    l.setPhase("error");
    await settle();
    expect(sink.calls).toEqual(["+👀", "-👀", "+😱"]);
  });

  it("a null entry suppresses the phase but still clears the previous emoji; a missing one shows its name", async () => {
    const { l, sink, timers } = ladder({ emojis: { ...EMOJIS, thinking: null } });
    l.setPhase("queued");
    l.setPhase("thinking");
    await timers.advance(700);
    expect(sink.calls).toEqual(["+👀", "-👀"]);
    l.setPhase("planning");
    await timers.advance(700);
    expect(sink.calls).toEqual(["+👀", "-👀", "+planning"]);
  });

  it("snapshots the emoji table, so a config change mid-turn cannot strand an emoji", async () => {
    const table: Record<string, string | null> = { ...EMOJIS };
    const { l, sink } = ladder({ emojis: table });
    l.setPhase("queued");
    table.queued = "🆕";
    l.setPhase("done");
    await settle();
    expect(sink.calls).toEqual(["+👀", "-👀", "+✅"]);
  });
});

describe("stall watchdog", () => {
  it("adds the soft mark at 15 s and REPLACES it with the hard mark at 45 s", async () => {
    const { l, sink, timers } = ladder();
    l.setPhase("queued");
    await timers.advance(14_999);
    expect(sink.calls).toEqual(["+👀"]);
    await timers.advance(1);
    expect(sink.calls).toEqual(["+👀", "+🥱"]);
    await timers.advance(29_999);
    expect(sink.calls).toEqual(["+👀", "+🥱"]);
    await timers.advance(1);
    expect(sink.calls).toEqual(["+👀", "+🥱", "-🥱", "+😨"]);
  });

  it("progress clears the mark and re-arms both timers from now", async () => {
    const { l, sink, timers } = ladder();
    l.setPhase("queued");
    await timers.advance(20_000);
    l.onProgress();
    await settle();
    expect(sink.calls).toEqual(["+👀", "+🥱", "-🥱"]);
    await timers.advance(14_999);
    expect(sink.calls).toHaveLength(3);
    await timers.advance(1);
    expect(sink.calls.at(-1)).toBe("+🥱");
  });

  it("a landed debounced phase counts as activity", async () => {
    const { l, sink, timers } = ladder();
    l.setPhase("queued");
    await timers.advance(10_000);
    l.setPhase("coding");
    await timers.advance(700); // lands at 10.7 s: the 15 s mark armed by "queued" is re-armed to 25.7 s
    await timers.advance(14_999);
    expect(sink.calls).toEqual(["+👀", "-👀", "+🧑‍💻"]);
    await timers.advance(1);
    expect(sink.calls.at(-1)).toBe("+🥱");
  });

  it("clears the stall mark BEFORE landing the terminal emoji", async () => {
    const { l, sink, timers } = ladder();
    l.setPhase("queued");
    await timers.advance(45_000);
    l.finalize();
    await settle();
    expect(sink.calls).toEqual(["+👀", "+🥱", "-🥱", "+😨", "-😨", "-👀", "+✅"]);
  });

  it("pause() around an approval: no mark while waiting, an existing one is cleared, resume re-arms", async () => {
    const { l, sink, timers } = ladder();
    l.setPhase("queued");
    await timers.advance(16_000);
    l.pause();
    await timers.advance(120_000);
    l.onProgress(); // activity while paused does not re-arm the watchdog
    await timers.advance(120_000);
    expect(sink.calls).toEqual(["+👀", "+🥱", "-🥱"]);
    l.resume();
    await timers.advance(14_999);
    expect(sink.calls).toHaveLength(3);
    await timers.advance(1);
    expect(sink.calls.at(-1)).toBe("+🥱");
  });

  it("schedules no watchdog at all for a channel without stall marks", async () => {
    const { l, sink, timers } = ladder({ stall: {} });
    l.setPhase("queued");
    await settle();
    expect(timers.pending).toBe(0);
    await timers.advance(60_000);
    expect(sink.calls).toEqual(["+👀"]);
  });

  it("on a replace-on-set sink (no clear), puts the phase emoji back when the mark goes", async () => {
    const calls: string[] = [];
    const sink: ReactionSink = { set: (emoji) => void calls.push(`=${emoji}`) };
    const { l, timers } = ladder({ sink });
    l.setPhase("queued");
    await timers.advance(15_000);
    l.onProgress();
    await settle();
    expect(calls).toEqual(["=👀", "=🥱", "=👀"]);
  });
});

describe("close()", () => {
  it("cancels every timer first: nothing fires after close", async () => {
    const { l, sink, timers } = ladder();
    l.setPhase("queued");
    l.setPhase("thinking");
    await settle();
    await l.close();
    expect(timers.pending).toBe(0);
    await timers.advance(60_000);
    l.setPhase("coding");
    l.finalize();
    await settle();
    expect(sink.calls).toEqual(["+👀"]);
  });

  it("drains in-flight sink calls that land inside the window (the turn's last emoji)", async () => {
    const calls: string[] = [];
    let release: () => void = () => {};
    const slow: ReactionSink = {
      set: (emoji) => {
        calls.push(`+${emoji}`);
        if (emoji === "👀") return new Promise<void>((resolve) => (release = resolve));
      },
      clear: (emoji) => void calls.push(`-${emoji}`),
    };
    const { l, timers } = ladder({ sink: slow });
    l.setPhase("queued");
    l.finalize();
    let closed = false;
    const closing = l.close().then(() => (closed = true));
    await timers.advance(1_000);
    expect(closed).toBe(false);
    expect(calls).toEqual(["+👀"]);
    release();
    await closing;
    expect(calls).toEqual(["+👀", "-👀", "+✅"]);
    expect(timers.pending).toBe(0); // the drain window's own timer is cleared too
  });

  it("gives a wedged sink one bounded window, then abandons the rest and aborts its signal", async () => {
    const calls: string[] = [];
    let signal: AbortSignal | undefined;
    const wedged: ReactionSink = {
      set: (emoji, s) => {
        calls.push(`+${emoji}`);
        signal = s;
        return new Promise<void>(() => {});
      },
      clear: (emoji) => void calls.push(`-${emoji}`),
    };
    const { l, timers, logger } = ladder({ sink: wedged });
    l.setPhase("queued");
    l.finalize();
    let closed = false;
    void l.close().then(() => (closed = true));
    await timers.advance(4_999);
    expect(closed).toBe(false);
    await timers.advance(1);
    expect(closed).toBe(true);
    expect(signal?.aborted).toBe(true);
    expect(calls).toEqual(["+👀"]); // the queued terminal swap never started
    expect(logger.entries.map((e) => [e.level, e.message])).toEqual([
      ["debug", "status reactions: close abandoned sink calls still in flight"],
    ]);
  });

  it("is idempotent and resolves at once with nothing in flight", async () => {
    const { l, timers } = ladder();
    const first = l.close();
    expect(l.close()).toBe(first);
    await first;
    expect(timers.pending).toBe(0);
  });
});

describe("sink failures", () => {
  it("are logged and dropped, never thrown into the turn, and the ladder keeps going", async () => {
    const calls: string[] = [];
    const flaky: ReactionSink = {
      set: (emoji) => {
        calls.push(`+${emoji}`);
        if (emoji === "👀") throw new Error("message deleted");
        if (emoji === "🥱") return Promise.reject(new Error("rate limited"));
      },
      clear: (emoji) => {
        calls.push(`-${emoji}`);
        return Promise.reject(new Error("missing scope"));
      },
    };
    const { l, timers, logger } = ladder({ sink: flaky });
    expect(() => l.setPhase("queued")).not.toThrow();
    await timers.advance(15_000);
    l.finalize();
    await expect(l.close()).resolves.toBeUndefined();
    expect(calls).toEqual(["+👀", "+🥱", "-🥱", "-👀", "+✅"]);
    expect(logger.entries.map((e) => [e.level, e.message, e.fields.emoji])).toEqual([
      ["debug", "status reaction set failed", "👀"],
      ["debug", "status reaction set failed", "🥱"],
      ["debug", "status reaction clear failed", "🥱"],
      ["debug", "status reaction clear failed", "👀"],
    ]);
    expect(logger.entries.every((e) => e.fields.error instanceof Error)).toBe(true);
  });
});

describe("classification", () => {
  it("a declared ACP kind wins over the name", () => {
    expect(toolToPhase("execute", "my_custom_thing")).toBe("coding");
    expect(toolToPhase("edit", "WebFetch")).toBe("coding");
    expect(toolToPhase("fetch", "Bash")).toBe("browsing");
    expect(toolToPhase("think", "x")).toBe("thinking");
    expect(toolToPhase("WebSearch", "x")).toBe("browsing");
  });

  it("falls back to the name, reducing an MCP-qualified name to its base", () => {
    expect(toolToPhase(undefined, "Bash")).toBe("coding");
    expect(toolToPhase("other", "mcp__example-mcp__Bash")).toBe("coding");
    expect(toolToPhase("", "mcp__srv__WebFetch")).toBe("browsing");
    expect(toolToPhase("switch_mode", "deploy")).toBe("tool");
    expect(toolToPhase(undefined, "bash")).toBe("tool"); // names are case-sensitive, as the agent sends them
  });

  it("classifies a display title; a kiro-cli 'Running: <cmd>' title is a command", () => {
    // Deliberate difference: the reference strips the prefix and classifies "<cmd>" as a NAME, which
    // makes "Running: ls" a generic tool, the very outcome its stated reason for the rule warns about.
    expect(phaseForToolTitle("Running: ls -la")).toBe("coding");
    expect(phaseForToolTitle("WebSearch")).toBe("browsing");
    expect(phaseForToolTitle("Searching the web", "fetch")).toBe("browsing");
    expect(phaseForToolTitle("Deploying")).toBe("tool");
  });
});

describe("mergePhaseEmojis", () => {
  it("applies known overrides, honours null, and returns unknown keys instead of applying them", () => {
    const { emojis, unknownKeys } = mergePhaseEmojis(EMOJIS, { done: "🦞", thinking: null, thinkng: "💭" });
    expect(emojis).toEqual({ ...EMOJIS, done: "🦞", thinking: null });
    expect(unknownKeys).toEqual(["thinkng"]);
    expect(EMOJIS.done).toBe("✅"); // the channel's table is not mutated
  });

  it("without overrides returns a copy of the defaults", () => {
    const { emojis, unknownKeys } = mergePhaseEmojis(EMOJIS);
    expect(emojis).toEqual(EMOJIS);
    expect(emojis).not.toBe(EMOJIS);
    expect(unknownKeys).toEqual([]);
  });
});

describe("formatTurnStatus", () => {
  it("formats elapsed time as seconds, then minutes and seconds", () => {
    expect(formatElapsed(0)).toBe("0s");
    expect(formatElapsed(59_999)).toBe("59s");
    expect(formatElapsed(187_000)).toBe("3m 7s");
    expect(formatElapsed(-5)).toBe("0s");
  });

  it("renders NO chip when usage is unknown: absent is not 0%", () => {
    expect(formatTurnStatus({ elapsedMs: 12_000 })).toBe("Finished in 12s");
    expect(formatTurnStatus({ elapsedMs: 12_000, contextUsagePct: null })).toBe("Finished in 12s");
    expect(formatTurnStatus({ elapsedMs: 12_000, contextUsagePct: Number.NaN })).toBe("Finished in 12s");
    expect(formatTurnStatus({ elapsedMs: 12_000, contextUsagePct: 0 })).toBe("Finished in 12s · 🟢 ctx 0%");
  });

  it("bands the chip: green below 30, yellow from 30, orange from 50, red from 70", () => {
    const chip = (pct: number) => formatTurnStatus({ elapsedMs: 187_000, contextUsagePct: pct });
    expect(chip(29.9)).toBe("Finished in 3m 7s · 🟢 ctx 30%");
    expect(chip(30)).toBe("Finished in 3m 7s · 🟡 ctx 30%");
    expect(chip(49.99)).toBe("Finished in 3m 7s · 🟡 ctx 50%");
    expect(chip(50)).toBe("Finished in 3m 7s · 🟠 ctx 50%");
    expect(chip(70)).toBe("Finished in 3m 7s · 🔴 ctx 70%");
    expect(chip(104)).toBe("Finished in 3m 7s · 🔴 ctx 104%");
  });

  it("rounds the percentage half to even, as the reference does", () => {
    expect(formatTurnStatus({ elapsedMs: 1_000, contextUsagePct: 42.5 })).toBe("Finished in 1s · 🟡 ctx 42%");
    expect(formatTurnStatus({ elapsedMs: 1_000, contextUsagePct: 43.5 })).toBe("Finished in 1s · 🟡 ctx 44%");
  });
});
