import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalizeDisplay, redactForDisplay } from "../../../src/messaging/security/display-safety.js";
import {
  quietCredentialCut,
  quietExfiltrationCut,
  redactAll,
} from "../../../src/messaging/security/redact.js";
import { quietInEveryReading } from "../../../src/messaging/security/redaction/display-quiet.js";

/**
 * redactForDisplay skips its readings when quietInEveryReading proves none can hold anything. These
 * properties hold the proof to the full pass: wherever the check answers true, every reading is a
 * fixed point of redactAll, and the display pass with the shortcut returns exactly what it returns
 * without it (a redactor that is not `redactAll` itself never takes the shortcut).
 */
const fullPass = (text: string): string => redactAll(text);

/** Pieces of prose plus every way markup can join them into something loud. */
const ATOMS = [
  "the",
  "run",
  " ",
  "\n",
  "\t",
  ".",
  ",",
  ";",
  ":",
  ": ",
  ":\n",
  "-",
  "--",
  "---",
  "|",
  "||",
  "|---|",
  "*",
  "**",
  "_",
  "__",
  "~",
  "~~",
  "`",
  "```",
  "(",
  ")",
  "[",
  "]",
  "](",
  "[docs](https://example.com/a)",
  "[x](https://h.example/p?q=1)",
  "<https://x.example|",
  ">",
  "@",
  "user",
  "1",
  "42",
  "123",
  "456789",
  "ab",
  "Zq9",
  "Kx7",
  "AKIA",
  "IOSF",
  "ODNN7EXAMPLE",
  "IOSFODNN7EXAMPLE",
  "ghp",
  "a1B2c3D4e5F6g7H8i9J0",
  "k1L2m3N4o5P6q7R8s9T0",
  "ey",
  "J",
  "eyJ",
  "h",
  "t",
  "tp",
  "http",
  "s://",
  "sk",
  "sk-",
  "x",
  "o",
  "xox",
  "b-",
  "to",
  "ken",
  "pass",
  "word",
  "sec",
  "ret",
  "api",
  "key",
  "access",
  "private",
  "bear",
  "er",
  "Author",
  "ization",
  "github_pat_",
  "11ABCDEFGHIJ",
  "=",
  "/",
  "+",
  "\\",
  "&#73;",
  "&amp;",
  "\u200b",
  "\u00ad",
  "é",
  "中文",
  "😀",
  "\u0131",
  "\u001b[31m",
];

const textArb = fc
  .array(fc.constantFrom(...ATOMS), { minLength: 1, maxLength: 16 })
  .map((parts) => parts.join(""));

describe("display quiet check", () => {
  it("answers true only where the full display pass changes nothing", () => {
    fc.assert(
      fc.property(textArb, (text) => {
        const slow = redactForDisplay(text, fullPass);
        expect(redactForDisplay(text)).toEqual(slow);
        if (quietInEveryReading(text)) {
          expect(slow).toEqual({ text, changed: false });
          expect(redactAll(text)).toBe(text);
          const settled = canonicalizeDisplay(text);
          expect(redactAll(settled)).toBe(settled);
        }
      }),
      { numRuns: 6000 },
    );
  });

  it("answers true only where every rendering passes quiet.ts's own checks", () => {
    // The renderings, rebuilt here (the check declines links, so none is collapsed): one pass
    // deleting every delimiter, one keeping `_`, and the settled form.
    const once = (t: string): string => t.replace(/(?:[*_~`]|\|\|)+/g, "");
    const keepingUnderscores = (t: string): string => t.replace(/(?:[*~`]|\|\|)+/g, "");
    fc.assert(
      fc.property(textArb, (text) => {
        if (!quietInEveryReading(text)) return;
        for (const reading of [text, once(text), keepingUnderscores(text), canonicalizeDisplay(text)]) {
          expect(quietCredentialCut(reading, 0, true)).toBe(reading.length);
          expect(quietExfiltrationCut(reading, 0, true)).toBe(reading.length);
        }
      }),
      { numRuns: 6000 },
    );
  });

  it("takes the shortcut for prose, lists, code and tables", () => {
    for (const prose of [
      "The deploy finished in **42 s**; see the run for details.",
      "- `npm test` passed\n- _lint_ clean\n- cache hit ratio 93%",
      '```ts\nconst client = new Client({ region: "eu-west-1" });\nawait client.send(cmd);\n```',
      "| service | status |\n|---|---|\n| api | ok |\n| worker | degraded |",
      "Note: it works. 日本語 🚀",
    ])
      expect(quietInEveryReading(prose)).toBe(true);
  });

  it.each([
    ["a key split by emphasis", "AKIA**IOSFODNN7EXAMPLE**"],
    ["a key name split by emphasis", "pass**word**=hunter2"],
    ["a key name ending at a marker", "token*x"],
    ["a Telegram id joined by a marker", "1234*56:x"],
    ["a digit before a marker and a colon", "port 8*: 80"],
    ["dashes joined by code markers", "--`---`"],
    ["a url split by markup", "ht**tp**s://x"],
    ["a JWT prefix split by a spoiler", "ey||J"],
    ["a link", "[docs](https://example.com)"],
    ["an entity", "AKIA&#73;OSF"],
    ["an escape", "ghp\\_x"],
    ["a format character", "AKIA\u200bIOSF"],
    ["ANSI", "\u001b[31mred"],
    ["a colon ending the text behind markers", "note:**"],
    ["runs joined by underscores", "github_pat_11ABCDE*FGHIJ_KLMNOPQRSTUV_WXYZabcdefgh_ijklmnopq"],
  ])("declines %s", (_name, text) => {
    expect(quietInEveryReading(text)).toBe(false);
  });
});
