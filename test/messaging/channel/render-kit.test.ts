/** The render kit: what every channel shows the same way. */
import { describe, expect, it } from "vitest";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import {
  approvalOutcomeLabel,
  contextUsageAtEnd,
  EditThrottle,
  noAnswerNotice,
  SerialQueue,
  STEER_CHIP_CHARS,
  steerChip,
  turnStatusLine,
  typedReplyHint,
} from "../../../src/messaging/channel/render-kit.js";
import { ManualClock } from "../../helpers/manual-clock.js";

const opt = (verdict: "approve" | "approve_always" | "deny") => ({ id: verdict, label: verdict, verdict });

describe("render kit", () => {
  it("the steer chip is one line, bounded in code points, and never splits a surrogate pair", () => {
    // The web chat used to cut with .slice(0, 200): an emoji across the boundary lost its low half.
    const words = `${"a".repeat(STEER_CHIP_CHARS - 2)}😀😀 tail`;
    const chip = steerChip(words);
    expect(chip.startsWith("> ↪️ ")).toBe(true);
    expect(chip.endsWith("\n\n")).toBe(true);
    const body = chip.slice("> ↪️ ".length, -2);
    expect(Array.from(body)).toHaveLength(STEER_CHIP_CHARS);
    expect(body).toBe(`${"a".repeat(STEER_CHIP_CHARS - 2)}😀…`);
    expect(/[\ud800-\udbff](?![\udc00-\udfff])/.test(body)).toBe(false);
    expect(steerChip("  two\nlines  ")).toBe("> ↪️ two lines\n\n");
    expect(steerChip("   ")).toBe("");
  });

  it("the context figure at turn end: the session's, else the last compaction's, none when the source fails", async () => {
    const logger = new MemoryLogger();
    expect(await contextUsageAtEnd(() => 42, 10, logger)).toBe(42);
    expect(await contextUsageAtEnd(async () => undefined, 10, logger)).toBe(10);
    expect(await contextUsageAtEnd(undefined, undefined, logger)).toBeUndefined();
    const failing = async () => Promise.reject(new Error("unbound"));
    expect(await contextUsageAtEnd(failing, 10, logger)).toBeUndefined();
    expect(logger.entries.map((e) => e.message)).toEqual(["context usage unavailable"]);
  });

  it("the status line says how the turn ended", () => {
    expect(turnStatusLine("end_turn", { elapsedMs: 3200 })).toBe("Finished in 3s");
    expect(turnStatusLine("cancelled", { elapsedMs: 61_000, contextUsagePct: 12 })).toBe(
      "🛑 Stopped · Finished in 1m 1s · 🟢 ctx 12%",
    );
    expect(turnStatusLine("error", { elapsedMs: 0 })).toBe("⚠️ Finished in 0s");
  });

  it("a one-time approval and 'always' read differently; timeouts and abandoned prompts say so", () => {
    const labels = (["approve", "approve_always", "deny", "timeout", "abandoned"] as const).map(
      approvalOutcomeLabel,
    );
    expect(new Set(labels).size).toBe(5);
    expect(approvalOutcomeLabel("approve")).toBe("✅ Approved (this once)");
    expect(approvalOutcomeLabel("approve_always")).toBe("✅ Always allowed");
  });

  it("the typed-reply hint names only the choices offered, and reads right beside buttons or without", () => {
    expect(typedReplyHint([opt("approve"), opt("deny")], true)).toBe("Or reply 1 to approve or 2 to deny.");
    expect(typedReplyHint([opt("approve"), opt("approve_always"), opt("deny")], false)).toBe(
      "Reply 1 to approve, 2 to deny, 3 to always allow.",
    );
  });

  it("a failed turn's notice points at the way out, spelled the channel's way", () => {
    expect(noAnswerNotice(true, "`!new`")).toBe(
      "⚠️ The agent did not answer. Try again, or `!new` to start fresh.",
    );
    expect(noAnswerNotice(false, "/new")).toBe("(no answer)");
  });

  it("the edit throttle keeps one pending frame, never closer than the gap", async () => {
    const clock = new ManualClock();
    const frames: number[] = [];
    const throttle = new EditThrottle(
      clock,
      () => clock.now(),
      1000,
      () => frames.push(clock.now()),
    );
    throttle.schedule();
    throttle.schedule();
    await clock.advance(0);
    expect(frames).toHaveLength(1);
    throttle.schedule();
    await clock.advance(500);
    expect(frames).toHaveLength(1);
    await clock.advance(500);
    expect(frames).toHaveLength(2);
    expect((frames[1] ?? 0) - (frames[0] ?? 0)).toBe(1000);
    throttle.schedule();
    throttle.cancel();
    await clock.advance(5000);
    expect(frames).toHaveLength(2);
  });

  it("the serial queue keeps order and keeps going after a failed step, reporting it", async () => {
    const failures: unknown[] = [];
    const q = new SerialQueue((e) => failures.push(e));
    const order: number[] = [];
    const slow = () => new Promise<void>((r) => setTimeout(r, 5));
    void q.run(async () => {
      await slow();
      order.push(1);
    });
    void q.run(async () => {
      throw new Error("boom");
    });
    await q.run(async () => {
      order.push(3);
    });
    expect(order).toEqual([1, 3]);
    expect(failures).toHaveLength(1);
  });
});
