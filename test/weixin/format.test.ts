/**
 * Weixin's bodies: every part within the cap in code points (4,000 for real; a small cap makes the
 * property quick), fences balanced in each part, no surrogate pair cut, nothing lost or reordered;
 * tables pass through native; the display floor applies to each part.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { iterFenceLines } from "../../src/messaging/text/split.js";
import { WEIXIN_MAX_CHARS, weixinBodies } from "../../src/weixin/format.js";

const points = (s: string) => Array.from(s).length;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function expectWithin(parts: string[], maxChars: number): void {
  for (const [i, md] of parts.entries()) {
    expect(points(md), `part ${i} code points`).toBeLessThanOrEqual(maxChars);
    expect(md, `part ${i} keeps its surrogate pairs`).not.toMatch(LONE_SURROGATE);
    const roles = [...iterFenceLines(md)].map(([, role]) => role);
    expect(roles.filter((r) => r === "open").length, `part ${i} fences`).toBe(
      roles.filter((r) => r === "close").length,
    );
  }
}

const content = (md: string) =>
  md
    .split("\n")
    .filter((line) => !/^\s*```/.test(line))
    .join("")
    .replace(/\s+/g, "");

describe("Weixin bodies", () => {
  it("at the real cap: 4,000 code points per message, emoji never split", () => {
    for (const ch of ["😀", "中", "a"]) {
      const md = ch.repeat(3 * WEIXIN_MAX_CHARS + 17);
      const parts = weixinBodies(md);
      expect(parts.length).toBeGreaterThanOrEqual(4);
      expectWithin(parts, WEIXIN_MAX_CHARS);
      expect(parts.join("")).toBe(md);
    }
  });

  it("any mix of prose, fences, tables and emoji: within the cap, fence-safe, nothing lost", () => {
    const piece = fc.constantFrom(
      "plain words here ",
      "中文句子，",
      "emoji 😀🎉 ",
      "\n\n",
      "\n```ts\nconst x = 1;\n",
      "\n```\n",
      "\n| a | b |\n|---|---|\n| 1 | 2 |\n",
      "- a list item\n",
      "**bold** and `code` ",
    );
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 300 }), (pieces) => {
        const md = pieces.join("");
        const parts = weixinBodies(md, 400);
        expectWithin(parts, 400);
        expect(content(parts.join("\n"))).toBe(content(md));
      }),
      { numRuns: 150 },
    );
  });

  it("a table passes through as Markdown (iLink renders it)", () => {
    const table = "| name | qty |\n|---|---|\n| apples | 3 |";
    expect(weixinBodies(`Stock:\n\n${table}`)).toEqual([`Stock:\n\n${table}`]);
  });
});
