import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  canonicalizeDisplay,
  decodeCharacterReferences,
  displayReadings,
  dropFormatChars,
  joinsToACredential,
  READINGS,
  type Redactor,
  redactForDisplay,
  safeSplitOffset,
  seversACredential,
  stripAnsi,
} from "../../../src/messaging/security/display-safety.js";
import { REDACTION_MARKER, redactAll } from "../../../src/messaging/security/index.js";

/**
 * A small stand-in for the shared redactor, so the display logic is pinned independently of which
 * patterns src/messaging/security ships. Anchored on both sides, as real credential patterns are.
 */
const PATTERNS = [
  /(?<![A-Za-z0-9_.-])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9_-])/g,
  /(?<![A-Za-z0-9_.-])ghp_[A-Za-z0-9]{36}(?![A-Za-z0-9_-])/g,
];
const toy: Redactor = (text) => PATTERNS.reduce((out, re) => out.replace(re, REDACTION_MARKER), text);

const AWS = "AKIAIOSFODNN7EXAMPLE";

describe("stripAnsi", () => {
  it("removes SGR colours and any other CSI sequence", () => {
    expect(stripAnsi("\u001b[31mred\u001b[0m \u001b[2Kline\u001b[1;4m!")).toBe("red line!");
  });

  it("leaves an OSC sequence alone, as the original does", () => {
    expect(stripAnsi("\u001b]0;title\u0007text")).toBe("\u001b]0;title\u0007text");
  });
});

describe("dropFormatChars", () => {
  it("drops every Cf character and nothing visible", () => {
    expect(dropFormatChars("a\u200bb\u200cc\u200dd\u2060e\ufefff\u00adg\u202eh")).toBe("abcdefgh");
    expect(dropFormatChars("e\u0301 中文 😀")).toBe("e\u0301 中文 😀");
  });
});

