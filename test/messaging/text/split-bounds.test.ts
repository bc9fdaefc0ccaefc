import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { splitMarkdownBytes, splitMarkdownSafe } from "../../../src/messaging/text/split.js";
import { StreamingSplitter } from "../../../src/messaging/text/streaming-splitter.js";

/**
 * Issue 14, findings 10 and 11: splitting never floods. A chat message costs the reader (and the
 * platform's rate limit) far more than its bytes, so the number of chunks must stay proportional to
 * n / limit whatever the text: a line of fence markers, a fence whose opener the model made huge,
 * emoji at a tiny byte cap.
 *
 * The bounds: a single line splits into at most ceil(2n / limit) + 2 chunks (a clean cut, which
 * never leaves a remainder starting with a fence marker or indent, can at most halve a chunk), any
 * text at a real cap (64 and up) into at most ceil(3n / limit) + 2 (a line boundary is preferred
 * once a chunk is a quarter full, and two consecutive chunks always hold more than a limit).
 */
const cp = (s: string) => Array.from(s).length;

const LINE_ATOMS = [
  "`",
  "```",
  "~~~",
  "~",
  " ",
  "a",
  "abc def",
  "😀",
  "|",
  "-",
  "\t",
  "x".repeat(50),
  "`".repeat(200),
  "~".repeat(120),
  "```python title=x",
];
const TEXT_ATOMS = [
  ...LINE_ATOMS,
  "\n",
  "\n\n",
  "```py\n",
  "\n```\n",
  "| a | b |\n",
  "|---|---|\n",
  `${"`".repeat(70)}\n`,
  `\`\`\`${"y".repeat(90)}\n`,
];

describe("splitMarkdownSafe never floods", () => {
  it("splits a single line into at most ceil(2n / limit) + 2 chunks (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...LINE_ATOMS), { maxLength: 80 }),
        fc.integer({ min: 8, max: 300 }),
        (parts, limit) => {
          const text = parts.join("");
          expect(splitMarkdownSafe(text, limit).length).toBeLessThanOrEqual(
            Math.ceil((2 * cp(text)) / limit) + 2,
          );
        },
      ),
      { numRuns: 1500 },
    );
  });

  it("splits any text at a real cap into at most ceil(3n / limit) + 2 chunks, streamed alike (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...TEXT_ATOMS), { maxLength: 80 }),
        fc.integer({ min: 64, max: 300 }),
        (parts, limit) => {
          const text = parts.join("");
          const whole = splitMarkdownSafe(text, limit);
          expect(whole.length).toBeLessThanOrEqual(Math.ceil((3 * cp(text)) / limit) + 2);
          const stream = new StreamingSplitter(limit);
          const streamed: string[] = [];
          for (let i = 0; i < text.length; i += 7) streamed.push(...stream.append(text.slice(i, i + 7)));
          streamed.push(...stream.finish());
          expect(streamed).toEqual(whole);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("gives a fence-marker line exactly ceil(n / limit) chunks", () => {
    expect(splitMarkdownSafe("`".repeat(40_000), 1900)).toHaveLength(22);
    expect(splitMarkdownSafe("~".repeat(10_000), 1000)).toHaveLength(10);
  });

  it("cuts a short marker run hard when a cut left it mid-line (fast-check counterexample: 8 chunks, bound 7)", () => {
    const text = `~~~😀${"~".repeat(120)}\`\`\`python title=x${"~".repeat(120)}`;
    expect(splitMarkdownSafe(text, 116).length).toBeLessThanOrEqual(Math.ceil((2 * cp(text)) / 116) + 2);
  });

  it("keeps a fence whose opener is too long to repeat from turning its body into one message per character", () => {
    const body = "body line\n".repeat(4000);
    for (const opener of [`\`\`\`${"x".repeat(1800)}`, "`".repeat(1000)]) {
      const chunks = splitMarkdownSafe(
        `${opener}\n${body}${opener.startsWith("```x") ? "```" : opener}`,
        1900,
      );
      expect(chunks.length).toBeLessThanOrEqual(
        Math.ceil((2 * (opener.length * 2 + body.length)) / 1900) + 2,
      );
      expect(chunks.every((c) => cp(c) <= 1900)).toBe(true);
    }
  });

  it("reopens a fence bare (no info string) when its opener line would eat more than half a chunk", () => {
    const chunks = splitMarkdownSafe(`\`\`\`${"x".repeat(1000)}\n${"line\n".repeat(1000)}\`\`\``, 1900);
    expect(chunks[1]!.startsWith("```\nline\n")).toBe(true);
    expect(chunks[1]!.endsWith("\n```")).toBe(true);
  });
});

describe("splitMarkdownBytes emits no needless short chunks", () => {
  it("packs emoji-only text at a 9-byte cap two to a chunk: 38 chunks for 76 emoji (was 42)", () => {
    const chunks = splitMarkdownBytes("😀".repeat(76), 9);
    expect(chunks).toHaveLength(38);
    expect(chunks.every((c) => c === "😀😀")).toBe(true);
  });

  it("never uses more than one chunk beyond the byte-optimal count on uniform text (property)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("😀", "é", "中", "a"),
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 5, max: 80 }),
        (unit, n, cap) => {
          const width = Buffer.byteLength(unit);
          const perChunk = Math.floor(cap / width);
          const chunks = splitMarkdownBytes(unit.repeat(n), cap);
          expect(chunks.join("")).toBe(unit.repeat(n));
          expect(chunks.every((c) => Buffer.byteLength(c) <= cap)).toBe(true);
          expect(chunks.length).toBeLessThanOrEqual(Math.ceil(n / perChunk) + 1);
        },
      ),
      { numRuns: 500 },
    );
  });
});
