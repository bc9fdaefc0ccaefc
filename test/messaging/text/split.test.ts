import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { closerOf, type FenceState, nextFence } from "../../../src/messaging/text/fences.js";
import {
  chunkUtf8Bytes,
  iterFenceLines,
  iterFenceSpans,
  splitMarkdownBytes,
  splitMarkdownSafe,
  truncateUtf8,
} from "../../../src/messaging/text/split.js";

// ---------------------------------------------------------------------------------------------
// Helpers: code points, Python whitespace, and a checker that lines chunks up against the source.
// ---------------------------------------------------------------------------------------------

const cp = (s: string): number => Array.from(s).length;
/** UTF-8 bytes, a lone surrogate counting three (its replacement character's width). */
const utf8 = (s: string): number => Buffer.byteLength(s, "utf8");
const PY_SPACE = /^[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/;
const isPySpace = (s: string): boolean => PY_SPACE.test(s);

/** Fence state at every source position: the state before the line holding it (end: after the text). */
function fenceStates(text: string): (pos: number) => FenceState {
  const starts: number[] = [];
  const states: FenceState[] = [];
  let state: FenceState = null;
  for (let start = 0; start < text.length; ) {
    const nl = text.indexOf("\n", start);
    const end = nl < 0 ? text.length : nl + 1;
    starts.push(start);
    states.push(state);
    state = nextFence(state, text.slice(start, end));
    start = end;
  }
  return (pos) => {
    if (pos >= text.length) return state;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= pos) lo = mid;
      else hi = mid - 1;
    }
    return states[lo]!;
  };
}

/**
 * One chunk mapped back onto the source: content = source[start, end), plus any synthetic scaffolding.
 * `cutAt` is where the splitter cut: past `end` by the trailing whitespace a seal outside a fence trims.
 */
interface Aligned {
  chunk: string;
  start: number;
  end: number;
  cutAt: number;
  reopened: boolean;
  closed: boolean;
  content: string;
}

/**
 * Lines the chunks up against the source: each chunk must be [reopener] + a contiguous source slice +
 * [synthetic closer], and the only source text no chunk carries is trailing whitespace trimmed where a
 * chunk was sealed outside a fence. A synthetic closer can read exactly like the source's next line, so
 * several readings may exist: `accept` filters them. Returns null when no accepted reading exists.
 */
function align(
  text: string,
  chunks: string[],
  accept: (a: Aligned, last: boolean) => boolean = () => true,
): Aligned[] | null {
  const at = fenceStates(text);
  const out: Aligned[] = [];
  const dead = new Set<string>();
  const candidates = (chunk: string, q: number, last: boolean): Aligned[] => {
    const found: Aligned[] = [];
    const state = at(q);
    const reopener = state === null ? "" : `${state.opener}\n`;
    if (state !== null && !chunk.startsWith(reopener)) {
      // The reopener itself lost its newline to trimming: the content was whitespace that left the fence.
      if (!last && reopener.startsWith(chunk) && isPySpace(reopener.slice(chunk.length))) {
        for (let e = q + 1; e <= text.length && isPySpace(text.slice(q, e)); e++) {
          if (at(e) === null)
            found.push({ chunk, start: q, end: q, cutAt: e, reopened: true, closed: false, content: "" });
        }
      }
      return found;
    }
    const body = chunk.slice(reopener.length);
    let m = 0;
    while (m < body.length && q + m < text.length && body[m] === text[q + m]) m++;
    for (let k = m; k >= 0; k--) {
      const e = q + k;
      const rest = body.slice(k);
      const content = body.slice(0, k);
      const base = { chunk, start: q, end: e, reopened: state !== null, content };
      if (last) {
        if (rest === "" && e === text.length) found.push({ ...base, cutAt: e, closed: false });
        continue;
      }
      const sealState = at(e);
      if (sealState !== null) {
        const closer = closerOf(sealState);
        if (rest === ((reopener + content).endsWith("\n") ? closer : `\n${closer}`)) {
          found.push({ ...base, cutAt: e, closed: true });
        }
      }
      if (rest === "" && !isPySpace(chunk.slice(-1) || "x")) {
        // Sealed outside a fence: the cut lies past any whitespace the seal trimmed, where no fence is open.
        for (let cut = e; cut <= text.length && isPySpace(text.slice(e, cut)); cut++) {
          if (at(cut) === null) {
            found.push({ ...base, cutAt: cut, closed: false });
            break;
          }
        }
      }
    }
    return found;
  };
  const go = (i: number, p: number, trimmed: boolean): boolean => {
    if (i === chunks.length) return p === text.length;
    const key = `${i}:${p}:${trimmed}`;
    if (dead.has(key)) return false;
    for (let q = p; q <= text.length; q++) {
      // Only whitespace trimmed from a chunk sealed outside a fence may be skipped.
      if (q > p && !(trimmed && isPySpace(text[q - 1]!))) break;
      for (const cand of candidates(chunks[i]!, q, i === chunks.length - 1)) {
        if (!accept(cand, i === chunks.length - 1)) continue;
        out.push(cand);
        if (go(i + 1, cand.end, !cand.closed)) return true;
        out.pop();
      }
    }
    dead.add(key);
    return false;
  };
  return go(0, 0, true) ? out : null;
}