describe("canonicalizeDisplay", () => {
  it("collapses Markdown and Slack links to their label", () => {
    expect(canonicalizeDisplay("[AKIA](https://x)REST and <https://y|label>")).toBe("AKIAREST and label");
  });

  it("deletes emphasis, code, strike and spoiler delimiters, but not a lone pipe", () => {
    expect(canonicalizeDisplay("**b** _i_ `c` ~~s~~ ||sp|| a|b")).toBe("b i c s sp a|b");
  });

  it("drops format characters last, so *ZWSP* still reads as delimiters", () => {
    expect(canonicalizeDisplay("AKIA*\u200b*IOSF")).toBe("AKIAIOSF");
  });

  it("is idempotent where one pass creates new syntax", () => {
    for (const input of ["[a]*(b)", "|*|", "[a]\u200b(b)", "[[a](b)](c)"]) {
      const once = canonicalizeDisplay(input);
      expect(canonicalizeDisplay(once)).toBe(once);
    }
    expect(canonicalizeDisplay("[a]*(b)")).toBe("a");
  });

  it("stays fast and idempotent on adversarial nesting", () => {
    const nested = `${"[".repeat(5_000)}x${"](u)".repeat(5_000)}`;
    const started = Date.now();
    const once = canonicalizeDisplay(nested);
    expect(canonicalizeDisplay(once)).toBe(once);
    expect(canonicalizeDisplay(`${"[a](".repeat(50_000)}x`).length).toBe(200_001);
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

describe("redactForDisplay", () => {
  it("leaves clean text untouched and says so", () => {
    expect(redactForDisplay("**bold** and [a link](https://x)", toy)).toEqual({
      text: "**bold** and [a link](https://x)",
      changed: false,
    });
  });

  it("keeps markup when the literal scan already catches the key", () => {
    expect(redactForDisplay(`**${AWS}** is the key`, toy)).toEqual({
      text: `**${REDACTION_MARKER}** is the key`,
      changed: true,
    });
  });

  it.each([
    ["emphasis inside the key", "AKIA**IOSFODNN7EXAMPLE**"],
    ["a link whose label and tail join", "[AKIA](https://x)IOSFODNN7EXAMPLE"],
    ["a Slack link", "<https://x|AKIA>IOSFODNN7EXAMPLE"],
    ["a spoiler", "AKIA||IOSFODNN7EXAMPLE||"],
    ["a zero-width space", "AKIA\u200bIOSFODNN7EXAMPLE"],
    ["a soft hyphen", "AKIAIOSF\u00adODNN7EXAMPLE"],
    ["ANSI colours", "AKIA\u001b[31mIOSFODNN7EXAMPLE\u001b[0m"],
  ])("redacts a key reassembled by %s", (_how, input) => {
    const { text, changed } = redactForDisplay(input, toy);
    expect(changed).toBe(true);
    expect(canonicalizeDisplay(text)).not.toContain(AWS);
    expect(text).toContain(REDACTION_MARKER);
  });

  it("catches an underscore key split by markup, which the original's two readings miss", () => {
    // Deleting every `_` turns ghp_ into ghp, so only a reading that keeps `_` sees this key.
    const { text, changed } = redactForDisplay("see gh**p_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8**", toy);
    expect(changed).toBe(true);
    expect(text).toBe(`see ${REDACTION_MARKER}`);
  });

  it("does not count stripping ANSI alone as a change", () => {
    expect(redactForDisplay("\u001b[1mbold\u001b[0m", toy)).toEqual({ text: "bold", changed: false });
  });

  it("is a fixed point under every reading", () => {
    const inputs = ["AKIA**IOSFODNN7EXAMPLE** and [ghp_a1B2c3D4e5F6g7H8i9J](u)0k1L2m3N4o5P6q7R8", "x"];
    for (const input of inputs) {
      const { text } = redactForDisplay(input, toy);
      expect(redactForDisplay(text, toy)).toEqual({ text, changed: false });
      for (const view of [text, dropFormatChars(text), canonicalizeDisplay(text)])
        expect(toy(view)).toBe(view);
    }
  });

  it("withholds everything rather than loop on a redactor that never settles", () => {
    let calls = 0;
    const restless: Redactor = (text) => {
      calls += 1;
      return `${text.replace(/\*/g, "")}*`;
    };
    expect(redactForDisplay("a", restless)).toEqual({ text: REDACTION_MARKER, changed: true });
    expect(calls).toBeLessThan(1_000);
  });

  it("uses the shared redactAll by default", () => {
    expect(redactForDisplay("AKIA**IOSFODNN7EXAMPLE**").text).toBe(
      redactForDisplay(`AKIA**IOSFODNN7EXAMPLE**`, redactAll).text,
    );
    expect(redactForDisplay("AKIA**IOSFODNN7EXAMPLE**").text).not.toContain("IOSFODNN7EXAMPLE");
  });
});

describe("joinsToACredential / seversACredential", () => {
  it("flags a cut straight through a key, and not a cut between words", () => {
    expect(joinsToACredential("key AKIAIOSF", "ODNN7EXAMPLE end", toy)).toBe(true);
    expect(joinsToACredential(`key ${AWS} `, "end", toy)).toBe(false);
  });

  it("flags halves that markup only joins once rendered", () => {
    expect(joinsToACredential("AKIA**IOSF", "ODNN7EXAMPLE**", toy)).toBe(true);
  });

  it("reads each side alone too: a cut inside a link's url keeps the url on screen", () => {
    // Joined, the link completes and its url (the key) vanishes; on screen each half is plain text.
    expect(joinsToACredential("[l](https://x/AKIAIOSF", "ODNN7EXAMPLE)", toy)).toBe(true);
  });

  it("flags a key next to an unpaired delimiter, which the original's readings miss", () => {
    // Rendered, a lone `**` stays literal, so the reader sees the key flush against it.
    expect(joinsToACredential("AKIAIOSF", "ODNN7EXAMPLE**x", toy)).toBe(true);
  });

  it("answers false for one piece, and sees a key whose link markup spans three", () => {
    expect(seversACredential([`${AWS}`], toy)).toBe(false);
    const pieces = ["AKIA[IOSFOD", "NN7EXAMPLE](http://host/", "long-target)"];
    expect(seversACredential(pieces, toy)).toBe(true);
  });

  it("grades the delivered form too when given one", () => {
    const pieces = ["AKIAIOSF\n\n", "   ODNN7EXAMPLE"];
    expect(seversACredential(pieces, toy)).toBe(false);
    expect(seversACredential(pieces, toy, (piece) => piece.trim())).toBe(true);
  });
});

describe("safeSplitOffset", () => {
  it("takes the limit in prose, and the whole text when it fits", () => {
    expect(safeSplitOffset("hello there world", 6, toy)).toBe(6);
    expect(safeSplitOffset("short", 10, toy)).toBe(5);
    expect(safeSplitOffset("anything", 0, toy)).toBe(0);
  });

  it("counts the limit in code points and answers a UTF-16 index safe to slice at", () => {
    expect(safeSplitOffset("😀😀😀 tail", 2, toy)).toBe(4);
    expect(safeSplitOffset("😀😀😀", 3, toy)).toBe(6);
  });

  it("steps back exponentially out of a key, and answers 0 when every sample is unsafe", () => {
    const text = `word ${AWS} tail`;
    const cut = safeSplitOffset(text, 12, toy);
    expect(cut).toBeLessThanOrEqual(5);
    expect(joinsToACredential(text.slice(0, cut), text.slice(cut), toy)).toBe(false);
    expect(safeSplitOffset(`${AWS} tail`, 10, toy)).toBe(0);
  });
});

// ── properties ──

interface KeyKind {
  name: string;
  key: fc.Arbitrary<string>;
  /** Underscore emphasis can only be planted in a key whose own characters include no `_`. */
  underscoreMarkers: boolean;
}

const alnum = (length: number, upperOnly = false): fc.Arbitrary<string> =>
  fc.string({
    unit: fc.constantFrom(
      ...(upperOnly
        ? "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
        : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
      ).split(""),
    ),
    minLength: length,
    maxLength: length,
  });

const KINDS: KeyKind[] = [
  { name: "aws", key: alnum(16, true).map((s) => `AKIA${s}`), underscoreMarkers: true },
  { name: "github", key: alnum(36).map((s) => `ghp_${s}`), underscoreMarkers: false },
  { name: "anthropic", key: alnum(93).map((s) => `sk-ant-api03-${s}AA`), underscoreMarkers: true },
];

const SPLITTERS = [
  "**",
  "*",
  "`",
  "~~",
  "||",
  "\u200b",
  "\u200d",
  "\u2060",
  "\ufeff",
  "\u00ad",
  "\u001b[31m",
  "\u001b[0m",
];
const UNDERSCORE_SPLITTERS = ["_", "__"];
const WORDS = fc.array(fc.constantFrom("deploy", "the", "key", "is", "ok", "note:", "🚀", "中文"), {
  maxLength: 4,
});

/** A key with splitters planted between its characters and optionally a link around one slice. */
function planted(kind: KeyKind): fc.Arbitrary<{ text: string; key: string }> {
  const splitters = kind.underscoreMarkers ? [...SPLITTERS, ...UNDERSCORE_SPLITTERS] : SPLITTERS;
  return fc
    .record({
      key: kind.key,
      inserts: fc.array(fc.tuple(fc.nat(), fc.constantFrom(...splitters)), { maxLength: 6 }),
      link: fc.option(fc.tuple(fc.nat(), fc.nat(), fc.boolean())),
      before: WORDS,
      after: WORDS,
    })
    .map(({ key, inserts, link, before, after }) => {
      const chars = Array.from(key);
      const slots: string[][] = chars.map(() => []);
      slots.push([]);
      for (const [at, splitter] of inserts) slots[at % slots.length]!.push(splitter);
      if (link) {
        const [a, b, slack] = link;
        const [from, to] = [a % slots.length, b % slots.length].sort((x, y) => x - y) as [number, number];
        slots[from]!.push(slack ? "<https://x.example|" : "[");
        slots[to]!.unshift(slack ? ">" : "](https://x.example/p)");
      }
      const body = chars.map((c, i) => slots[i]!.join("") + c).join("") + slots[chars.length]!.join("");
      return { text: [...before, body, ...after].join(" "), key };
    });
}

/** What a reader could see of `text`, independently of the module under test. */
function reassembled(text: string, dropUnderscores: boolean): string {
  let out = text.replace(/\u001b\[[0-?]*[ -/]*[@-~]/g, "").replace(/\p{Cf}/gu, "");
  for (let previous = ""; previous !== out; ) {
    previous = out;
    out = out.replace(/\[([^[\]\n]*)\]\([^()\n]*\)/g, "$1").replace(/<[^<>|\n]*\|([^<>\n]*)>/g, "$1");
  }
  return out.replace(dropUnderscores ? /[*_~`|]/g : /[*~`|]/g, "");
}

describe("properties", () => {
  it.each(KINDS.map((k) => [k.name, k] as const))(
    "the shared redactor recognises a plain %s key (precondition of the next property)",
    (_name, kind) => {
      fc.assert(
        fc.property(kind.key, (key) => redactAll(`x ${key} y`).includes(key) === false),
        {
          numRuns: 50,
        },
      );
    },
  );

  it.each(KINDS.map((k) => [k.name, k] as const))(
    "no planted %s key survives in any rendered form of the output",
    (_name, kind) => {
      fc.assert(
        fc.property(planted(kind), ({ text, key }) => {
          for (const redactor of [redactAll, toy]) {
            if (redactor === toy && kind.name === "anthropic") continue;
            const out = redactForDisplay(text, redactor).text;
            expect(reassembled(out, kind.underscoreMarkers)).not.toContain(key);
            expect(reassembled(out, false)).not.toContain(key);
          }
        }),
        { numRuns: 300 },
      );
    },
  );

  const markupHeavy = fc.string({
    unit: fc.constantFrom(
      "[",
      "]",
      "(",
      ")",
      "<",
      ">",
      "|",
      "*",
      "_",
      "~",
      "`",
      "a",
      "b",
      " ",
      "\n",
      "\u200b",
    ),
    maxLength: 40,
  });

  it("displayReadings gives exactly the distinct forms of every reading", () => {
    // Markup, links, escapes, references and format characters, where the generator's shortcuts
    // (forms skipped because they cannot differ, forms computed late) could go wrong.
    const adversarial = fc
      .array(
        fc.constantFrom(
          "[a](b)",
          "[a][r]",
          "<u|l>",
          "](",
          "**",
          "__",
          "_",
          "~~",
          "`",
          "||",
          "|",
          "\\_",
          "\\*",
          "&amp;",
          "&#95;",
          "&#x2A;",
          "&#8203;",
          "&shy;",
          "\u200b",
          "ghp_",
          "AKIA",
          "IOSFODNN7EXAMPLE",
          "[REDACTED: credential]",
          " ",
          "\n",
          "x",
        ),
        { maxLength: 14 },
      )
      .map((parts) => parts.join(""));
    const arb = fc.oneof(adversarial, markupHeavy, fc.string({ unit: "grapheme", maxLength: 40 }));
    fc.assert(
      fc.property(arb, (text) => {
        expect(new Set(displayReadings(text))).toEqual(new Set(READINGS.map((read) => read(text))));
      }),
      { numRuns: 3_000 },
    );
  });

  it("canonicalizeDisplay is idempotent", () => {
    fc.assert(
      fc.property(fc.oneof(markupHeavy, fc.string({ unit: "grapheme", maxLength: 40 })), (text) => {
        const once = canonicalizeDisplay(text);
        expect(canonicalizeDisplay(once)).toBe(once);
      }),
      { numRuns: 2_000 },
    );
  });

  it("redactForDisplay output is settled: a second pass changes nothing", () => {
    fc.assert(
      fc.property(planted(KINDS[0]!), markupHeavy, ({ text }, noise) => {
        const { text: out } = redactForDisplay(`${noise}${text}${noise}`, toy);
        expect(redactForDisplay(out, toy)).toEqual({ text: out, changed: false });
      }),
      { numRuns: 300 },
    );
  });

  it("safeSplitOffset answers a surrogate-safe index whose cut severs nothing", () => {
    fc.assert(
      fc.property(planted(KINDS[0]!), fc.nat({ max: 80 }), ({ text }, limit) => {
        const input = `😀 ${text} 😀`;
        const cut = safeSplitOffset(input, limit, toy);
        expect(cut).toBeLessThanOrEqual(input.length);
        const code = input.charCodeAt(cut - 1);
        expect(cut > 0 && code >= 0xd800 && code <= 0xdbff).toBe(false);
        if (cut > 0 && cut < input.length) {
          expect(joinsToACredential(input.slice(0, cut), input.slice(cut), toy)).toBe(false);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe("redactForDisplay: what a CommonMark renderer decodes (issue 14, finding 2)", () => {
  const shown = (text: string) => redactForDisplay(text).text;
  it.each([
    ["a decimal reference", "key AKIA&#73;OSFODNN7EXAMPLE here", "OSFODNN7EXAMPLE"],
    ["a hex reference", "key AKIA&#x49;OSFODNN7EXAMPLE here", "OSFODNN7EXAMPLE"],
    ["a backslash escape", "token ghp\\_R4nd0mT0k3nV4lu3Xy9Zq8Wv7Ut6Sr5Qp4 here", "R4nd0mT0k3nV4lu3"],
    ["an escaped dash", "sk\\-ant-api03-abcDEF123ghiJKL456mnoPQR789 here", "abcDEF123ghiJKL456"],
    ["a reference for a dash", "xoxb&#45;123456789012-AbCdEfGhIjKlMnOpQrStUvWx", "AbCdEfGhIjKlMnOp"],
    ["a named reference", "ghp&lowbar;R4nd0mT0k3nV4lu3Xy9Zq8Wv7Ut6Sr5Qp4", "R4nd0mT0k3nV4lu3"],
  ])("redacts a key disguised by %s", (_name, input, body) => {
    const out = shown(input);
    expect(out).toContain(REDACTION_MARKER);
    expect(out).not.toContain(body);
  });

  it("collapses a link whose url holds balanced parentheses to its label", () => {
    expect(shown("[AKIAIOSF](https://en.example.org/wiki/Key_(crypto))ODNN7EXAMPLE")).not.toContain(
      "ODNN7EXAMPLE",
    );
  });

  it("leaves no tail of a key beside the marker when markup or an invisible character split it", () => {
    for (const input of [
      "xoxb-1234567890-ab`cdefghijkl`",
      "ghs_QCxSSyBgQKr36ffLqPXVGMBnF4**YgvJJjWdVb**",
      "xoxp-021639462560-63870854637-uaVwsqSp59NzDO\u00ad1A4Th5kI1d",
      "xoxe-1-VEFbKhfzAra2VS9Zl&#x50;X0v&#x6F;k6x6DbnzCNvjrU7jsI",
    ]) {
      const out = shown(input);
      expect(out).toContain(REDACTION_MARKER);
      expect(out.replaceAll(REDACTION_MARKER, "")).not.toMatch(/[A-Za-z0-9]{6,}/u);
    }
  });

  it("keeps the formatting of a message whose key the literal scan took whole", () => {
    const text = "Run this:\n\n```bash\nexport T=ghp_R4nd0mT0k3nV4lu3Xy9Zq8Wv7Ut6Sr5Qp4\n```\n**done**";
    expect(shown(text)).toBe(`Run this:\n\n\`\`\`bash\nexport T=${REDACTION_MARKER}\n\`\`\`\n**done**`);
  });

  it("reads a key split by an encoded format character, which renders as nothing", () => {
    // `&#8203;` decodes to a zero-width space and `&shy;` to a soft hyphen: the reader sees the key whole.
    for (const text of [
      `key ${AWS.slice(0, 4)}&#8203;${AWS.slice(4)} here`,
      `${AWS.slice(0, 8)}&shy;${AWS.slice(8)}`,
    ]) {
      const out = redactForDisplay(text).text;
      expect(out).toContain(REDACTION_MARKER);
      expect(dropFormatChars(decodeCharacterReferences(out))).not.toContain(AWS.slice(4));
    }
  });

  it("leaves escapes and references alone in text without a key", () => {
    for (const text of [
      "a \\_literal\\_ underscore",
      "5 &lt; 6 &amp;&amp; 7 &gt; 2",
      "Tom &amp; Jerry&#39;s",
    ])
      expect(redactForDisplay(text)).toEqual({ text, changed: false });
  });
});

describe("printf slots are placeholders, passwords that start with %s are not", () => {
  // Found by the append-gate property: `DB_PASSWORD=%sqC#…` passed as a `%s` format slot.
  it.each([
    ["Use DB_PASSWORD=%sqC#OSrdP95pGD8Tv", "%sqC#OSrdP95pGD8Tv"],
    ["Use DB_PASSWORD=%sqC#OSrdP95pGD8`T`v", "OSrdP95pGD8"],
  ])("redacts %s", (text, needle) => {
    expect(redactForDisplay(text).text).not.toContain(needle);
  });

  it.each(["password=%s", "password='%s'", "password=%(db_password)s;"])("leaves the slot in %s", (text) => {
    expect(redactForDisplay(text).changed).toBe(false);
  });
});
