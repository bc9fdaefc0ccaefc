/**
 * The renderer's edit budget against a platform that refuses edits: a refused status edit spends
 * the rest of the status budget (no further status edits), and a refused answer edit still lands
 * the answer as a fresh message.
 */
import { describe, expect, it } from "vitest";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { WebexRenderer } from "../../src/webex/renderer.js";
import type { WebexRest } from "../../src/webex/transport.js";
import { ManualClock } from "../helpers/manual-clock.js";

/** Webex as seen by the renderer: creates succeed, every edit is refused. */
function refusingEdits() {
  const created: string[] = [];
  let edits = 0;
  const rest = {
    createMessage: async (b: { markdown: string }) => {
      created.push(b.markdown);
      return { ok: true as const, data: { id: `m${created.length}`, roomId: "r", personId: "bot" } };
    },
    editMessage: async () => {
      edits += 1;
      return { ok: false as const, status: 400, message: "edit limit reached" };
    },
  } as unknown as WebexRest;
  return { rest, created, edits: () => edits };
}

describe("webex renderer edit budget", () => {
  it("a refused status edit spends the status budget; the answer still lands fresh", async () => {
    const clock = new ManualClock();
    const platform = refusingEdits();
    const r = new WebexRenderer({
      rest: platform.rest,
      roomId: "r",
      logger: new MemoryLogger(),
      clock,
      statusStartMs: 10,
    });
    await r.onTurnStart();
    for (let i = 0; i < 6; i++) {
      await r.onToolCall(`t${i}`, `tool ${i}`);
      await clock.advance(10_000);
    }
    // One status edit was tried and refused; none after it.
    expect(platform.edits()).toBe(1);
    await r.onTextChunk("the answer");
    await r.onDone("end_turn");
    // The answer's edit of the placeholder was refused too: it arrived as a new message.
    expect(platform.edits()).toBe(2);
    expect(platform.created.at(-1)).toMatch(/^the answer/);
    expect(platform.created).toHaveLength(2);
  });

  it("status frames at a doubling interval, at most 8, and 2 edits kept for the answer", async () => {
    const clock = new ManualClock();
    const edits: string[] = [];
    const rest = {
      createMessage: async () => ({ ok: true as const, data: { id: "p1", roomId: "r", personId: "bot" } }),
      editMessage: async (_id: string, b: { markdown: string }) => {
        edits.push(b.markdown);
        return { ok: true as const, data: { id: "p1", roomId: "r", personId: "bot" } };
      },
    } as unknown as WebexRest;
    const r = new WebexRenderer({
      rest,
      roomId: "r",
      logger: new MemoryLogger(),
      clock,
      statusStartMs: 1000,
    });
    await r.onTurnStart();
    const delays: number[] = [];
    for (let i = 0; i < 12; i++) {
      await r.onTextChunk(`part ${i}. `);
      await r.onToolCall(`t${i}`, `tool ${i}`);
      delays.push(...clock.pendingDelays());
      await clock.advance(clock.pendingDelays()[0] ?? 0);
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000]);
    expect(edits).toHaveLength(8);
    // The running tool and the answer so far are on the frame.
    expect(edits[7]).toContain("part 7.");
    expect(edits[7]).toContain("tool 7");
    await r.onDone("end_turn");
    expect(edits).toHaveLength(9);
    expect(edits[8]).toContain("part 11.");
  });
});