const sameFence = (a: FenceState, b: FenceState): boolean =>
  a === null ? b === null : b !== null && a.char === b.char && a.size === b.size && a.opener === b.opener;

/**
 * Re-parses one chunk on its own and checks that, at every source line boundary it contains and at its
 * end, its fence state is the source's. Returns a description of the first disagreement, or null.
 */
function fenceDisagreement(text: string, a: Aligned, last: boolean): string | null {
  const at = fenceStates(text);
  let state: FenceState = null;
  if (a.reopened) {
    state = nextFence(null, `${a.chunk.split("\n")[0]}\n`);
    if (!sameFence(state, at(a.start))) return `reopener of ${JSON.stringify(a.chunk)}`;
  }
  let lineStart = 0;
  for (let t = a.content.indexOf("\n"); t >= 0; t = a.content.indexOf("\n", t + 1)) {
    state = nextFence(state, a.content.slice(lineStart, t + 1));
    lineStart = t + 1;
    if (!sameFence(state, at(a.start + t + 1)))
      return `line ending at ${a.start + t + 1} in ${JSON.stringify(a.chunk)}`;
  }
  if (lineStart < a.content.length) state = nextFence(state, a.content.slice(lineStart));
  if (last) return sameFence(state, at(text.length)) ? null : `final state of ${JSON.stringify(a.chunk)}`;
  if (!sameFence(state, at(a.cutAt))) return `state at the cut in ${JSON.stringify(a.chunk)}`;
  if (a.closed && state !== null) state = nextFence(state, closerOf(state));
  return state === null ? null : `${JSON.stringify(a.chunk)} is left open`;
}

/** Largest logical line (terminator included), in code points. */
const longestLine = (text: string): number => Math.max(0, ...text.split(/(?<=\n)/).map(cp));

// ---------------------------------------------------------------------------------------------
// Generators: markdown-ish text and pathological fence-heavy text.
// ---------------------------------------------------------------------------------------------

const MARKDOWN = [
  "word ",
  "lorem ipsum dolor ",
  "\n",
  "\n\n",
  "```py\n",
  "```\n",
  "~~~\n",
  "````diff\n",
  '   ```js title="x"\n',
  "| a | b |\n",
  "|---|---|\n",
  "- item\n",
  "# Head\n",
  "    indented\n",
  "  ",
  "中文",
  "😀",
  "e\u0301",
  "\r\n",
  "x".repeat(40),
];
const PATHOLOGICAL = [
  "`",
  "~",
  "\n",
  " ",
  "|",
  "-",
  "😀",
  "\ud83d",
  "\ude00",
  "```",
  "~~~~",
  "\r\n",
  "\t",
  "a",
];

