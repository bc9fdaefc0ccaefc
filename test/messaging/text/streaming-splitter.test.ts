import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { splitMarkdownSafe } from "../../../src/messaging/text/split.js";
import { StreamingSplitter } from "../../../src/messaging/text/streaming-splitter.js";

/**
 * The contract under test. After every append, with k = splitMarkdownSafe(prefix so far):
 *   sealed so far + (tail === "" ? [] : [tail])  deep-equals  k
 * so `tail` is the last chunk of k (or "" when k is empty) and every earlier chunk has been sealed.
 * After finish(), sealed + finish() deep-equals splitMarkdownSafe(whole text).
 */
function expectMatchesResplit(pieces: string[], limit: number, reserve: number): void {
  const splitter = new StreamingSplitter(limit, { reserve });
  const sealed: string[] = [];
  let prefix = "";
  for (const piece of pieces) {
    sealed.push(...splitter.append(piece));
    prefix += piece;
    const live = splitter.tail === "" ? [] : [splitter.tail];
    expect([...sealed, ...live]).toEqual(splitMarkdownSafe(prefix, limit, { reserve }));
  }
  expect([...sealed, ...splitter.finish()]).toEqual(splitMarkdownSafe(prefix, limit, { reserve }));
}

/** Cuts `text` at arbitrary UTF-16 offsets (so a surrogate pair may arrive in two appends). */
function piecesOf(text: string, sizes: number[]): string[] {
  const pieces: string[] = [];
  let at = 0;
  for (const size of sizes) {
    if (at >= text.length) break;
    pieces.push(text.slice(at, at + size));
    at += size;
  }
  if (at < text.length) pieces.push(text.slice(at));
  return pieces;
}

const TOKENS = [
  "word ",
  "lorem ipsum ",
  "\n",
  "\n\n",
  "```py\n",
  "```\n",
  "~~~~\n",
  '  ```js title="x"\n',
  "| a | b |\n",
  "|---|---|\n",
  "`",
  "~",
  " ",
  "|",
  "-",
  "😀",
  "\ud83d",
  "\ude00",
  "\r\n",
  "x".repeat(30),
];
const streamText = fc.oneof(
  fc.array(fc.constantFrom(...TOKENS), { maxLength: 60 }).map((parts) => parts.join("")),
  fc.string({ unit: "binary", maxLength: 60 }),
);

describe("StreamingSplitter", () => {
  it("equals re-splitting the prefix after every append, and the whole text after finish", () => {
    fc.assert(
      fc.property(
        streamText,
        fc.array(fc.integer({ min: 1, max: 12 }), { maxLength: 80 }),
        fc.integer({ min: -1, max: 40 }),
        fc.integer({ min: 0, max: 8 }),
        (text, sizes, limit, reserve) => expectMatchesResplit(piecesOf(text, sizes), limit, reserve),
      ),
      { numRuns: 400 },
    );
  });

  it("holds text that still fits one chunk as the tail, sealing nothing", () => {
    const splitter = new StreamingSplitter(10);
    expect(splitter.append("hello ")).toEqual([]);
    expect(splitter.tail).toBe("hello ");
    expect(splitter.append("you")).toEqual([]);
    expect(splitter.tail).toBe("hello you");
    expect(splitter.finish()).toEqual(["hello you"]);
  });

  it("seals a chunk once later text fixes it, and keeps the rest live", () => {
    const splitter = new StreamingSplitter(12);
    expect(splitter.append("first line\nsecond")).toEqual(["first line"]);
    expect(splitter.tail).toBe("second");
    expect(splitter.append(" line\nthird")).toEqual(["second line"]);
    expect(splitter.tail).toBe("third");
    expect(splitter.finish()).toEqual(["third"]);
  });

  it("keeps an open fence's live buffer open and closes it only when sealing", () => {
    const splitter = new StreamingSplitter(20);
    const sealed = [...splitter.append("```py\nprint(1)\n"), ...splitter.append("print(2)\n")];
    expect(sealed).toEqual(["```py\nprint(1)\n```"]);
    expect(splitter.tail).toBe("```py\nprint(2)\n");
    expect(splitter.finish()).toEqual(["```py\nprint(2)\n"]);
  });

  it("counts a surrogate pair split across two appends as one code point", () => {
    const splitter = new StreamingSplitter(3);
    expect(splitter.append("ab\ud83d")).toEqual([]);
    expect(splitter.append("\ude00")).toEqual([]);
    expect(splitter.tail).toBe("ab😀");
    expect(splitter.append("c")).toEqual(["ab😀"]);
    expect(splitter.finish()).toEqual(["c"]);
  });

  it("never splits when the limit or the reserve leaves no budget", () => {
    for (const [limit, reserve] of [
      [0, 0],
      [-5, 0],
      [4, 4],
    ] as const) {
      const splitter = new StreamingSplitter(limit, { reserve });
      expect(splitter.append("a long line that would otherwise split")).toEqual([]);
      expect(splitter.finish()).toEqual(["a long line that would otherwise split"]);
    }
  });

  it("handles empty input, empty appends and a second finish", () => {
    const splitter = new StreamingSplitter(5);
    expect(splitter.append("")).toEqual([]);
    expect(splitter.tail).toBe("");
    expect(splitter.finish()).toEqual([]);
    expect(splitter.finish()).toEqual([]);
  });

  it("rejects appends after finish, non-strings and non-integer limits", () => {
    const splitter = new StreamingSplitter(5);
    splitter.finish();
    expect(() => splitter.append("x")).toThrow();
    expect(() => new StreamingSplitter(5).append(42 as unknown as string)).toThrow(TypeError);
    expect(() => new StreamingSplitter(2.5)).toThrow(RangeError);
  });

  it("streams a long document one character at a time", () => {
    const text = [
      "# Title\n\nSome prose that runs on for a while. ".repeat(5),
      "```ts\n",
      "const x = 1;\n".repeat(30),
      "```\n\n| a | b |\n|---|---|\n",
      "| 1 | 2 |\n".repeat(10),
      "😀中文 ".repeat(40),
    ].join("");
    expectMatchesResplit(Array.from(text), 60, 5);
  });
});

