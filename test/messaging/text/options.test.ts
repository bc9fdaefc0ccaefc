import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { defineCapabilities } from "../../../src/messaging/channel/capabilities.js";
import {
  applyOptionsCap,
  capChoices,
  chunkText,
  displaySafe,
  displaySafeFor,
  formatOverflow,
  renderOptionsAsText,
  splitOptionsTrailer,
} from "../../../src/messaging/text/options.js";

const ZWSP = "\u200b";
const REDACTED = "[REDACTED: credential]";
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const caps = (maxButtons: number, mentionGrammars = true) => ({ maxButtons, mentionGrammars });
const split = (text: string, hidePartial?: boolean) =>
  splitOptionsTrailer(text, hidePartial === undefined ? undefined : { hidePartial });

describe("chunkText", () => {
  it("returns [] for empty input and one chunk when the cap is disabled", () => {
    expect(chunkText("", 5)).toEqual([]);
    expect(chunkText("", 0)).toEqual([]);
    expect(chunkText("abc", 0)).toEqual(["abc"]);
    expect(chunkText("abc", -3)).toEqual(["abc"]);
    expect(chunkText("abc", Number.NaN)).toEqual(["abc"]);
    expect(chunkText("abc", Number.POSITIVE_INFINITY)).toEqual(["abc"]);
  });

  it("slices fixed-width pieces with a short tail", () => {
    expect(chunkText("abcdefg", 3)).toEqual(["abc", "def", "g"]);
    expect(chunkText("abcdef", 3)).toEqual(["abc", "def"]);
  });

  it("counts code points and never cuts a surrogate pair", () => {
    expect(chunkText("😀😀😀", 1)).toEqual(["😀", "😀", "😀"]);
    expect(chunkText("a😀b😀", 2)).toEqual(["a😀", "b😀"]);
    // A lone surrogate is one (ill-formed) code point, not a reason to swallow its neighbour.
    expect(chunkText("\ud800a", 1)).toEqual(["\ud800", "a"]);
  });

  it("rejects a fractional cap rather than guessing a rounding", () => {
    expect(() => chunkText("abc", 1.5)).toThrow(RangeError);
  });

  it("is lossless and within the cap for any text (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme-composite" }), fc.integer({ min: 1, max: 12 }), (text, max) => {
        const chunks = chunkText(text, max);
        expect(chunks.join("")).toBe(text);
        for (const chunk of chunks) {
          const points = Array.from(chunk).length;
          expect(points).toBeGreaterThan(0);
          expect(points).toBeLessThanOrEqual(max);
          expect(LONE_SURROGATE.test(chunk)).toBe(false);
        }
      }),
    );
  });
});