const textOf = (tokens: string[], maxLength: number) =>
  fc.array(fc.constantFrom(...tokens), { maxLength }).map((parts) => parts.join(""));
const FENCY_LINES = [
  "```py\n",
  "```\n",
  "~~~\n",
  "````\n",
  "code\n",
  "a b c\n",
  "\n",
  "  x\n",
  "| a |\n",
  "`\n",
  "``\n",
  "```x`\n",
];
const anyText = fc.oneof(textOf(MARKDOWN, 60), textOf(PATHOLOGICAL, 120), fc.string({ maxLength: 80 }));
/** Many short lines, most of them fence delimiters, so small limits still split inside fences. */
const fencyText = textOf(FENCY_LINES, 40);
const limitArb = fc.integer({ min: -2, max: 60 });
const reserveArb = fc.integer({ min: 0, max: 12 });

// ---------------------------------------------------------------------------------------------
// Contract examples, one block per bullet of the spec.
// ---------------------------------------------------------------------------------------------

describe("splitMarkdownSafe: budget", () => {
  it("returns [] for empty text and [text] when it fits or splitting is disabled", () => {
    expect(splitMarkdownSafe("", 10)).toEqual([]);
    expect(splitMarkdownSafe("", 0)).toEqual([]);
    expect(splitMarkdownSafe("hello", 10)).toEqual(["hello"]);
    expect(splitMarkdownSafe("hello world", 0)).toEqual(["hello world"]);
    expect(splitMarkdownSafe("hello world", -3)).toEqual(["hello world"]);
    // A reserve that consumes the whole budget disables splitting rather than looping.
    expect(splitMarkdownSafe("hello world", 5, { reserve: 5 })).toEqual(["hello world"]);
  });

  it("holds `reserve` back from every chunk", () => {
    expect(splitMarkdownSafe("aaaa bbbb cccc", 14)).toEqual(["aaaa bbbb cccc"]);
    expect(splitMarkdownSafe("aaaa bbbb cccc", 10, { reserve: 5 })).toEqual(["aaaa", "bbbb", "cccc"]);
  });

  it("counts code points, not UTF-16 units, and never cuts a surrogate pair", () => {
    expect(splitMarkdownSafe("😀".repeat(10), 4)).toEqual(["😀😀😀😀", "😀😀😀😀", "😀😀"]);
    expect(splitMarkdownSafe("😀".repeat(10), 10)).toEqual(["😀".repeat(10)]);
    for (const chunk of splitMarkdownSafe("a😀".repeat(20), 3))
      expect(chunk).not.toMatch(/^[\udc00-\udfff]|[\ud800-\udbff]$/);
  });

  it("rejects non-integer limits", () => {
    expect(() => splitMarkdownSafe("abc", 2.5)).toThrow(RangeError);
    expect(() => splitMarkdownSafe("abc", 2, { reserve: 0.5 })).toThrow(RangeError);
  });
});

