/**
 * The live pacing's knobs for a platform that counts its edits (off by default): the turn's first
 * message opened at once and later ones at the throttle's pace, a gap that grows with each frame,
 * no stall marks, and no frame scheduled once the platform has none left. Also the surface's
 * `tableFits` and the tool title an approval's widgets are given.
 */
import { describe, expect, it } from "vitest";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import { LivePacing, type LivePacingOptions } from "../../../src/messaging/channel/live-pacing.js";
import { LiveRenderer } from "../../../src/messaging/channel/live-renderer.js";
import type { LiveSurface } from "../../../src/messaging/channel/live-surface.js";
import { ManualClock } from "../../helpers/manual-clock.js";

function pacing(clock: ManualClock, more: Partial<LivePacingOptions> = {}) {
  let frames = 0;
  const p = new LivePacing({
    timers: clock,
    now: () => clock.now(),
    logger: new MemoryLogger(),
    channel: "test",
    throttleMs: 100,
    frame: () => {
      frames += 1;
      p.framed();
    },
    ...more,
  });
  return { p, frames: () => frames };
}

describe("LivePacing for a platform that counts edits", () => {
  it('openAtOnce "turn": the first open runs a frame at once, later ones leave it to the throttle', () => {
    const clock = new ManualClock();
    const { p, frames } = pacing(clock, { openAtOnce: "turn" });
    expect(p.open()).toBe(true);
    expect(frames()).toBe(1);
    expect(p.open()).toBe(false);
    expect(frames()).toBe(1);
    // The default (true) opens every message at once.
    const other = pacing(clock, { openAtOnce: true });
    expect(other.p.open()).toBe(true);
    expect(other.p.open()).toBe(true);
    expect(other.frames()).toBe(2);
  });

  it("throttleGrowth: each gap is the last times the growth; without it the gap stays", async () => {
    for (const [growth, expected] of [
      [2, [100, 200, 400, 800]],
      [undefined, [100, 100, 100, 100]],
    ] as const) {
      const clock = new ManualClock();
      const { p, frames } = pacing(clock, { throttleGrowth: growth, stallMarks: false });
      p.framed();
      const gaps: number[] = [];
      for (let i = 0; i < 4; i++) {
        p.schedule();
        gaps.push(...clock.pendingDelays());
        await clock.advance(clock.pendingDelays()[0] ?? 0);
      }
      expect(gaps).toEqual(expected);
      expect(frames()).toBe(4);
    }
  });

  it("stallMarks false: no stall timer is armed and no mark shows after a long quiet", async () => {
    const clock = new ManualClock();
    const { p } = pacing(clock, { stallMarks: false, stallSoftMs: 1000, stallHardMs: 2000 });
    p.start();
    p.progress();
    expect(clock.pending).toBe(0);
    await clock.advance(10_000);
    expect(p.stallMark()).toBe("");
    // By default the marks count from the last progress.
    const marked = pacing(clock, { stallSoftMs: 1000, stallHardMs: 2000 });
    marked.p.start();
    expect(clock.pending).toBe(2);
    await clock.advance(2500);
    expect(marked.p.stallMark()).toBe("😨");
    marked.p.stop();
  });

  it("framesLeft false: nothing is scheduled (no timer waits for a frame that cannot go)", () => {
    const clock = new ManualClock();
    let left = true;
    const { p } = pacing(clock, { stallMarks: false, framesLeft: () => left });
    p.schedule();
    expect(clock.pending).toBe(1);
    p.cancelFrame();
    left = false;
    p.schedule();
    expect(clock.pending).toBe(0);
  });
});

describe("LiveSurface knobs", () => {
  const bodies: string[] = [];
  const titles: string[] = [];
  const surface: LiveSurface<null> = {
    capabilities: {
      maxMessageChars: 1000,
      tableMode: "auto",
      nativeTables: false,
    } as LiveSurface<null>["capabilities"],
    sourceCap: 900,
    commands: { new: "/new", stop: "/stop" },
    plain: (t) => t,
    quiet: (t) => `_${t}_`,
    decided: (head, outcome) => `${head}\n${outcome}`,
    promptHead: (title) => `Permission: ${title}`,
    promptBody: (head, hint) => `${head}\n${hint}`,
    fit: (source) => (source ? [source] : []),
    join: (body, footer) => (body && footer ? `${body}\n${footer}` : body || footer),
    fits: () => true,
    // A grid wider than 12 characters a line does not fit: shown as cards.
    tableFits: (grid) => grid.split("\n").every((line) => line.length <= 12),
    post: async ({ body }) => {
      bodies.push(body);
      return String(bodies.length);
    },
    edit: async () => {},
    refused: () => false,
    options: () => null,
    approval: (_r, _n, options, title) => {
      titles.push(title);
      return { widgets: undefined, shown: options };
    },
    noWidgets: null,
  };

  it("tableFits decides a sealed table's form; the approval's widgets get the tool's display-safe title", async () => {
    const clock = new ManualClock();
    const r = new LiveRenderer<null>({
      channel: "test",
      surface,
      timers: clock,
      now: () => clock.now(),
      logger: new MemoryLogger(),
      throttleMs: 0,
    });
    await r.onTurnStart();
    await r.onTextChunk("| name | total |\n|---|---|\n| alpha | 1234567 |\n\nEnd.");
    await r.onPromptChoice([{ id: "a", label: "Approve", verdict: "approve" }], "r1", {
      toolTitle: "rm\n-rf build",
      toolPurpose: "",
      nonce: "n",
    });
    await r.onDone("end_turn");
    await r.close();
    const answer = bodies.find((b) => b.includes("End."));
    expect(answer).toContain("**alpha**");
    expect(answer).not.toContain("| alpha |");
    expect(titles).toEqual(["rm -rf build"]);
  });
});
