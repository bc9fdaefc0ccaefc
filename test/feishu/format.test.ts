/**
 * Feishu's bodies against both of its caps: 4,000 code points (the spec's) and the `post` request
 * size in UTF-8 bytes, counted on the request itself (the md is JSON inside JSON, so a quote or a
 * backslash costs four bytes). At Feishu's real caps the code-point cap binds first for any text;
 * the byte bound is still checked on every part, and a tighter byte cap shows it holding: every part
 * within both, fences balanced, no surrogate pair cut, nothing lost.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type BodyCaps,
  FEISHU_CAPS,
  FEISHU_MAX_CHARS,
  FEISHU_POST_MAX_BYTES,
  feishuBodies,
  requestBytes,
} from "../../src/feishu/format.js";
import { iterFenceLines } from "../../src/messaging/text/split.js";

const points = (s: string) => Array.from(s).length;
/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function expectWithin(parts: string[], caps: BodyCaps): void {
  for (const [i, md] of parts.entries()) {
    expect(points(md), `part ${i} code points`).toBeLessThanOrEqual(caps.maxChars);
    expect(requestBytes(md), `part ${i} request bytes`).toBeLessThanOrEqual(caps.maxBytes);
    expect(md, `part ${i} keeps its surrogate pairs`).not.toMatch(LONE_SURROGATE);
    const roles = [...iterFenceLines(md)].map(([, role]) => role);
    expect(roles.filter((r) => r === "open").length, `part ${i} fences`).toBe(
      roles.filter((r) => r === "close").length,
    );
  }
}

/** The text's content with fence lines and whitespace dropped: what a split may not lose or reorder. */
const content = (md: string) =>
  md
    .split("\n")
    .filter((line) => !/^\s*```/.test(line))
    .join("")
    .replace(/\s+/g, "");

describe("Feishu bodies", () => {
  it("at the real caps the code-point cap binds first, even for the costliest characters", () => {
    // A quote or backslash is 4 bytes in the request, an emoji 4: 4,000 of them stay under 30,000.
    for (const ch of ['"', "\\", "😀", "中"]) {
      const md = ch.repeat(FEISHU_MAX_CHARS);
      expect(requestBytes(md)).toBeLessThanOrEqual(FEISHU_POST_MAX_BYTES);
      const parts = feishuBodies(ch.repeat(3 * FEISHU_MAX_CHARS + 17));
      expect(parts.length).toBeGreaterThanOrEqual(4);
      expectWithin(parts, FEISHU_CAPS);
      expect(parts.join("")).toBe(ch.repeat(3 * FEISHU_MAX_CHARS + 17));
    }
  });

  it("under a byte cap tighter than the code points allow, every part fits both, fence-safe, nothing lost", () => {
    const caps: BodyCaps = { maxChars: 400, maxBytes: 900 };
    const piece = fc.constantFrom(
      "plain words here ",
      '"quoted" ',
      "back\\slash ",
      "中文句子，",
      "emoji 😀🎉 ",
      "\n\n",
      '\n```ts\nconst x = "y";\n',
      "\n```\n",
      "- a list item\n",
    );
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 300 }), (pieces) => {
        const md = pieces.join("");
        const parts = feishuBodies(md, caps);
        expectWithin(parts, caps);
        expect(content(parts.join("\n"))).toBe(content(md));
      }),
      { numRuns: 150 },
    );
  });

  it("a single unbreakable line past the byte cap is cut by code points, never inside a pair", () => {
    const caps: BodyCaps = { maxChars: 4000, maxBytes: 1000 };
    const line = `${'"😀'.repeat(700)}end`;
    const parts = feishuBodies(line, caps);
    expect(parts.length).toBeGreaterThan(1);
    expectWithin(parts, caps);
    expect(parts.join("")).toBe(line);
  });
});