describe("splitMarkdownSafe: real fence grammar", () => {
  it("treats a shorter run inside a longer fence as content", () => {
    // A backtick-parity counter would flip at "```js" and "```" and invert the rest of the message.
    expect(splitMarkdownSafe("````md\n```js\ncode\n```\n````\n", 20)).toEqual([
      "````md\n```js\n````",
      "````md\ncode\n````",
      "````md\n```\n````\n",
    ]);
  });

  it("knows tilde fences, indentation, info strings and closers", () => {
    expect([...iterFenceLines("~~~\ncode ``` here\n~~~")]).toEqual([
      ["~~~", "open"],
      ["code ``` here", "body"],
      ["~~~", "close"],
    ]);
    expect([...iterFenceLines("    ```\nx")]).toEqual([
      ["    ```", "outside"],
      ["x", "outside"],
    ]);
    expect([...iterFenceLines("``` `x` ```\ny")]).toEqual([
      ["``` `x` ```", "outside"],
      ["y", "outside"],
    ]);
    expect([...iterFenceLines("```\nbody\n``` not a closer\n ````  \nz")]).toEqual([
      ["```", "open"],
      ["body", "body"],
      ["``` not a closer", "body"],
      [" ````  ", "close"],
      ["z", "outside"],
    ]);
    expect([...iterFenceLines("~~~ `ok` in a tilde info\n~~\n~~~~\r\n")]).toEqual([
      ["~~~ `ok` in a tilde info", "open"],
      ["~~", "body"],
      ["~~~~", "close"],
    ]);
  });

  it("adds no scaffolding around text that only looks like a fence", () => {
    expect(splitMarkdownSafe(`    \`\`\`\n${"a".repeat(30)}`, 20)).toEqual([
      "    ```",
      "a".repeat(20),
      "a".repeat(10),
    ]);
  });
});

describe("splitMarkdownSafe: language-tag carry", () => {
  it("seals a cut inside a fence and reopens with the original opener line", () => {
    const text = `\`\`\`python\n${"x = 1\n".repeat(6)}\`\`\``;
    const chunk = "```python\nx = 1\nx = 1\n```";
    expect(splitMarkdownSafe(text, 30)).toEqual([chunk, chunk, chunk]);
  });

  it("keeps the opener's indent and info string, and closes with a bare matching run", () => {
    const text = `   ~~~~js title="x"\n${"line\n".repeat(6)}   ~~~~`;
    const chunks = splitMarkdownSafe(text, 40);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(chunk.startsWith('   ~~~~js title="x"\n')).toBe(true);
    for (const chunk of chunks.slice(0, -1)) expect(chunk.endsWith("\n~~~~")).toBe(true);
  });
});

describe("splitMarkdownSafe: cut preference", () => {
  it("prefers a paragraph break at least halfway into the budget", () => {
    const text = `${"a".repeat(12)}\n\n${"b".repeat(5)}\n${"c".repeat(10)}`;
    expect(splitMarkdownSafe(text, 24)).toEqual(["a".repeat(12), `${"b".repeat(5)}\n${"c".repeat(10)}`]);
  });

  it("otherwise takes the last line break at least a quarter in", () => {
    const text = `aaaa\n\n${"b".repeat(14)}\n${"c".repeat(10)}`;
    expect(splitMarkdownSafe(text, 24)).toEqual([`aaaa\n\n${"b".repeat(14)}`, "c".repeat(10)]);
  });

  it("otherwise hard-cuts to fill the budget", () => {
    expect(splitMarkdownSafe(`ab\n${"c".repeat(40)}`, 20)).toEqual([
      `ab\n${"c".repeat(17)}`,
      "c".repeat(20),
      "ccc",
    ]);
    expect(splitMarkdownSafe(`abcdef\n${"c".repeat(30)}`, 20)).toEqual([
      "abcdef",
      "c".repeat(20),
      "c".repeat(10),
    ]);
  });

  it("cuts inside a fence only at line boundaries while a line fits a chunk", () => {
    const text = `\`\`\`\n${"aaaa\n".repeat(5)}\`\`\``;
    expect(splitMarkdownSafe(text, 16)).toEqual(Array(5).fill("```\naaaa\n```"));
  });

  it("pulls a hard cut back until neither half starts with indent or a fence character", () => {
    expect(splitMarkdownSafe("aaaaa ```bbbbbbbbbb", 6)).toEqual(["aaaa", "a ```b", "bbbbbb", "bbb"]);
  });
});

