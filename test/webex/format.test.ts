/** The byte-exact chunker Webex keeps for an over-size raw grid: lossless, bounded, never inside a character. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chunkAnswer, chunkExact } from "../../src/webex/format.js";

const bytes = (s: string) => Buffer.byteLength(s, "utf8");
const points = (s: string) => Array.from(s).length;

describe("chunkExact", () => {
  it("reassembles exactly, within both bounds, cutting only between code points", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", maxLength: 400 }),
        fc.integer({ min: 4, max: 64 }),
        fc.integer({ min: 1, max: 40 }),
        (text, maxBytes, maxChars) => {
          const pieces = chunkExact(text, maxBytes, maxChars);
          expect(pieces.join("")).toBe(text);
          for (const piece of pieces) {
            expect(piece).not.toBe("");
            expect(bytes(piece)).toBeLessThanOrEqual(maxBytes);
            expect(points(piece)).toBeLessThanOrEqual(maxChars);
          }
          // Each cut is a code-point boundary of the input: a surrogate pair is never split.
          let at = 0;
          for (const piece of pieces.slice(0, -1)) {
            at += piece.length;
            const cp = text.codePointAt(at - 1) ?? 0;
            expect(cp >= 0xd800 && cp <= 0xdbff && /[\uDC00-\uDFFF]/.test(text[at] ?? "")).toBe(false);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("an emoji at a byte boundary travels whole", () => {
    expect(chunkExact("ab😀cd", 4, 100)).toEqual(["ab", "😀", "cd"]);
    expect(chunkExact("😀😀😀", 8, 100)).toEqual(["😀😀", "😀"]);
  });
});

describe("chunkAnswer", () => {
  it("cuts a raw run exactly and the prose around it fence-safe; the pieces are marked", () => {
    const raw = `| ${"x | ".repeat(3000)}\n|${"---|".repeat(3001)}`;
    const text = `Intro.\n\n${raw}\n\nOutro.`;
    const start = text.indexOf("|");
    const chunks = chunkAnswer("", { text, rawRuns: [[start, start + raw.length]] });
    expect(chunks[0]).toEqual({ text: "Intro.", exact: false });
    expect(chunks.at(-1)).toEqual({ text: "Outro.", exact: false });
    const exact = chunks.filter((c) => c.exact);
    expect(exact.length).toBeGreaterThan(1);
    expect(exact.map((c) => c.text).join("")).toBe(raw);
  });
});
