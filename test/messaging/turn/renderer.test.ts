import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ParleyError } from "../../../src/messaging/base/errors.js";
import { RecordingRenderer } from "../../../src/messaging/turn/recording-renderer.js";
import type { OutputEvent } from "../../../src/messaging/turn/renderer.js";
import {
  newApprovalNonce,
  nonceMatches,
  OUTPUT_KINDS,
  SilentRenderer,
} from "../../../src/messaging/turn/renderer.js";

describe("Renderer.dispatch", () => {
  it("routes every kind to its handler", async () => {
    const r = new RecordingRenderer();
    const events: OutputEvent[] = [
      { kind: "text_chunk", text: "hi" },
      { kind: "thinking", text: "hmm" },
      { kind: "tool_call", toolCallId: "t1", title: "Read", toolKind: "read", toolPurpose: "look" },
      { kind: "tool_update", toolCallId: "t1", title: "cat a.txt", status: "completed" },
      { kind: "agent_status", status: { type: "waiting", position: 2 } },
      {
        kind: "prompt_choice",
        requestId: "r1",
        options: [],
        toolTitle: "Read",
        toolPurpose: "look",
        nonce: "n",
      },
      { kind: "compaction", contextUsagePct: 40, receipt: "" },
      { kind: "steer_consumed", steerId: "s1", summary: "ok" },
      { kind: "done", stopReason: "end_turn" },
    ];
    for (const e of events) await r.dispatch(e);
    expect(r.calls.map((c) => c.call)).toEqual([
      "onTextChunk",
      "onThinking",
      "onToolCall",
      "onToolUpdate",
      "onAgentStatus",
      "onPromptChoice",
      "onCompaction",
      "onSteerConsumed",
      "onDone",
    ]);
    expect(r.calls[3]).toEqual({
      call: "onToolUpdate",
      toolCallId: "t1",
      title: "cat a.txt",
      status: "completed",
    });
    expect(OUTPUT_KINDS.size).toBe(9);
    for (const e of events) expect(OUTPUT_KINDS.has(e.kind)).toBe(true);
  });

  it("throws a clear error on an unknown kind", async () => {
    const r = new RecordingRenderer();
    const bogus = { kind: "confetti", text: "x" } as unknown as OutputEvent;
    await expect(r.dispatch(bogus)).rejects.toThrow(ParleyError);
    await expect(r.dispatch(bogus)).rejects.toThrow(/unknown output event kind: "confetti"/);
  });

  it("SilentRenderer swallows every event and accepts any close arguments", async () => {
    const s = new SilentRenderer();
    await s.dispatch({ kind: "text_chunk", text: "x" });
    await s.dispatch({ kind: "done", stopReason: "end_turn" });
    await expect(s.close("failure_reason", { extra: 1 }, 3)).resolves.toBeUndefined();
    await expect(s.onTurnStart()).resolves.toBeUndefined();
  });
});

describe("approval nonces", () => {
  it("are fresh, url-safe and fit a 64-byte callback budget", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const n = newApprovalNonce();
      expect(n).toMatch(/^[A-Za-z0-9_-]{22}$/);
      seen.add(n);
    }
    expect(seen.size).toBe(200);
  });

  it("match only the exact nonce", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.option(fc.string()), (expected, presented) => {
        expect(nonceMatches(expected, presented)).toBe(presented === expected);
      }),
    );
    expect(nonceMatches("", "")).toBe(false);
    expect(nonceMatches("abc", undefined)).toBe(false);
  });
});
