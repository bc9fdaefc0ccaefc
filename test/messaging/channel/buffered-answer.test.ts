/**
 * The shared half of a buffered renderer: the wait said once, a silence when it starts and each
 * time it doubles (activity starts a new stretch), a chip a paragraph below the answer, and the
 * final message's parts in order.
 */
import { describe, expect, it } from "vitest";
import { appendChip, finalAnswerText, QuietNotices } from "../../../src/messaging/channel/buffered-answer.js";

describe("buffered answers", () => {
  it("says the wait once and a silence only as it doubles", () => {
    const n = new QuietNotices("/stop");
    expect(n.notice({ type: "waiting", position: 2 })).toContain("Waiting for a free agent");
    expect(n.notice({ type: "waiting", position: 1 })).toBeNull();
    expect(n.notice({ type: "silent", seconds: 30 })).toContain("/stop");
    expect(n.notice({ type: "silent", seconds: 59 })).toBeNull();
    expect(n.notice({ type: "silent", seconds: 60 })).not.toBeNull();
    n.activity();
    expect(n.notice({ type: "silent", seconds: 30 })).not.toBeNull();
  });

  it("puts a chip a paragraph below the answer", () => {
    expect(appendChip("", "> x")).toBe("> x");
    expect(appendChip("a", "> x")).toBe("a\n\n> x");
    expect(appendChip("a\n", "> x")).toBe("a\n\n> x");
    expect(appendChip("a\n\n", "> x")).toBe("a\n\n> x");
  });

  it("ends with the answer, abandoned prompts, then the status line; a silent turn says so", () => {
    const base = {
      answered: false,
      stopReason: "end_turn",
      ending: {},
      elapsedMs: 3_000,
      contextUsagePct: undefined,
      newCommand: "/new",
      abandoned: [] as string[],
    };
    expect(finalAnswerText({ ...base, body: "Hi.\n", abandoned: ["deploy"] })).toMatch(
      /^Hi\.\n\n🔐 deploy: .+\n\nFinished in 3s$/,
    );
    expect(finalAnswerText({ ...base, body: "" })).toMatch(/^\(no answer\)\n\nFinished in 3s$/);
    expect(finalAnswerText({ ...base, body: "", answered: true })).toBe("Finished in 3s");
    expect(finalAnswerText({ ...base, body: "", stopReason: "error", ending: { error: "boom" } })).toContain(
      "Boom",
    );
  });
});