describe("splitOptionsTrailer: the complete trailer", () => {
  it("parses a plain trailer, stripping choices and dropping empty ones", () => {
    expect(split("Pick one: [OPTIONS: Yes |  | No ]")).toEqual({ body: "Pick one:", choices: ["Yes", "No"] });
    expect(split("[OPTIONS: ]")).toEqual({ body: "", choices: [] });
    expect(split("[OPTIONS:]")).toEqual({ body: "", choices: [] });
    expect(split("body\n[OPTIONS: a , b | c]\n\n  ")).toEqual({ body: "body", choices: ["a , b", "c"] });
  });

  it("keeps the body's leading whitespace (it may be code indentation)", () => {
    expect(split("    code()\n[OPTIONS: a]")).toEqual({ body: "    code()", choices: ["a"] });
  });

  it("accepts full-width closers and a trailing (OPTIONS) link suffix", () => {
    for (const closer of ["］", "】", "〕"]) {
      expect(split(`body\n[OPTIONS: a | b${closer}`)).toEqual({ body: "body", choices: ["a", "b"] });
    }
    expect(split("body\n[OPTIONS: a | b](OPTIONS)")).toEqual({ body: "body", choices: ["a", "b"] });
    expect(split("body\n[OPTIONS: a | b] (OPTIONS)").choices).toEqual([]);
  });

  it("peels bold/italic/code wrappers only where they open a line", () => {
    expect(split("body\n**[OPTIONS: A | B]**")).toEqual({ body: "body", choices: ["A", "B"] });
    expect(split("body\n_[OPTIONS: A | B]_")).toEqual({ body: "body", choices: ["A", "B"] });
    expect(split("body\n`[OPTIONS: A | B]`")).toEqual({ body: "body", choices: ["A", "B"] });
    expect(split("  **[OPTIONS: A](OPTIONS)**")).toEqual({ body: "", choices: ["A"] });
    // Mid-line the same characters may close the prose's own emphasis.
    for (const text of ["see **[OPTIONS: A | B]**", "word_[OPTIONS: A]_", "x `[OPTIONS: A]`"]) {
      expect(split(text)).toEqual({ body: text, choices: [] });
    }
    // Opening and closing wrappers must agree.
    expect(split("\n**[OPTIONS: A]_").choices).toEqual([]);
  });

  it("also peels `*` and `__` wrappers (an extension: the same emphasis grammar as `**` and `_`)", () => {
    expect(split("body\n*[OPTIONS: A | B]*")).toEqual({ body: "body", choices: ["A", "B"] });
    expect(split("body\n__[OPTIONS: A | B]__")).toEqual({ body: "body", choices: ["A", "B"] });
  });

  it("lets labels carry brackets: balanced pairs, unbalanced openers, and closers ending a choice", () => {
    expect(split("[OPTIONS: Fix [x] logging | a[1]]").choices).toEqual(["Fix [x] logging", "a[1]"]);
    expect(split("[OPTIONS: Alpha ] | Bravo ]]").choices).toEqual(["Alpha ]", "Bravo ]"]);
    expect(split("[OPTIONS: red \u001b[31mX\u001b[0m | b]").choices).toEqual([
      "red \u001b[31mX\u001b[0m",
      "b",
    ]);
    expect(split("[OPTIONS: [link](https://x.example) | https://[fd00::1]:8443]").choices).toEqual([
      "[link](https://x.example)",
      "https://[fd00::1]:8443",
    ]);
  });

  it("treats a closer followed by more text as the marker's end, so the text is prose", () => {
    for (const text of [
      "body\n[OPTIONS: a | b] trailing prose",
      "body\n[OPTIONS: a | b] (note)",
      "Use [OPTIONS: A | B] then check arr[0]",
      "body\n[OPTIONS: 【重要】修复 | 跳过】",
    ]) {
      expect(split(text)).toEqual({ body: text, choices: [] });
    }
  });

  it("reads the LAST of several markers, and refuses a marker quoted inside another's label", () => {
    expect(split("[OPTIONS: a | b]\n[OPTIONS: c | d]")).toEqual({
      body: "[OPTIONS: a | b]",
      choices: ["c", "d"],
    });
    const nested = "Note [OPTIONS: see [OPTIONS: x] below | Skip]";
    expect(split(nested)).toEqual({ body: nested, choices: [] });
  });

  it("allows newlines inside the marker", () => {
    expect(split("body [OPTIONS: x\n| y]")).toEqual({ body: "body", choices: ["x", "y"] });
  });

  it("is case- and spacing-exact about the marker word", () => {
    for (const text of ["[options: a | b]", "[OPTIONS : a | b]", "[Options: a]"]) {
      expect(split(text)).toEqual({ body: text, choices: [] });
    }
  });

  it("uses Python whitespace: U+0085 and U+3000 are whitespace, U+FEFF is not", () => {
    expect(split("b [OPTIONS: a]\u0085\u3000").choices).toEqual(["a"]);
    expect(split("b [OPTIONS: \u3000a\u0085 | c]").choices).toEqual(["a", "c"]);
    expect(split("b [OPTIONS: a]\ufeff").choices).toEqual([]);
    expect(split("b [OPTIONS: \ufeffa]").choices).toEqual(["\ufeffa"]);
  });

  it("never redacts or defangs: choices are button payloads, the sinks render them", () => {
    expect(split("[OPTIONS: @everyone | <!channel> | AKIA**IOSFODNN7EXAMPLE**]").choices).toEqual([
      "@everyone",
      "<!channel>",
      "AKIA**IOSFODNN7EXAMPLE**",
    ]);
  });
});