/**
 * `committed` is what an append-only surface may show: after any append, it must be a prefix of the
 * chunk being filled (the chunk the final sequence holds at the index of chunks sealed so far), and
 * within one chunk it only grows. Paragraph-heavy and table-heavy text exercises the two cuts that
 * move lines into the next chunk.
 */
const PROSE_TOKENS = [...TOKENS, "para one. ", "\n\n", "| x | y |\n", "| 1 | 2 |\n", "- item\n", "# H\n"];
const committedText = fc.oneof(
  streamText,
  fc.array(fc.constantFrom(...PROSE_TOKENS), { maxLength: 120 }).map((parts) => parts.join("")),
);

function expectCommittedIsFinal(pieces: string[], limit: number, reserve: number): void {
  const splitter = new StreamingSplitter(limit, { reserve });
  const chunks: string[] = [];
  const seen: [number, string][] = [];
  for (const piece of pieces) {
    chunks.push(...splitter.append(piece));
    const committed = splitter.committed;
    expect(splitter.tail.startsWith(committed)).toBe(true);
    seen.push([chunks.length, committed]);
  }
  chunks.push(...splitter.finish());
  let last: [number, string] = [-1, ""];
  for (const [index, committed] of seen) {
    if (committed !== "") expect((chunks[index] ?? "").startsWith(committed)).toBe(true);
    if (index === last[0]) expect(committed.startsWith(last[1])).toBe(true);
    last = [index, committed];
  }
}

describe("StreamingSplitter.committed", () => {
  it("is always a prefix of the chunk being filled, and grows within it", () => {
    fc.assert(
      fc.property(
        committedText,
        fc.array(fc.integer({ min: 1, max: 12 }), { maxLength: 120 }),
        fc.integer({ min: -1, max: 60 }),
        fc.integer({ min: 0, max: 8 }),
        (text, sizes, limit, reserve) => expectCommittedIsFinal(piecesOf(text, sizes), limit, reserve),
      ),
      { numRuns: 600 },
    );
  });

  it("holds back the unfinished line, a trailing table row and whatever follows a late paragraph break", () => {
    const splitter = new StreamingSplitter(40);
    splitter.append("one\ntwo");
    expect(splitter.committed).toBe("one");
    splitter.append("\n| a | b |\n");
    expect(splitter.committed).toBe("one\ntwo");
    splitter.append("after the row\n");
    expect(splitter.committed).toBe("one\ntwo\n| a | b |\nafter the row");
    const late = new StreamingSplitter(40);
    late.append(`${"x".repeat(24)}\n\nnext\n`);
    // The break sits past half the budget: the paragraph after it may still move on.
    expect(late.committed).toBe("x".repeat(24));
  });

  it("is empty once finished, and everything held when the splitter never splits", () => {
    const off = new StreamingSplitter(0);
    off.append("all of it\nstays");
    expect(off.committed).toBe("all of it\nstays");
    off.finish();
    expect(off.committed).toBe("");
  });
});