describe("splitMarkdownSafe: whole-line placement", () => {
  it("places a line with no clean cut whole, alone, even when its scaffolding passes the limit", () => {
    const text = "```\nab\n``````~\ncd\n```";
    const chunks = splitMarkdownSafe(text, 10);
    expect(chunks).toEqual([
      "```\n```",
      "```\nab\n```",
      "```\n\n```",
      "```\n``````~\n```",
      "```\ncd\n```",
      "```\n\n```",
    ]);
    // The one oversize chunk is the whole-placed line plus reopener and closer, nothing else.
    expect(chunks.filter((c) => cp(c) > 10)).toEqual(["```\n``````~\n```"]);
  });

  it("cuts a fence-marker line longer than the limit hard at the limit, not two markers at a time (was 501 chunks)", () => {
    expect(splitMarkdownSafe("`".repeat(5000), 4000)).toEqual(["`".repeat(4000), "`".repeat(1000)]);
    // The issue's case: 40,000 backticks at 1,900 were 19,051 messages; a peer chunker sends 22.
    const flood = splitMarkdownSafe("`".repeat(40_000), 1900);
    expect(flood).toHaveLength(22);
    expect(flood.join("")).toBe("`".repeat(40_000));
    expect(splitMarkdownSafe("~".repeat(40_000), 1900)).toHaveLength(22);
  });

  it("cuts a long marker run two markers before its end, so the remainder is no delimiter", () => {
    const chunks = splitMarkdownSafe(`${"`".repeat(30)}js ${"x".repeat(40)}`, 40);
    expect(chunks[0]).toBe("`".repeat(28));
    expect(chunks[1]!.startsWith("``js")).toBe(true);
    expect(chunks.join("").replaceAll(" ", "")).toBe(`${"`".repeat(30)}js${"x".repeat(40)}`);
  });

  it("keeps the reference's short clean cuts for a short marker run", () => {
    // Three markers then info: one two-character cut, then the remainder no longer opens a fence.
    expect(splitMarkdownSafe("```python-but-longer", 10)[0]).toBe("``");
  });
});

describe("splitMarkdownSafe: whitespace", () => {
  it("keeps leading whitespace and trims trailing whitespace only outside a fence", () => {
    expect(splitMarkdownSafe(`    code block line   \n${"x".repeat(30)}`, 24)).toEqual([
      "    code block line",
      "x".repeat(24),
      "x".repeat(6),
    ]);
    expect(splitMarkdownSafe("```\nab   \ncd   \n```", 14)).toEqual(["```\nab   \n```", "```\ncd   \n```"]);
  });
});

describe("splitMarkdownSafe: tables", () => {
  it("moves a trailing pipe row to the next chunk, keeping a header with its separator", () => {
    const text = `| h1 | h2 |\n|----|----|\n${"| a | b |\n".repeat(6)}`;
    expect(splitMarkdownSafe(text, 33)).toEqual([
      "| h1 | h2 |\n|----|----|",
      "| a | b |\n| a | b |",
      "| a | b |\n| a | b |",
      "| a | b |\n| a | b |\n",
    ]);
    const header = `${"x".repeat(20)}\n| h1 | h2 |\n|---|---|\n| 1 | 2 |`;
    expect(splitMarkdownSafe(header, 36)).toEqual(["x".repeat(20), "| h1 | h2 |\n|---|---|\n| 1 | 2 |"]);
  });
});

describe("splitMarkdownSafe: termination", () => {
  it("terminates on an unbreakable 10k line, a 5000-backtick run and a budget below the scaffolding", () => {
    expect(splitMarkdownSafe("x".repeat(10_000), 100)).toEqual(Array(100).fill("x".repeat(100)));
    const fence = `\`\`\`${"x".repeat(50)}\n${"body\n".repeat(3)}`;
    const chunks = splitMarkdownSafe(fence, 5);
    expect(chunks.length).toBeGreaterThan(10);
    expect(align(fence, chunks)).not.toBeNull();
  });

  it("leaves the final chunk of an unclosed fence open", () => {
    const chunks = splitMarkdownSafe(`\`\`\`\n${"a\n".repeat(20)}`, 12);
    const last = chunks.at(-1)!;
    expect(last.startsWith("```\n")).toBe(true);
    expect([...iterFenceLines(last)].at(-1)![1]).toBe("body");
    for (const chunk of chunks.slice(0, -1)) expect(chunk.endsWith("\n```")).toBe(true);
  });
});

describe("iterFenceSpans", () => {
  it("returns UTF-16 spans a caller can slice, opener through closer line", () => {
    const text = "😀 intro\n```js\nconst a = 1;\n```\noutside\n~~~\nopen to the end";
    const spans = iterFenceSpans(text);
    expect(spans.map(([a, b]) => text.slice(a, b))).toEqual([
      "```js\nconst a = 1;\n```\n",
      "~~~\nopen to the end",
    ]);
  });

  it("agrees with iterFenceLines", () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const inside: string[] = [];
        let pos = 0;
        let open = -1;
        for (const [line, role] of iterFenceLines(text)) {
          const raw = text.slice(
            pos,
            text.indexOf("\n", pos) < 0 ? text.length : text.indexOf("\n", pos) + 1,
          );
          expect(raw.replace(/\r?\n$/, "")).toBe(line);
          if (role === "open") open = pos;
          pos += raw.length;
          if (role === "close") inside.push(text.slice(open, pos));
        }
        if (open >= 0 && inside.length < iterFenceSpans(text).length) inside.push(text.slice(open));
        expect(iterFenceSpans(text).map(([a, b]) => text.slice(a, b))).toEqual(inside);
      }),
    );
  });
});