describe("splitOptionsTrailer: an unfinished marker", () => {
  const fragments = [
    ["body\n[OPTIONS: a | b", "body"],
    ["body\n**[OPTIONS: A", "body"],
    [" `[OPTIONS: x | y`", ""],
    ["see the [OPTIONS section", "see the"],
    ["body [OPTIONS: a [OPTIONS: b", "body"],
    ["body\n[OPT", "body"],
    ["body [", "body"],
  ] as const;

  it("keeps it by default: a send-once caller cannot tell a fragment from prose", () => {
    for (const [text] of fragments) {
      expect(split(text)).toEqual({ body: text, choices: [] });
      expect(split(text, false)).toEqual({ body: text, choices: [] });
    }
  });

  it("hides it when a streaming caller says so", () => {
    for (const [text, body] of fragments) {
      expect(split(text, true)).toEqual({ body, choices: [] });
    }
  });

  it("does not hide a marker that already closed, or a word that only looks like a prefix", () => {
    for (const text of [
      "body\n[OPTIONS: a | b] trailing prose",
      "body\n[OPTIONS: Fix [x] logging | b",
      "body [OPT ",
      "body [OPTX",
    ]) {
      expect(split(text, true)).toEqual({ body: text, choices: [] });
    }
  });

  it("prefers a complete trailer over hiding", () => {
    expect(split("body\n[OPTIONS: a | b]", true)).toEqual({ body: "body", choices: ["a", "b"] });
  });
});

describe("splitOptionsTrailer: properties", () => {
  const label = fc.string({ unit: fc.constantFrom("a", "b", "Z", " ", "1", "-", "中", "😀", "@", "\n") });

  // Strings over the grammar's own alphabet, so markers, wrappers and closers actually collide.
  const grammarText = fc
    .array(
      fc.constantFrom("[OPTIONS:", "[", "]", "】", "|", "**", "_", "`", "(OPTIONS)", " ", "\n", "a", "x]"),
      {
        maxLength: 24,
      },
    )
    .map((parts) => parts.join(""));

  it("never loses body text when no trailer matches: only one complete trailer is ever removed", () => {
    fc.assert(
      fc.property(fc.oneof(grammarText, fc.string()), (text) => {
        const { body, choices } = splitOptionsTrailer(text);
        expect(text.startsWith(body)).toBe(true);
        if (body === text) return;
        // What was removed is a trailer on its own: it re-parses to an empty body and the same choices.
        expect(splitOptionsTrailer(text.slice(body.length))).toEqual({ body: "", choices });
      }),
    );
  });

  it("hides only a suffix when a streaming caller asks", () => {
    fc.assert(
      fc.property(fc.oneof(grammarText, fc.string()), (text) => {
        const complete = splitOptionsTrailer(text);
        const hidden = splitOptionsTrailer(text, { hidePartial: true });
        expect(text.startsWith(hidden.body)).toBe(true);
        if (complete.body !== text) expect(hidden).toEqual(complete);
      }),
    );
  });

  it("leaves text without a marker untouched", () => {
    const noMarker = fc.string().filter((text) => !text.includes("[OPTIONS:") && !text.includes("["));
    fc.assert(
      fc.property(noMarker, (text) => {
        expect(splitOptionsTrailer(text)).toEqual({ body: text, choices: [] });
        expect(splitOptionsTrailer(text, { hidePartial: true })).toEqual({ body: text, choices: [] });
      }),
    );
  });

  it("round-trips a generated trailer", () => {
    fc.assert(
      fc.property(
        label,
        fc.array(label, { maxLength: 8 }),
        fc.constantFrom("]", "］", "】", "〕"),
        (body, labels, closer) => {
          const text = `${body}[OPTIONS: ${labels.join(" | ")}${closer}`;
          const { body: gotBody, choices } = splitOptionsTrailer(text);
          expect(choices).toEqual(labels.map((l) => l.trim()).filter((l) => l.length > 0));
          expect(gotBody).toBe(body.trimEnd());
        },
      ),
    );
  });
});

