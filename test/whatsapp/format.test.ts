/**
 * Markdown into WhatsApp's dialect: the shared reductions first (thinking, tables to labelled
 * bullets, mermaid), then the line rules (bold, italic, strike, headings, links), inline code
 * byte-exact, and the screen on the form WhatsApp shows, after every rewrite.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { convertLine, renderChunks, toWhatsApp } from "../../src/whatsapp/format.js";

const KEY = "AKIAQ7ZR3M5TXW2KP9VB";

describe("the dialect", () => {
  it.each([
    ["**bold** and *italic* and _also_ and ~~gone~~", "*bold* and _italic_ and _also_ and ~gone~"],
    ["## A heading", "*A heading*"],
    ["* item\n+ other", "- item\n- other"],
    [
      "see [the docs](https://x.example/a_b) or <https://y.example>",
      "see the docs (https://x.example/a_b) or <https://y.example>",
    ],
    ["[https://x.example](https://x.example)", "https://x.example"],
    ["`/tmp/__init__.py` and `**not bold**`", "`/tmp/__init__.py` and `**not bold**`"],
    ["**`abc`** around code", "*`abc`* around code"],
    ["a * b * c and 2*3*4", "a * b * c and 2*3*4"],
  ])("%j", (input, output) => {
    expect(input.split("\n").map(convertLine).join("\n")).toBe(output);
  });

  it("fences lose their info string and keep their body verbatim; ~~~ and long fences too", () => {
    expect(toWhatsApp("```ts\nconst **a** = 1;\n```")).toBe("```\nconst **a** = 1;\n```");
    expect(toWhatsApp("~~~\n_x_\n~~~")).toBe("```\n_x_\n```");
    expect(toWhatsApp("````md\n```\ninner\n```\n````").split("\n")[0]).toBe("```");
    // An unclosed fence is closed: no bubble opens a monospace block that never ends.
    expect(toWhatsApp("```\nstill open")).toBe("```\nstill open\n```");
  });

  it("tables become labelled bullets, thinking goes, mermaid becomes arrows under a heading", () => {
    expect(toWhatsApp("| a | b |\n|---|---|\n| 1 | 2 |")).toBe("- *a:* 1 | *b:* 2");
    expect(toWhatsApp("<thinking>secret plan</thinking>The answer.")).toBe("The answer.");
    expect(toWhatsApp("```mermaid\ngraph TD\nA[Start] --> B[Done]\n```")).toBe("*Diagram*\n  Start → Done");
    expect(toWhatsApp('```mermaid\npie\n"a": 1\n```')).toBe('*Diagram*\n```\npie\n"a": 1\n```');
  });

  it("the screen runs after every rewrite: a key joined by a deleted span or split by emphasis is caught", () => {
    for (const smuggled of [
      `AKIA<thinking>x</thinking>${KEY.slice(4)}`,
      `AKIA**${KEY.slice(4, 8)}**${KEY.slice(8)}`,
      `AKIA__${KEY.slice(4, 8)}__${KEY.slice(8)}`,
      `# AKIA~~${KEY.slice(4, 8)}~~${KEY.slice(8)}`,
    ]) {
      const out = toWhatsApp(`key: ${smuggled} end`);
      expect(out).not.toContain(KEY);
      expect(out.replace(/[*_~`]/g, "")).not.toContain(KEY);
      expect(out).toContain("[REDACTED: credential]");
    }
  });

  it("chunks fit the cap (minus a reserve), in code points, and never cut a surrogate pair", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("😀", "a", " ", "\n", "```\n", "**b** ", "中"), { maxLength: 9000 }),
        (parts) => {
          const chunks = renderChunks(parts.join(""), { reserve: 100 });
          for (const c of chunks) {
            expect(Array.from(c).length).toBeLessThanOrEqual(4096 - 100);
            expect(c).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
          }
        },
      ),
      { numRuns: 30 },
    );
  });
});
