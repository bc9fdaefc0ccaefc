/**
 * A bubble renewed on time while the agent is silent: nothing the agent does asks for a frame, yet
 * the bubble is sealed as it stands before WeCom's 10-minute lifetime and the turn goes on in a new
 * one (the surface's roll timer asks the kit for a frame, and the kit writes it though unchanged).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { ERR_STREAM_DEAD } from "../fakes/wecom/server.js";
import { ManualClock } from "../helpers/manual-clock.js";
import type { Wired } from "./helpers.js";
import { wire } from "./helpers.js";

let w: Wired | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const HOUR = 3_600_000;

describe("a silent agent", () => {
  it("the aged bubble is sealed as it stands and continued in a new one, on time", async () => {
    const clock = new ManualClock();
    w = await wire({ clock, ackTimeoutMs: HOUR });
    const r = w.renderer(w.message(), { throttleMs: 1000 });
    await r.onTurnStart();
    await r.onTextChunk("Starting the long build.");
    await r.onToolCall("t1", "make all");
    await clock.advance(1000);
    await vi.waitFor(() => expect(w?.fake.bubbles()[0]?.content).toContain("make all"));
    // Ten quiet minutes: the agent sends nothing at all.
    await clock.advance(10 * 60_000);
    await vi.waitFor(() => expect(w?.fake.bubbles()).toHaveLength(2));
    const [first, second] = w.fake.bubbles();
    // Sealed with its last accepted answer, without the status line it showed.
    expect(first).toMatchObject({ finished: true, content: "Starting the long build." });
    expect(second?.finished).toBe(false);
    expect(second?.content).toContain("make all");
    expect(w.fake.frames.filter((f) => f.errcode === ERR_STREAM_DEAD)).toEqual([]);
    await r.onTextChunk("Built.");
    await r.onDone("end_turn");
    // The continuation opens the new paragraph after the tool call (its break leads the bubble).
    expect(w.fake.bubbles()[1]?.content).toMatch(/^\n\nBuilt\.\n\n_Finished in \d+/);
  });
});