describe("capChoices", () => {
  it("keeps at most max(0, maxButtons), order kept, nothing dropped or rewritten", () => {
    const choices = ["@everyone", "", "AKIAQQQQQQQQQQQQQQQQ", "d"];
    expect(capChoices(choices, caps(2))).toEqual({
      kept: ["@everyone", ""],
      overflow: ["AKIAQQQQQQQQQQQQQQQQ", "d"],
    });
    expect(capChoices(choices, caps(-1))).toEqual({ kept: [], overflow: choices });
    expect(capChoices(choices, caps(Number.NaN))).toEqual({ kept: [], overflow: choices });
    expect(capChoices(choices, caps(2.7)).kept).toHaveLength(2);
    expect(capChoices(choices, caps(Number.POSITIVE_INFINITY))).toEqual({ kept: choices, overflow: [] });
  });

  it("reads a full TransportCapabilities", () => {
    expect(capChoices(["a", "b", "c", "d"], defineCapabilities()).kept).toEqual(["a", "b", "c"]);
  });

  it("never exceeds the cap and partitions in order (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string(), { maxLength: 20 }),
        fc.integer({ min: -5, max: 25 }),
        (choices, max) => {
          const { kept, overflow } = capChoices(choices, caps(max));
          expect(kept.length).toBeLessThanOrEqual(Math.max(0, max));
          expect([...kept, ...overflow]).toEqual(choices);
        },
      ),
    );
  });
});

describe("formatOverflow / applyOptionsCap / renderOptionsAsText", () => {
  it("numbers overflow after the buttons, through the display sink", () => {
    expect(formatOverflow([], 3)).toBe("");
    expect(formatOverflow(["@everyone", "<!here>", "ok"], 2)).toBe(
      `3. @${ZWSP}everyone\n4. <${ZWSP}!here>\n5. ok`,
    );
    expect(formatOverflow(["@everyone"], 0, caps(3, false))).toBe("1. @everyone");
    expect(formatOverflow(["ghp_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"], 9)).toBe(`10. ${REDACTED}`);
  });

  it("appends the list after one blank line and returns display-safe kept choices", () => {
    expect(applyOptionsCap("Body", ["a", "@b"], caps(1))).toEqual({
      body: `Body\n\n2. @${ZWSP}b`,
      choices: ["a"],
    });
    expect(applyOptionsCap("Body\n", ["a", "b"], caps(1)).body).toBe("Body\n\n2. b");
    expect(applyOptionsCap("Body\n\n", ["a", "b"], caps(1)).body).toBe("Body\n\n\n2. b");
    expect(applyOptionsCap("", ["a", "b"], caps(0)).body).toBe("1. a\n2. b");
    expect(applyOptionsCap("Body\n", ["@here"], caps(3))).toEqual({
      body: "Body\n",
      choices: [`@${ZWSP}here`],
    });
    expect(applyOptionsCap("B", ["AKIA`IOSFODNN7EXAMPLE`"], caps(3)).choices).toEqual([REDACTED]);
  });

  it("renders the trailer as a numbered list past the channel's slots", () => {
    expect(renderOptionsAsText("Pick one:\n[OPTIONS: Yes | No | Maybe]", caps(1))).toBe(
      "Pick one:\n\n2. No\n3. Maybe",
    );
    expect(renderOptionsAsText("Pick: [OPTIONS: Yes | No]", caps(0))).toBe("Pick:\n\n1. Yes\n2. No");
    expect(renderOptionsAsText("Pick: [OPTIONS: Yes | No]", caps(5))).toBe("Pick:");
    // Send-once: an unfinished fragment is the assistant's own prose and stays.
    expect(renderOptionsAsText("see the [OPTIONS section", caps(0))).toBe("see the [OPTIONS section");
  });

  it("never leaves a complete trailer's marker in the output (property)", () => {
    const safe = fc.string({
      unit: fc.constantFrom("a", "b", " ", "1", "中", "😀", "\n", "@", "<", "!", "-"),
    });
    fc.assert(
      fc.property(
        safe,
        fc.array(safe, { maxLength: 6 }),
        fc.integer({ min: -1, max: 8 }),
        (body, labels, max) => {
          const out = renderOptionsAsText(`${body}\n[OPTIONS: ${labels.join(" | ")}]`, caps(max));
          expect(out).not.toContain("[OPTIONS:");
        },
      ),
    );
  });
});

