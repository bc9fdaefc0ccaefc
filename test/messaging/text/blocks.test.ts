/**
 * reduceBlocks: prose through the table reduction and the line rule, a fence's body untouched, a
 * mermaid fence as arrows (or its body when it draws none), an unclosed fence closed at the end.
 */
import { describe, expect, it } from "vitest";
import { reduceBlocks } from "../../../src/messaging/text/blocks.js";

const rules = {
  line: (l: string) => l.toUpperCase(),
  code: (body: readonly string[]) => ["<code>", ...body, "</code>"],
  diagram: (arrows: readonly string[] | null, body: readonly string[]) =>
    arrows ? ["<diagram>", ...arrows] : ["<raw>", ...body],
};

describe("reduceBlocks", () => {
  it("rewrites prose, keeps code bodies verbatim, reduces tables and diagrams", () => {
    const text =
      "intro\n| a | b |\n|---|---|\n| 1 | 2 |\n```py\n  x = **1**\n```\n```mermaid\ngraph LR\nA-->B\n```\nend";
    const out = reduceBlocks(text, rules).split("\n");
    expect(out.slice(0, 5)).toEqual(["INTRO", "- **A:** 1 | **B:** 2", "<code>", "  x = **1**", "</code>"]);
    expect(out[5]).toBe("<diagram>");
    expect(out.at(-1)).toBe("END");
  });

  it("a mermaid fence that draws nothing comes back as its body; an unclosed fence is closed", () => {
    expect(reduceBlocks("```mermaid\nnot a graph\n```", rules)).toBe("<raw>\nnot a graph");
    expect(reduceBlocks("text\n```\nopen code", rules)).toBe("TEXT\n<code>\nopen code\n</code>");
  });
});
