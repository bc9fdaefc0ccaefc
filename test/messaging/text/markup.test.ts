import { describe, expect, it } from "vitest";
import {
  flattenMermaidBody,
  flattenPipeTables,
  MERMAID_INFO,
  stripThinkingTags,
} from "../../../src/messaging/text/markup.js";

describe("stripThinkingTags", () => {
  it("splits the answer from the reasoning, joining several blocks with a blank line", () => {
    expect(stripThinkingTags("x<thinking> a </thinking>y<thinking>b</thinking>z")).toEqual({
      visible: "xyz",
      reasoning: "a\n\nb",
    });
  });

  it("reads the namespaced spelling, mixed freely with the plain one", () => {
    const text = "<thinking>one</thinking>mid<thinking>two</thinking>end";
    expect(stripThinkingTags(text)).toEqual({ visible: "midend", reasoning: "one\n\ntwo" });
  });

  it("is case-sensitive, like the tag models emit", () => {
    expect(stripThinkingTags("<THINKING>x</THINKING>").visible).toBe("<THINKING>x</THINKING>");
  });

  it("ends a block at the FIRST closer, so an inner opener is content", () => {
    const text = "<thinking>a<thinking>b</thinking> tail";
    expect(stripThinkingTags(text)).toEqual({ visible: "tail", reasoning: "a<thinking>b" });
  });

  it("keeps an unterminated opener unless hidePartial asks a live frame to hide it", () => {
    const text = "answer <thinking>still arriving\n";
    expect(stripThinkingTags(text)).toEqual({ visible: "answer <thinking>still arriving", reasoning: "" });
    expect(stripThinkingTags(text, { hidePartial: true })).toEqual({
      visible: "answer",
      reasoning: "still arriving",
    });
  });

  it("skips empty blocks and keeps surrounding whitespace when asked", () => {
    expect(stripThinkingTags(" <thinking> </thinking> x ", { stripWhitespace: false })).toEqual({
      visible: "  x ",
      reasoning: "",
    });
  });

  it("strips like Python's str.strip(): U+0085 and U+001C are whitespace, U+FEFF is not", () => {
    expect(stripThinkingTags("\u0085\u001cx\u3000").visible).toBe("x");
    expect(stripThinkingTags("\ufeffx").visible).toBe("\ufeffx");
  });

  it("drops one tag from each edge of a block, as the original does", () => {
    expect(stripThinkingTags("<thinking><b>bold</b></thinking>").reasoning).toBe("<b>bold</b>");
    // A partial block's last tag is its edge too (Python's `$` also matches before a final newline).
    expect(stripThinkingTags("x <thinking>note <br>\n", { hidePartial: true })).toEqual({
      visible: "x",
      reasoning: "note",
    });
  });

  it("stays linear on adversarial input", () => {
    const openers = "<thinking>".repeat(50_000);
    const angles = `<thinking>${"<".repeat(100_000)}x>y</thinking>`;
    expect(stripThinkingTags(openers).visible).toBe(openers);
    expect(stripThinkingTags(angles).reasoning).toBe(`${"<".repeat(100_000)}x>y`);
  });
});

describe("flattenPipeTables", () => {
  it("rewrites a table as one labelled Markdown bullet per row", () => {
    const text = "intro\n| name | role |\n|---|:-:|\n| ada | admin |\n| bob | dev |\noutro";
    expect(flattenPipeTables(text)).toBe(
      "intro\n- **name:** ada | **role:** admin\n- **name:** bob | **role:** dev\noutro",
    );
  });

  it("requires a separator row, so a lone pipe line is never swallowed as a header", () => {
    expect(flattenPipeTables("| a | b |\n| 1 | 2 |")).toBe("| a | b |\n| 1 | 2 |");
  });

  it("passes a table with no data rows through verbatim", () => {
    expect(flattenPipeTables("| a | b |\n|---|---|\nprose")).toBe("| a | b |\n|---|---|\nprose");
    expect(flattenPipeTables("| a |\n|---|\n|  |")).toBe("| a |\n|---|\n|  |");
  });

  it("skips empty cells, leaves surplus cells unlabelled and drops an empty row", () => {
    const text = "| a | b |\n|---|---|\n|  | 2 | extra |\n|  |  |";
    expect(flattenPipeTables(text)).toBe("- **b:** 2 | extra");
  });

  it("leaves an unlabelled column's cells bare", () => {
    expect(flattenPipeTables("|  | b |\n|---|---|\n| 1 | 2 |")).toBe("- 1 | **b:** 2");
  });

  it("needs a leading and a trailing pipe on every row, and a dash in the separator", () => {
    expect(flattenPipeTables("| a | b\n|---|---|\n| 1 | 2 |")).toBe("| a | b\n|---|---|\n| 1 | 2 |");
    expect(flattenPipeTables("| a |\n| : |\n| 1 |")).toBe("| a |\n| : |\n| 1 |");
    expect(flattenPipeTables("| a |\n|-x-|\n| 1 |")).toBe("| a |\n|-x-|\n| 1 |");
  });

  it("reads indented and CRLF tables, and ends a table at the first non-row line", () => {
    expect(flattenPipeTables("  | a |\r\n  |---|\r\n  | 1 |\r\n- | 2 |")).toBe("- **a:** 1\n- | 2 |");
  });

  it("emits Markdown bold, never a channel dialect", () => {
    expect(flattenPipeTables("| k |\n|---|\n| v |")).toBe("- **k:** v");
  });
});

describe("flattenMermaidBody", () => {
  it("exposes the fence info string callers compare against", () => {
    expect(MERMAID_INFO).toBe("mermaid");
  });

  it("reads a flowchart as indented arrows, using node labels as they are defined", () => {
    const body = "graph LR\n  A[Client] -->|request| B{Server}\n  B --> C(db)\n  A ==> B[Worker]\n  B -.- C";
    expect(flattenMermaidBody(body)).toBe("  Client → (request) Server\n  Server → C\n  Client → Worker");
  });

  it("applies a line's own labels to both of its ends before drawing it", () => {
    expect(flattenMermaidBody("flowchart TD\n  n --> n[late]")).toBe("  late → late");
  });

  it("keeps the four sequence arrow types distinct", () => {
    const body = "sequenceDiagram\nA->>B: solid\nA-->>B: dashed\nA->B: open\nA-->B: dashed open\nA-xB: lost";
    expect(flattenMermaidBody(body)).toBe(
      "  A → B: solid\n  A ⇒ B: dashed\n  A ⇢ B: open\n  A ⤳ B: dashed open",
    );
  });

  it("answers '' (keep the source) for an unread grammar or a diagram with no readable line", () => {
    expect(flattenMermaidBody('pie title Pets\n"Dogs" : 386')).toBe("");
    expect(flattenMermaidBody("flowchart\n  A --> B")).toBe("");
    expect(flattenMermaidBody("graph TD\n  A -> B")).toBe("");
    expect(flattenMermaidBody("   ")).toBe("");
  });

  it("stays linear on a long line with no arrow", () => {
    expect(flattenMermaidBody(`graph TD\n${"a".repeat(200_000)}`)).toBe("");
  });
});