describe("displaySafe / displaySafeFor", () => {
  it("defangs broadcast grammars only where the channel has one", () => {
    expect(displaySafeFor("@everyone <!channel>", caps(3, true))).toBe(`@${ZWSP}everyone <${ZWSP}!channel>`);
    expect(displaySafeFor("@everyone <!channel> a@b.com", caps(3, false))).toBe(
      "@everyone <!channel> a@b.com",
    );
    expect(displaySafe("<!<!")).toBe(`<${ZWSP}!<${ZWSP}!`);
  });

  it("is idempotent, so text meeting two sinks gathers no extra invisible characters", () => {
    for (const text of ["@everyone", "<!here>", "a@b.com and @@x", "AKIA`IOSFODNN7EXAMPLE`"]) {
      const once = displaySafe(text);
      expect(displaySafe(once)).toBe(once);
    }
  });

  it("redacts in display form, before the defang can split anything", () => {
    expect(displaySafe("AKIA`IOSFODNN7EXAMPLE`")).toBe(REDACTED);
    const url = displaySafe("db: postgresql://admin:Zq8vLr2mXk9pWt4s@db.example.com:5432/app");
    expect(url).not.toContain("Zq8vLr2mXk9pWt4s");
    expect(url).toContain("[REDACTED");
  });

  it("drops HTML comments before the scan, since a deletion joins its neighbours", () => {
    expect(displaySafe("AKIA<!-- x -->IOSFODNN7EXAMPLE")).toBe(REDACTED);
  });

  it("drops a comment line with its line break, an inline comment alone, and keeps an unterminated one", () => {
    expect(displaySafe("<!-- keep-visible -->")).toBe("");
    expect(displaySafe("x\n<!-- plan_task_id:1 -->")).toBe("x");
    expect(displaySafe("<!-- id -->\nHello")).toBe("Hello");
    expect(displaySafe("a\n  <!-- id -->  \nb")).toBe("a\nb");
    expect(displaySafe("a <!-- c --> b")).toBe("a  b");
    expect(displaySafe("a<!---->b<!-- multi\nline -->c")).toBe("abc");
    expect(displaySafe("a <!--> b")).toBe(`a <${ZWSP}!--> b`);
    expect(displaySafe("open <!-- never closed")).toBe(`open <${ZWSP}!-- never closed`);
  });
});

describe("linear time on adversarial input", () => {
  const N = 100_000;
  const inputs = [
    `[OPTIONS: ${"|".repeat(N)}`,
    `[OPTIONS: ${"|".repeat(N)}]`,
    "[".repeat(N),
    `${"[".repeat(N)}]`,
    "]".repeat(N),
    `${"[OPTIONS:".repeat(N / 10)}]`,
    `${"[OPTIONS: x] ".repeat(N / 13)}]`,
    `${"\n**[OPTIONS: ".repeat(N / 13)}]**`,
    `[OPTIONS: ${"a] ".repeat(N / 3)}]`,
    `[OPTIONS: ${"] ".repeat(N / 2)}x]`,
    `${" ".repeat(N)}x`,
    `${"<!--".repeat(N / 4)}`,
    `${"<!-- -->\n".repeat(N / 9)}`,
    `${"\n".repeat(N)}<!-- x -->`,
    `${"@".repeat(N)}${"<!".repeat(N / 2)}`,
  ];

  it.each(inputs.map((text, i) => [i, text] as const))("input %i", (_i, text) => {
    splitOptionsTrailer(text);
    splitOptionsTrailer(text, { hidePartial: true });
    renderOptionsAsText(text, caps(0));
    displaySafeFor(text, caps(3));
    chunkText(text, 7);
  });
});
