/**
 * What an iMessage shows: markdown flattened to plain text (code verbatim, options numbered), then
 * split last on the flat text at 4,000 code points (paragraph, line, space, then a hard cut at a
 * grapheme boundary; CJK reaches it), and the display-form screen on the flat text at the sink.
 */
import { describe, expect, it } from "vitest";
import { IMESSAGE_MAX_CHARS, splitFlat } from "../../src/imessage/chunks.js";
import { toPlainText } from "../../src/imessage/plaintext.js";
import { codePointLength } from "../../src/messaging/security/redact.js";

const KEY = "AKIAQ7ZR3M5TXW2KP9VB";
const graphemes = (s: string) =>
  [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(s)].map((g) => g.segment);

describe("flat text", () => {
  it("drops the markup a bubble would show as litter, and keeps fenced code byte for byte", () => {
    const code = "def f(x):\n    return x**2  # *not* emphasis, __init__\n\n\tindented\t\n";
    const md = `# Title\n\n**bold** and _it_ and ~~gone~~, [docs](https://example.com/a) and \`a*b*c\`\n\n* one\n+ two\n\n\`\`\`python\n${code}\`\`\`\n\n<thinking>secret plan</thinking>after`;
    const flat = toPlainText(md);
    expect(flat).toContain("Title\n");
    expect(flat).not.toContain("# Title");
    expect(flat).toContain("bold and it and gone, docs (https://example.com/a) and a*b*c");
    expect(flat).toContain("• one\n• two");
    expect(flat).toContain(code.trimEnd());
    expect(flat).not.toContain("```");
    expect(flat).not.toContain("secret plan");
  });

  it("a table becomes labelled lines, never a pipe grid", () => {
    const flat = toPlainText("| name | size |\n|---|---|\n| a | 1 |\n| b | 2 |");
    expect(flat).toBe("• name: a | size: 1\n• name: b | size: 2");
  });

  it("a key that flattening would join is redacted on the flat form", () => {
    for (const md of [
      `AKIA**Q7ZR**3M5TXW2KP9VB`,
      `AKIA<!-- x -->Q7ZR3M5TXW2KP9VB`,
      `AKIA\`Q7ZR3M5TXW2KP9VB\``,
    ]) {
      const flat = toPlainText(md);
      expect(flat.replace(/[\s*`]/g, ""), md).not.toContain(KEY);
    }
  });
});

describe("splitting the flat text", () => {
  it("every message within 4,000 code points; paragraph before line before space", () => {
    const para = "word ".repeat(700).trim();
    const parts = splitFlat(`${para}\n\n${para}`);
    expect(parts).toEqual([para, para]);
    const lines = Array.from({ length: 200 }, (_, i) => `line ${i} ${"x".repeat(30)}`).join("\n");
    for (const part of splitFlat(lines)) {
      expect(codePointLength(part)).toBeLessThanOrEqual(IMESSAGE_MAX_CHARS);
      expect(part.startsWith("line ")).toBe(true);
    }
  });

  it("CJK reaches the hard cut, which never splits a grapheme cluster", () => {
    const cjk = "漢字かな交じり文".repeat(1_200);
    const parts = splitFlat(cjk);
    expect(parts.length).toBeGreaterThan(2);
    expect(parts.join("")).toBe(cjk);
    const emoji = "👍🏽🇦🇺é".repeat(3_000);
    const cut = splitFlat(emoji);
    expect(cut.join("")).toBe(emoji);
    for (const part of cut) {
      expect(codePointLength(part)).toBeLessThanOrEqual(IMESSAGE_MAX_CHARS);
      // Every piece is whole clusters: re-segmenting the join gives the same clusters as the pieces.
      expect(graphemes(part).every((g) => ["👍🏽", "🇦🇺", "é"].includes(g))).toBe(true);
    }
  });

  it("a key straddling a cut never reaches a message whole or in halves that rejoin", () => {
    const text = `${"a".repeat(IMESSAGE_MAX_CHARS - 10)}${KEY}${"b".repeat(100)}`;
    const parts = splitFlat(text);
    for (const part of parts) {
      expect(codePointLength(part)).toBeLessThanOrEqual(IMESSAGE_MAX_CHARS);
      expect(part).not.toContain(KEY);
    }
    expect(parts.join("")).not.toContain(KEY);
    expect(parts.join("").includes("AKIAQ7ZR3M") && parts.join("").includes("TXW2KP9VB")).toBe(false);
  });

  it("code inside a long answer is kept verbatim across the split", () => {
    const code = Array.from({ length: 300 }, (_, i) => `    call(${i}, "x  y")`).join("\n");
    const md = `${"Intro. ".repeat(400)}\n\n\`\`\`\n${code}\n\`\`\`\n`;
    const parts = splitFlat(toPlainText(md));
    const lines = parts.join("\n").split("\n");
    for (const line of code.split("\n")) expect(lines).toContain(line);
  });
});
