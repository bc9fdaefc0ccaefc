/**
 * Markdown -> Telegram-HTML: always parseable by the fake's independent reading of Telegram's rules,
 * display-redacted, and bound to the wire cap without losing text.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  fitTelegramHtml,
  htmlVisibleText,
  markdownToTelegramHtml,
  toTelegramHtml,
} from "../../src/telegram/html.js";
import { parseTelegramHtml } from "../fakes/telegram/html.js";

const KEY = "AKIAIOSFODNN7EXAMPLE";

describe("markdownToTelegramHtml", () => {
  it("converts the common markdown forms", () => {
    expect(markdownToTelegramHtml("**bold** and *it* and `x<y` and ~~gone~~")).toBe(
      "<b>bold</b> and <i>it</i> and <code>x&lt;y</code> and <s>gone</s>",
    );
    expect(markdownToTelegramHtml("# Title\n- one\n> quoted\n> more")).toBe(
      "<b>Title</b>\n• one\n<blockquote>quoted\nmore</blockquote>",
    );
    expect(markdownToTelegramHtml("[site](https://example.com/a?b=1&c=2)")).toBe(
      '<a href="https://example.com/a?b=1&amp;c=2">site</a>',
    );
    expect(markdownToTelegramHtml("```ts\nconst a = 1 < 2;\n```")).toBe(
      '<pre><code class="language-ts">const a = 1 &lt; 2;</code></pre>',
    );
  });

  it("leaves unpaired or intra-word delimiters literal, and never links an unsafe scheme", () => {
    expect(markdownToTelegramHtml("2 * 3 * 4")).toBe("2 * 3 * 4");
    expect(markdownToTelegramHtml("snake_case_name")).toBe("snake_case_name");
    expect(markdownToTelegramHtml("**open but never closed")).toBe("**open but never closed");
    expect(markdownToTelegramHtml("[x](javascript:alert(1))")).not.toContain("<a");
  });

  it("closes a fence a live frame ends inside", () => {
    expect(markdownToTelegramHtml("intro\n```py\nprint(1)")).toBe(
      'intro\n<pre><code class="language-py">print(1)</code></pre>',
    );
  });

  it("always emits HTML Telegram can parse (property)", () => {
    const alphabet = fc.constantFrom(
      "*",
      "_",
      "~",
      "|",
      "`",
      "[",
      "]",
      "(",
      ")",
      "<",
      ">",
      "&",
      "#",
      "-",
      " ",
      "\n",
      "a",
      "b",
      "é",
      "🎉",
      "http://x",
      "```",
    );
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 80 }), (parts) => {
        const html = markdownToTelegramHtml(parts.join(""));
        expect(() => parseTelegramHtml(html)).not.toThrow();
      }),
      { numRuns: 400 },
    );
  });
});

describe("toTelegramHtml (the sink)", () => {
  it.each([
    [`key ${KEY} here`],
    ["key AKIA**IOSFODNN7EXAMPLE** here"],
    ["key **AKIA**IOSFODNN7EXAMPLE here"],
    ["key AKIA`IOSFODNN7EXAMPLE` here"],
    ["key AKIA\u200bIOSFODNN7EXAMPLE here"],
    ["key [AKIA](https://x.example)IOSFODNN7EXAMPLE here"],
    ["key AKIA_IOSFODNN7EXAMPLE_ here"],
  ])("never shows a credential, in the body or its rendering: %s", (source) => {
    const html = toTelegramHtml(source);
    expect(html).not.toContain(KEY);
    expect(parseTelegramHtml(html).replace(/[\u200b-\u200d\u2060\ufeff]/g, "")).not.toContain(KEY);
  });
});

describe("fitTelegramHtml", () => {
  it("re-splits a segment whose escaped form outgrows 4096 UTF-16 units, losing nothing", () => {
    const source = "x <y> & z <w> && v\n".repeat(205); // 3895 code points, ~9000 units once escaped
    const pieces = fitTelegramHtml(source);
    expect(pieces.length).toBeGreaterThan(1);
    for (const p of pieces) {
      expect(p.length).toBeLessThanOrEqual(4096);
      expect(() => parseTelegramHtml(p)).not.toThrow();
    }
    expect(pieces.map(htmlVisibleText).join("").replace(/\s/g, "")).toBe(source.replace(/\s/g, ""));
  });

  it("counts UTF-16 units: astral characters weigh two", () => {
    const source = "😀".repeat(3000); // 3000 code points, 6000 units
    const pieces = fitTelegramHtml(source);
    for (const p of pieces) expect(p.length).toBeLessThanOrEqual(4096);
    expect(pieces.join("").replace(/\s/g, "")).toBe(source);
  });

  it("keeps a suffix's room when asked", () => {
    const pieces = fitTelegramHtml("a".repeat(4090), 50);
    for (const p of pieces) expect(p.length).toBeLessThanOrEqual(4046);
  });
});
