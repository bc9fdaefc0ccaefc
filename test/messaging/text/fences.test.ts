import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { closeOpenFence, iterFenceSpans } from "../../../src/messaging/text/fences.js";

/** True when no fence is left open at the end (the last span, if any, ends on a closer line). */
function balanced(text: string): boolean {
  let state: "in" | "out" = "out";
  for (const line of text.split("\n")) {
    if (/^ {0,3}(`{3,}|~{3,})/.test(line)) state = state === "in" ? "out" : "in";
  }
  return state === "out";
}

describe("closeOpenFence", () => {
  it("closes a fence the text leaves open, with the opener's own character and length", () => {
    expect(closeOpenFence("code:\n```ts\nconst a = 1;")).toBe("code:\n```ts\nconst a = 1;\n```");
    expect(closeOpenFence("~~~~\nx\n")).toBe("~~~~\nx\n~~~~");
    expect(closeOpenFence("```")).toBe("```\n```");
  });

  it("leaves balanced text, and text with no fence, unchanged", () => {
    expect(closeOpenFence("a\n```\nb\n```\nc")).toBe("a\n```\nb\n```\nc");
    expect(closeOpenFence("plain text")).toBe("plain text");
    expect(closeOpenFence("")).toBe("");
  });

  it("any prefix of a fenced document comes out balanced", () => {
    const doc = "intro\n\n```ts\nconst a = 1;\n```\n\nmid\n~~~\nraw\n~~~\nend\n```py\nx = 2\n```\n";
    fc.assert(
      fc.property(fc.integer({ min: 0, max: doc.length }), (n) => {
        const closed = closeOpenFence(doc.slice(0, n));
        expect(balanced(closed)).toBe(true);
        // Closing never needs more than one fence span to end at the text's end.
        for (const [, end] of iterFenceSpans(closed)) expect(end).toBeLessThanOrEqual(closed.length);
      }),
    );
  });
});