describe("byte-capped splitting", () => {
  it("chunkUtf8Bytes is lossless and never cuts a code point", () => {
    expect(chunkUtf8Bytes("", 4)).toEqual([]);
    expect(chunkUtf8Bytes("abc", 0)).toEqual(["abc"]);
    expect(chunkUtf8Bytes("中文😀abc", 4)).toEqual(["中", "文", "😀", "abc"]);
    expect(chunkUtf8Bytes("中", 2)).toEqual(["中"]);
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", maxLength: 60 }),
        fc.integer({ min: 1, max: 12 }),
        (text, max) => {
          const chunks = chunkUtf8Bytes(text, max);
          expect(chunks.join("")).toBe(text);
          for (const chunk of chunks) {
            expect(utf8(chunk) <= max || cp(chunk) === 1).toBe(true);
            expect(chunk).not.toMatch(/^[\udc00-\udfff]/);
          }
        },
      ),
    );
  });

  it("truncateUtf8 keeps the longest prefix that fits", () => {
    expect(truncateUtf8("a😀b", 2)).toBe("a");
    expect(truncateUtf8("a😀b", 5)).toBe("a😀");
    expect(truncateUtf8("é", 0)).toBe("é");
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", maxLength: 40 }),
        fc.integer({ min: 1, max: 20 }),
        (text, max) => {
          const cut = truncateUtf8(text, max);
          expect(text.startsWith(cut)).toBe(true);
          expect(utf8(cut)).toBeLessThanOrEqual(max);
          const next = Array.from(text.slice(cut.length))[0];
          if (next !== undefined) expect(utf8(cut + next)).toBeGreaterThan(max);
        },
      ),
    );
  });

  it("splitMarkdownBytes shrinks the character budget and falls back to the UTF-8 floor", () => {
    expect(splitMarkdownBytes("", 16)).toEqual([]);
    expect(splitMarkdownBytes("para one\n\npara two\n\npara three", 16)).toEqual([
      "para one",
      "para two",
      "para three",
    ]);
    expect(splitMarkdownBytes("中文", 0)).toEqual(["中文"]);
    expect(splitMarkdownBytes("中文".repeat(20), 30)).toEqual(Array(4).fill("中文".repeat(5)));
    // A reopener longer than the cap overflows every re-split by the same sliver: bounded, then the floor.
    const opener = `\`\`\`${"x".repeat(4010)}\n${"body\n".repeat(50)}`;
    const floored = splitMarkdownBytes(opener, 4000);
    expect(floored.every((chunk) => utf8(chunk) <= 4000)).toBe(true);
    expect(floored.join("")).toContain("body");
    fc.assert(
      fc.property(anyText, fc.integer({ min: 1, max: 60 }), reserveArb, (text, max, reserve) => {
        const chunks = splitMarkdownBytes(text, max, { reserve });
        if (max - reserve <= 0) return;
        // Only a single code point wider than the cap may exceed it: the floor cannot split one.
        for (const chunk of chunks) expect(utf8(chunk) <= max - reserve || cp(chunk) === 1).toBe(true);
      }),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Properties.
// ---------------------------------------------------------------------------------------------

describe("splitMarkdownSafe properties", () => {
  it("budget: chunks fit limit - reserve unless they hold one line; content never passes the limit", () => {
    fc.assert(
      fc.property(anyText, limitArb, reserveArb, (text, limit, reserve) => {
        const chunks = splitMarkdownSafe(text, limit, { reserve });
        const budget = limit - reserve;
        if (text === "" || limit <= 0 || budget <= 0 || cp(text) <= budget) {
          expect(chunks).toEqual(text === "" ? [] : [text]);
          return;
        }
        const withinBudget = (a: Aligned): boolean =>
          cp(a.content) <= limit &&
          (a.reopened || a.closed || cp(a.chunk) <= limit) &&
          // The documented exception: a single line (or a fragment of one) plus its fence scaffolding.
          (cp(a.chunk) <= budget || !a.content.replace(/\n$/, "").includes("\n"));
        expect(align(text, chunks)).not.toBeNull();
        expect(align(text, chunks, withinBudget)).not.toBeNull();
      }),
      { numRuns: 300 },
    );
  });

  it("prefix stability: a longer prefix reproduces every chunk but the last", () => {
    fc.assert(
      fc.property(anyText, fc.nat(), limitArb, reserveArb, (text, at, limit, reserve) => {
        const prefix = text.slice(0, text.length === 0 ? 0 : at % (text.length + 1));
        const short = splitMarkdownSafe(prefix, limit, { reserve });
        const long = splitMarkdownSafe(text, limit, { reserve });
        expect(long.slice(0, Math.max(0, short.length - 1))).toEqual(short.slice(0, -1));
      }),
      { numRuns: 300 },
    );
  });

  it("no chunk invents a fence when every line fits the limit", () => {
    fc.assert(
      fc.property(
        fc.oneof(anyText, fencyText),
        fc.integer({ min: 1, max: 60 }),
        reserveArb,
        (text, base, reserve) => {
          const limit = Math.max(base, longestLine(text));
          const chunks = splitMarkdownSafe(text, limit, { reserve: Math.min(reserve, limit - 1) });
          // Some reading of the chunks as source slices has every chunk agree with the source's fences.
          expect(align(text, chunks)).not.toBeNull();
          expect(align(text, chunks, (a, last) => fenceDisagreement(text, a, last) === null)).not.toBeNull();
        },
      ),
      { numRuns: 300 },
    );
  });

  it("reassembles: chunks minus scaffolding give back the input, modulo trimmed trailing whitespace", () => {
    fc.assert(
      fc.property(anyText, limitArb, reserveArb, (text, limit, reserve) => {
        expect(align(text, splitMarkdownSafe(text, limit, { reserve }))).not.toBeNull();
      }),
      { numRuns: 300 },
    );
  });

  it("terminates on long pathological input with tiny budgets", () => {
    fc.assert(
      fc.property(
        textOf(PATHOLOGICAL, 1500),
        fc.integer({ min: 1, max: 8 }),
        reserveArb,
        (text, limit, reserve) => {
          const chunks = splitMarkdownSafe(text, limit, { reserve: Math.min(reserve, limit - 1) });
          expect(align(text, chunks)).not.toBeNull();
        },
      ),
      { numRuns: 60 },
    );
  });
});
