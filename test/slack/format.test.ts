/**
 * Slack's text floors as pure functions: mrkdwn escapes `&<>` so model text forms no control
 * sequence and no hidden link target; streamed Markdown is defanged instead; redaction runs on the
 * rendered form first; the sink's last-resort cut counts code points and splits no surrogate pair
 * nor an `&…;` entity; inbound mrkdwn decodes to plain text.
 */
import { describe, expect, it } from "vitest";
import {
  codePointLength,
  defangSlack,
  fitCap,
  markdownSafe,
  mrkdwnSafe,
  plainFromMrkdwn,
  toMrkdwn,
} from "../../src/slack/format.js";

describe("slack text floors", () => {
  it("mrkdwn: control sequences from model text are inert, link targets are shown", () => {
    const out = mrkdwnSafe(
      "Hey <!channel> and <@U0AAAAAAA>, see <https://evil.example|the docs> & [click](https://x.example/a)",
    );
    expect(out).not.toMatch(/<[!@#]|<https?:/);
    expect(out).toContain("&lt;!channel&gt;");
    expect(out).toContain("&amp;");
    expect(out).toContain("click (https://x.example/a)");
  });

  it("mrkdwn: Markdown emphasis, headings, lists and fences in Slack's grammar", () => {
    expect(toMrkdwn("# Title\n**bold** and *it* and ~~gone~~\n- item\n```ts\nif (a < b) {}\n```")).toBe(
      "*Title*\n*bold* and _it_ and ~gone~\n• item\n```\nif (a &lt; b) {}\n```",
    );
  });

  it("streamed Markdown: `<` that could open a control sequence is broken, the rest kept", () => {
    expect(defangSlack("a <!here> <@U1> <#C1> <https://x|y> a<b")).toBe(
      "a <\u200b!here> <\u200b@U1> <\u200b#C1> <\u200bhttps://x|y> a<b",
    );
    const key = "AKIAQ7ZR3M5TXW2KP9VB";
    expect(markdownSafe(`key **${key.slice(0, 10)}**${key.slice(10)}`).replace(/\*/g, "")).not.toContain(
      key.slice(0, 12),
    );
  });

  it("a key disguised by mrkdwn's own emphasis is redacted in the rendered form", () => {
    const key = "AKIAQ7ZR3M5TXW2KP9VB";
    const out = mrkdwnSafe(`**${key.slice(0, 8)}**${key.slice(8)}`);
    expect(out.replace(/[*_~]/g, "")).not.toContain(key);
  });

  it("the last-resort cut counts code points and splits no surrogate pair nor entity", () => {
    const emoji = "😀".repeat(5);
    const parts = fitCap(emoji, 2);
    expect(parts).toEqual(["😀😀", "😀😀", "😀"]);
    const entity = fitCap("abcd&amp;efg", 6);
    expect(entity[0]).toBe("abcd");
    expect(entity.join("")).toBe("abcd&amp;efg");
    for (const p of fitCap("x😀".repeat(3000))) expect(codePointLength(p)).toBeLessThanOrEqual(3900);
  });

  it("inbound mrkdwn decodes to what the user typed", () => {
    expect(
      plainFromMrkdwn("ask <@U123> in <#C9|general> about <https://a.example|this> &lt;x&gt; &amp;"),
    ).toBe("ask @U123 in #general about this (https://a.example) <x> &");
  });
});
