/**
 * The pure contract of messaging/tables.ts: policy resolution, display width, the conservative
 * grammar, both renderings, streaming deferral, degenerate cases and idempotence.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { iterFenceLines } from "../../../../src/messaging/text/split.js";
import { opaqueLines } from "../../../../src/messaging/text/tables/blocks.js";
import {
  displayWidth,
  GRID_MAX_DISPLAY_COLUMNS,
  normalizeTablePolicy,
  renderTables,
  renderTablesWithMetadata,
  resolveTablePolicy,
  TABLE_POLICIES,
  type TablePolicy,
} from "../../../../src/messaging/text/tables/index.js";
import { lineTable } from "../../../../src/messaging/text/tables/scan.js";

const cards = (text: string, final = true) => renderTables(text, { policy: "cards", final });
const grid = (text: string, final = true) => renderTables(text, { policy: "grid", final });
const auto = (text: string, final = true) => renderTables(text, { policy: "auto", final });

const SIMPLE = "| a | b |\n|---|---|\n| 1 | 2 |";

describe("policy resolution", () => {
  it("exports the five policies and the grid threshold", () => {
    expect(TABLE_POLICIES).toEqual(["off", "cards", "grid", "native", "auto"]);
    expect(GRID_MAX_DISPLAY_COLUMNS).toBe(42);
  });

  it("normalizes case and whitespace, and anything unknown to auto (never to off)", () => {
    expect(normalizeTablePolicy("CARDS")).toBe("cards");
    expect(normalizeTablePolicy("  grid\n")).toBe("grid");
    expect(normalizeTablePolicy("bogus")).toBe("auto");
    expect(normalizeTablePolicy("")).toBe("auto");
    expect(normalizeTablePolicy(null)).toBe("auto");
    expect(normalizeTablePolicy(undefined)).toBe("auto");
    expect(normalizeTablePolicy(3)).toBe("auto");
    expect(normalizeTablePolicy({ policy: "off" })).toBe("auto");
  });

  it("native without the capability resolves to cards, never raw pipes", () => {
    expect(resolveTablePolicy("native", { nativeTables: false })).toBe("cards");
    expect(resolveTablePolicy("native", {})).toBe("cards");
    expect(resolveTablePolicy("native", { nativeTables: true })).toBe("native");
  });

  it("auto on a native target resolves to off; explicit cards/grid are honoured anywhere", () => {
    expect(resolveTablePolicy("auto", { nativeTables: true })).toBe("off");
    expect(resolveTablePolicy("auto", { nativeTables: false })).toBe("auto");
    for (const nativeTables of [true, false]) {
      expect(resolveTablePolicy("cards", { nativeTables })).toBe("cards");
      expect(resolveTablePolicy("grid", { nativeTables })).toBe("grid");
      expect(resolveTablePolicy("off", { nativeTables })).toBe("off");
    }
    expect(resolveTablePolicy(null, { nativeTables: true })).toBe("off");
    expect(resolveTablePolicy(undefined, { nativeTables: false })).toBe("auto");
  });

  it("off and supported native are byte-identical passthroughs", () => {
    const text = `intro\n${SIMPLE}\n`;
    expect(renderTables(text, { policy: "off" })).toBe(text);
    expect(renderTables(text, { policy: "native", nativeTables: true })).toBe(text);
    expect(renderTables(text, { policy: "auto", nativeTables: true })).toBe(text);
    expect(renderTables(text, { policy: "native" })).toBe("intro\n**1**\n- b: 2\n");
  });
});

describe("displayWidth", () => {
  it("counts East Asian wide/fullwidth as two and everything else as one", () => {
    expect(displayWidth("")).toBe(0);
    expect(displayWidth("abc")).toBe(3);
    expect(displayWidth("日本語")).toBe(6);
    expect(displayWidth("ｱｲｳ")).toBe(3); // halfwidth katakana
    expect(displayWidth("\u3000")).toBe(2); // ideographic space is F
    expect(displayWidth("😀")).toBe(2);
    expect(displayWidth("🇯🇵")).toBe(2); // two regional indicators, each neutral
  });

  it("counts combining marks and the invisible joiners as zero", () => {
    expect(displayWidth("e\u0301")).toBe(1);
    expect(displayWidth("क्ष")).toBe(2); // the virama combines
    for (const zw of ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"])
      expect(displayWidth(`a${zw}b`)).toBe(2);
    expect(displayWidth("👨‍👩‍👧")).toBe(6);
  });

  it("counts a variation selector as one column, as the reference does (ccc 0, not a combining mark)", () => {
    expect(displayWidth("❤️")).toBe(2);
    expect(displayWidth("\ufe0f")).toBe(1);
  });

  it("measures code points, never UTF-16 halves", () => {
    expect(displayWidth("𝔘")).toBe(1); // astral but narrow
    expect(displayWidth("\u{20000}")).toBe(2); // astral CJK
    expect(displayWidth("\ud83d")).toBe(1); // a lone surrogate is one (narrow) character
  });

  it("follows the UCD for unassigned code points (deliberate: the reference reports every one as F)", () => {
    // Python's unicodedata answers "F" for any unassigned code point, so the reference lays U+0378
    // out two columns wide. The UCD says N (W only in the CJK blocks and planes 2-3); the port
    // follows the UCD so an unknown character does not widen a column for no reason.
    expect(displayWidth("\u0378")).toBe(1);
    expect(displayWidth("\u{2fffd}")).toBe(2);
  });
});

describe("conservative recognition", () => {
  const untouched = [
    ["prose", "no pipes here"],
    ["a pipe-bearing sentence", "use a | b to pipe\nand more"],
    ["a header with no delimiter row", "| a | b |\n| 1 | 2 |"],
    ["a separator cell count that differs from the header", "| a | b |\n|---|\n| 1 | 2 |"],
    ["a malformed separator cell", "| a | b |\n| -x- | --- |"],
    ["a setext underline (a delimiter row needs a pipe)", "a \\| b\n---"],
    ["4-space indentation (code)", "    | a | b |\n    |---|---|\n    | 1 | 2 |"],
    ["tab indentation (code)", "\t| a | b |\n\t|---|---|"],
    ["space+tab indentation reaching four columns", " \t| a | b |\n |---|---|"],
    ["a header hiding a pipe in a code span (strict GFM counts it)", "| a | `b|c` |\n|---|---|\n| 1 | 2 |"],
    ["an ATX heading as header", "# | a | b |\n|---|---|"],
    ["a block quote", "> | a | b |\n> |---|---|"],
    ["a dash-list item resembling a separator", "| a | b | c |\n- | --- | --- |"],
    ["an ordered-list table", "1. | a | b |\n1. |---|---|\n1. | 1 | 2 |"],
    ["a backtick fence", "```\n| a | b |\n|---|---|\n| 1 | 2 |\n```"],
    ["a tilde fence", "~~~md\n| a | b |\n|---|---|\n~~~"],
    ["a longer fence holding a shorter one", "````diff\n```\n| a | b |\n|---|---|\n````"],
    ["an unclosed fence", "```\n| a | b |\n|---|---|"],
    ["a fence opened on a list item", "- ```\n  | a | b |\n  |---|---|\n  ```"],
    ["an HTML block (kind 6)", "<div>\n| a | b |\n|---|---|\n</div>"],
    ["an HTML comment", "<!-- note\n| a | b |\n|---|---|\n-->"],
    ["a <pre> block", "<pre>\n| a | b |\n|---|---|\n</pre>"],
    ["a processing instruction", "<?php\n| a | b |\n|---|---|\n?>"],
    ["a declaration", "<!DOCTYPE\n| a | b |\n|---|---|\n>"],
    ["CDATA", "<![CDATA[\n| a | b |\n|---|---|\n]]>"],
    ["a complete custom tag", '<my-widget data-x="1">\n| a | b |\n|---|---|'],
  ] as const;

  it.each(untouched)("leaves %s byte-for-byte alone", (_name, text) => {
    for (const policy of ["cards", "grid", "auto"] as const) {
      expect(renderTables(text, { policy })).toBe(text);
      expect(renderTables(`${text}\n`, { policy })).toBe(`${text}\n`);
    }
  });

  it("converts a table after a closed fence, a closed list-item fence and a closed HTML block", () => {
    expect(cards("```\n| a | b |\n```\n| c | d |\n|---|---|\n| 3 | 4 |")).toBe(
      "```\n| a | b |\n```\n**3**\n- d: 4",
    );
    expect(cards("- ```\n  | a | b |\n  ```\n| c | d |\n|---|---|\n| 3 | 4 |")).toBe(
      "- ```\n  | a | b |\n  ```\n**3**\n- d: 4",
    );
    expect(cards("10. ~~~\n    | a | b |\n    ~~~\n| c | d |\n|---|---|\n| 3 | 4 |")).toBe(
      "10. ~~~\n    | a | b |\n    ~~~\n**3**\n- d: 4",
    );
    expect(cards("<div>\n| a | b |\n</div>\n\n| c | d |\n|---|---|\n| 3 | 4 |")).toBe(
      "<div>\n| a | b |\n</div>\n\n**3**\n- d: 4",
    );
    expect(cards("<!-- x -->\n| c | d |\n|---|---|\n| 3 | 4 |")).toBe("<!-- x -->\n**3**\n- d: 4");
  });

  it("ends a list-item fence at a line indented less than the item, which the top level then reads", () => {
    // CommonMark closes the item (and its fence) there; the column-0 ``` then opens a NEW fence.
    const text = "- ```\n  code\n```\n| a | b |\n|---|---|\n| 1 | 2 |";
    expect(cards(text)).toBe(text);
  });

  it("treats a lone complete custom tag as an HTML block even mid-paragraph (deliberately conservative)", () => {
    // CommonMark lets kind-7 HTML start a block only outside a paragraph; telling the two apart would
    // take paragraph tracking, and misreading it the other way would rewrite raw HTML content.
    const text = "intro\n<my-note>\n| a | b |\n|---|---|\n| 1 | 2 |";
    expect(cards(text)).toBe(text);
    expect(cards(`intro\n<my-note>\n\n${SIMPLE}`)).toBe("intro\n<my-note>\n\n**1**\n- b: 2");
  });

  it("converts CRLF text (rendered lines use \\n; text outside the run keeps its \\r\\n)", () => {
    expect(cards("x\r\n| a | b |\r\n|---|---|\r\n| 1 | 2 |\r\n\r\nafter\r\n")).toBe(
      "x\r\n**1**\n- b: 2\n\r\nafter\r\n",
    );
  });

  it("lets a table interrupt a paragraph, as GFM does", () => {
    expect(cards(`text\n${SIMPLE}`)).toBe("text\n**1**\n- b: 2");
  });

  it("accepts outer-pipe-less rows and a table after a failed header candidate", () => {
    expect(cards("a | b\n--|--\n1 | 2")).toBe("**1**\n- b: 2");
    expect(cards("| x | y | z |\n| a | b |\n|---|---|\n| 1 | 2 |")).toBe("| x | y | z |\n**1**\n- b: 2");
  });
});

describe("run termination", () => {
  it("[OPTIONS: and [STEERING lines end a run instead of becoming body rows", () => {
    expect(cards(`${SIMPLE}\n[OPTIONS: yes | no]`)).toBe("**1**\n- b: 2\n[OPTIONS: yes | no]");
    expect(cards(`${SIMPLE}\n[STEERING steer-1: a | b]`)).toBe("**1**\n- b: 2\n[STEERING steer-1: a | b]");
  });

  it("a blank line, a pipe-less line, a block starter, code indentation or a fence end a run", () => {
    expect(cards(`${SIMPLE}\n\nafter | x`)).toBe("**1**\n- b: 2\n\nafter | x");
    expect(cards(`${SIMPLE}\nplain prose`)).toBe("**1**\n- b: 2\nplain prose");
    expect(cards(`${SIMPLE}\n- item | x`)).toBe("**1**\n- b: 2\n- item | x");
    expect(cards(`${SIMPLE}\n    | 3 | 4 |`)).toBe("**1**\n- b: 2\n    | 3 | 4 |");
    expect(cards(`${SIMPLE}\n\`\`\`js | x\n| 3 | 4 |`)).toBe("**1**\n- b: 2\n```js | x\n| 3 | 4 |");
  });

  it("a pipe-bearing line right under the table is a body row (it is one in GFM)", () => {
    expect(cards(`${SIMPLE}\nmore text | with pipe`)).toBe("**1**\n- b: 2\n\n**more text**\n- b: with pipe");
  });
});

describe("cell boundaries", () => {
  it("\\| is content and renders as a literal pipe; \\\\| stays a boundary", () => {
    expect(cards("| a \\| b | c |\n|---|---|\n| x \\| y | z |")).toBe("**x | y**\n- c: z");
    expect(cards("| a | b |\n|---|---|\n| \\\\ | \\\\| |")).toBe("**\\\\**\n- b: \\\\");
  });

  it("a pipe inside a body code span is content (looser than GFM, so no authored pipe is lost)", () => {
    expect(cards("| code | v |\n|---|---|\n| `a|b` | 1 |")).toBe("**`a|b`**\n- v: 1");
    expect(cards("| k | v |\n|---|---|\n| ``x|`y`` | 1 |")).toBe("**``x|`y``**\n- v: 1");
  });

  it("an unpaired backtick opens nothing", () => {
    expect(cards("| k | v |\n|---|---|\n| `a | b |")).toBe("**`a**\n- v: b");
    expect(cards("| k | v |\n|---|---|\n| \\`a | b` |")).toBe("**\\`a**\n- v: b`");
  });

  it("pads short rows with empty cells and drops cells beyond the header", () => {
    expect(cards("| a | b | c |\n|---|---|---|\n| 1 |\n| 1 | 2 | 3 | 4 |")).toBe(
      "**1**\n\n**1**\n- b: 2\n- c: 3",
    );
  });
});

describe("cards", () => {
  it("first column as a bold heading, later headers as labels, rows separated by a blank line", () => {
    expect(cards("| name | role | team |\n|---|---|---|\n| Ann | dev | core |\n| Bo | ops | infra |")).toBe(
      "**Ann**\n- role: dev\n- team: core\n\n**Bo**\n- role: ops\n- team: infra",
    );
  });

  it("keeps a blank heading blank and omits empty non-heading cells", () => {
    expect(cards("| cat | item | qty |\n|---|---|---|\n| fruit | apple | 1 |\n|  | pear |  |")).toBe(
      "**fruit**\n- item: apple\n- qty: 1\n\n- item: pear",
    );
  });

  it("shows a value under an empty header without a label, and an all-empty row as a dash", () => {
    expect(cards("| a |  |\n|---|---|\n| x | y |\n|  |  |")).toBe("**x**\n- y\n\n—");
  });

  it("escapes a card item that would open a fence (deliberate: the reference would swallow the rest)", () => {
    // "- ```: y" is a list item whose content opens a code fence: everything after it would render
    // as code. The reference emits it verbatim; the port escapes the first backtick/tilde.
    expect(cards("| a | ``` |\n|---|---|\n| x | y |\n\nafter")).toBe("**x**\n- \\```: y\n\nafter");
    expect(cards("| a |  |\n|---|---|\n| x | ~~~js |")).toBe("**x**\n- \\~~~js");
  });
});

describe("grid", () => {
  it("aligns by display width inside a plain fence, trimming trailing padding", () => {
    expect(grid("| a | b |\n|:--|--:|\n| left | right |\n| 中文字符 | 😀 |")).toBe(
      "```\na        | b\n---------+------\nleft     | right\n中文字符 | 😀\n```",
    );
  });

  it("makes the fence longer than every backtick run in the cells", () => {
    expect(grid("| ``` | b |\n|---|---|\n| x | `````y |")).toBe(
      "``````\n``` | b\n----+-------\nx   | `````y\n``````",
    );
  });

  it("keeps empty cells and rows (a zero-width column stays a column)", () => {
    expect(grid("|  | b |\n|---|---|\n|  |  |\n| x |  |")).toBe("```\n  | b\n--+--\n  |\nx |\n```");
  });
});

describe("auto", () => {
  const row = (a: string, b: string) => `| ${a} | ${b} |`;
  const table = (a: number, b: number) =>
    [row("h", "k"), "|---|---|", row("x".repeat(a), "y".repeat(b))].join("\n");

  it("renders a grid up to GRID_MAX_DISPLAY_COLUMNS wide and cards beyond", () => {
    // 20 + " | " + 19 = 42 columns: a grid; one more column: cards.
    expect(auto(table(20, 19)).startsWith("```\n")).toBe(true);
    expect(auto(table(20, 20))).toBe(`**${"x".repeat(20)}**\n- k: ${"y".repeat(20)}`);
  });

  it("thresholds by display width, not length", () => {
    const wide = "| a | b |\n|---|---|\n| 日本語日本語日本語日本語 | 日本語日本語 |"; // 24 + 3 + 12 = 39
    expect(auto(wide).startsWith("```\n")).toBe(true);
    const wider = "| a | b |\n|---|---|\n| 日本語日本語日本語日本語 | 日本語日本語日本 |"; // 24 + 3 + 16 = 43
    expect(auto(wider).startsWith("**")).toBe(true);
  });

  it("decides per table", () => {
    const text = `${table(3, 3)}\n\n${table(30, 30)}`;
    const out = auto(text);
    expect(out.startsWith("```\nh   | k\n")).toBe(true);
    expect(out.endsWith(`**${"x".repeat(30)}**\n- k: ${"y".repeat(30)}`)).toBe(true);
  });
});

describe("whitespace and containers", () => {
  it("keeps whitespace outside a run exact, including blank-line runs and a trailing newline", () => {
    expect(cards(`intro\n\n\n${SIMPLE}\n\n\n\nafter\n`)).toBe("intro\n\n\n**1**\n- b: 2\n\n\n\nafter\n");
    expect(cards(`${SIMPLE}\n`)).toBe("**1**\n- b: 2\n");
  });

  it("carries the run's container indentation onto every nonblank rendered line", () => {
    expect(cards("- item\n  | a | b |\n  |---|---|\n  | 1 | 2 |\n  | 3 | 4 |")).toBe(
      "- item\n  **1**\n  - b: 2\n\n  **3**\n  - b: 4",
    );
    expect(grid("- item\n   | a | b |\n  |---|---|\n | 1 | 2 |")).toBe(
      "- item\n   ```\n   a | b\n   --+--\n   1 | 2\n   ```",
    );
  });
});

describe("streaming (final=false)", () => {
  it("leaves a run reaching the end raw: it may still be growing", () => {
    expect(cards(SIMPLE, false)).toBe(SIMPLE);
    expect(cards(`${SIMPLE}\n`, false)).toBe(`${SIMPLE}\n`);
    expect(cards("| a | b |\n|---|---|", false)).toBe("| a | b |\n|---|---|");
  });

  it("defers when the only terminator is the unterminated final line ('Row' may become 'Row 1 | ok')", () => {
    expect(cards(`${SIMPLE}\nRow`, false)).toBe(`${SIMPLE}\nRow`);
    expect(cards(`${SIMPLE}\n[OPTIONS: a | b]`, false)).toBe(`${SIMPLE}\n[OPTIONS: a | b]`);
  });

  it("converts a run terminated by settled content", () => {
    expect(cards(`${SIMPLE}\nRow\n`, false)).toBe("**1**\n- b: 2\nRow\n");
    expect(cards(`${SIMPLE}\n\n`, false)).toBe("**1**\n- b: 2\n\n");
    expect(cards(`${SIMPLE}\n\nmore`, false)).toBe("**1**\n- b: 2\n\nmore");
  });

  it("converts every run before the still-growing one", () => {
    expect(cards(`${SIMPLE}\n\n| c | d |\n|---|---|\n| 3 |`, false)).toBe(
      "**1**\n- b: 2\n\n| c | d |\n|---|---|\n| 3 |",
    );
  });
});

describe("degenerate cases", () => {
  it("renders a header-only run as a grid under every converting policy", () => {
    for (const policy of ["cards", "grid", "auto", "native"] as const) {
      expect(renderTablesWithMetadata("| a | b |\n|---|---|\n", { policy })).toEqual({
        text: "```\na | b\n--+--\n```\n",
        generatedGrid: true,
      });
    }
  });

  it("falls back to a grid when every body row is empty", () => {
    expect(renderTablesWithMetadata("| a | b |\n|---|---|\n|  |  |\n|  |  |", { policy: "cards" })).toEqual({
      text: "```\na | b\n--+--\n  |\n  |\n```",
      generatedGrid: true,
    });
  });

  it("reports generatedGrid only when a grid was emitted", () => {
    expect(renderTablesWithMetadata(SIMPLE, { policy: "cards" }).generatedGrid).toBe(false);
    expect(renderTablesWithMetadata(SIMPLE, { policy: "grid" }).generatedGrid).toBe(true);
    expect(renderTablesWithMetadata(SIMPLE, { policy: "auto" }).generatedGrid).toBe(true);
    expect(renderTablesWithMetadata(SIMPLE, { policy: "off" }).generatedGrid).toBe(false);
    expect(renderTablesWithMetadata("no table", { policy: "grid" }).generatedGrid).toBe(false);
  });
});

describe("the shared fence machine", () => {
  // tables-blocks feeds messaging/fences.ts line by line and adds only list-item fences and HTML
  // blocks; on text with neither, its code lines must be exactly the shared machine's.
  const texts: string[] = (
    JSON.parse(readFileSync(new URL("../../../../fixtures/parity/tables.json", import.meta.url), "utf8")) as {
      args: unknown[];
    }[]
  )
    .map((record) => record.args[0])
    .filter((arg): arg is string => typeof arg === "string")
    .filter((text) => !/^ {0,3}(?:[-+*]|\d{1,9}[.)]) +(?:```|~~~)|^ {0,3}</m.test(text));

  it("marks exactly the lines iterFenceLines puts inside a fence", () => {
    expect(texts.length).toBeGreaterThan(300);
    for (const text of [...texts, "```\r\n| a |\r\n```\r\n| b |\r\n", "~~~\n\n~~~\n"]) {
      const lines = lineTable(text);
      const roles = [...iterFenceLines(text)].map(([, role]) => (role === "outside" ? 0 : 1));
      const ours = Array.from(opaqueLines(lines)).slice(0, roles.length);
      expect(ours).toEqual(roles);
    }
  });

  it("feeds the machine nothing from inside an HTML block", () => {
    const text = "<div>\n```\n</div>\n\n| a | b |\n|---|---|\n| 1 | 2 |";
    expect(cards(text)).toBe("<div>\n```\n</div>\n\n**1**\n- b: 2");
  });
});

// ---------------------------------------------------------------------------------------------
// Properties

const fragment = fc.constantFrom(
  "|",
  " | ",
  "\\|",
  "\\\\",
  "`",
  "``",
  "```",
  "~~~",
  "````",
  "a",
  "b c",
  "日本",
  "😀",
  "e\u0301",
  "\u200d",
  "-",
  "---",
  ":--",
  "--:",
  " ",
  "\t",
  "\n",
  "\n\n",
  "\r\n",
  "- ",
  "1. ",
  "> ",
  "# ",
  "    ",
  "  ",
  "[OPTIONS: a | b]",
  "<div>",
  "<!--",
  "-->",
  "<pre>",
  "**",
);
const cell = fc.constantFrom(
  "a",
  "b c",
  "",
  "`a|b`",
  "x \\| y",
  "日本",
  "```",
  "~~~x",
  "😀",
  "\\\\",
  "-",
  "---",
);
const indent = fc.constantFrom("", " ", "  ", "   ", "    ", "- ", "- ```\n  ");
const table = fc
  .tuple(
    indent,
    fc.array(cell, { minLength: 1, maxLength: 4 }),
    fc.array(fc.tuple(indent, fc.array(cell, { maxLength: 5 })), { maxLength: 5 }),
  )
  .map(([lead, header, rows]) =>
    [
      `${lead}| ${header.join(" | ")} |`,
      `${lead}|${header.map(() => "---").join("|")}|`,
      ...rows.map(([rowLead, cells]) => `${rowLead}| ${cells.join(" | ")} |`),
    ].join("\n"),
  );
const markdown = fc
  .array(
    fc.oneof(
      fc.array(fragment, { maxLength: 40 }).map((parts) => parts.join("")),
      table,
    ),
    {
      maxLength: 6,
    },
  )
  .map((blocks) => blocks.join("\n"));

const POLICIES: readonly TablePolicy[] = TABLE_POLICIES;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

describe("properties", () => {
  it("rendering is idempotent for every policy, final or streaming", () => {
    fc.assert(
      fc.property(
        markdown,
        fc.constantFrom(...POLICIES),
        fc.boolean(),
        fc.boolean(),
        (text, policy, nativeTables, final) => {
          const opts = { policy, nativeTables, final };
          const once = renderTables(text, opts);
          expect(renderTables(once, opts)).toBe(once);
        },
      ),
      { numRuns: 1500 },
    );
  });

  it("never throws on arbitrary input", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", maxLength: 300 }),
        fc.constantFrom(...POLICIES),
        (text, policy) => {
          renderTablesWithMetadata(text, { policy });
          renderTablesWithMetadata(text, { policy, final: false });
        },
      ),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 300 }), (text) => {
        renderTables(text, { policy: "auto" });
        displayWidth(text);
      }),
      { numRuns: 500 },
    );
  });

  it("off is byte-identical, and so is any text without a table-shaped run", () => {
    fc.assert(
      fc.property(markdown, (text) => {
        expect(renderTables(text, { policy: "off" })).toBe(text);
        expect(renderTables(text, { policy: "bogus", nativeTables: true })).toBe(text);
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(
        fc.string({ maxLength: 200 }).filter((text) => !text.includes("|")),
        (text) => {
          expect(renderTables(text, { policy: "cards" })).toBe(text);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("never cuts a surrogate pair", () => {
    fc.assert(
      fc.property(markdown, fc.constantFrom<TablePolicy>("cards", "grid", "auto"), (text, policy) => {
        const out = renderTables(text, { policy });
        expect(LONE_SURROGATE.test(out)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
});
