/**
 * SlackSegment, pure: only settled whole lines reach the splitter (and so an append); a local image
 * reference is held from its first character, with everything after it, until the seal extracts it
 * whole; an [OPTIONS trailer is held while it arrives; a pipe table is flattened whole, never fed a
 * header without its rows; a fence cut by the cap is balanced in each chunk.
 */
import { describe, expect, it } from "vitest";
import { present, SlackSegment } from "../../src/slack/segment.js";
import { fenceLines } from "./helpers.js";

describe("SlackSegment", () => {
  it("holds a local image reference, and what follows it, until the seal", () => {
    const seg = new SlackSegment(3500);
    seg.append("Here is the chart:\n![chart](./out");
    seg.advance();
    expect(seg.committed + seg.fedText).not.toContain("![");
    seg.append(".png)\nand more text\n");
    seg.advance();
    // Nothing from the reference on was fed: the seal extracts it whole.
    expect(seg.fedText).toBe("Here is the chart:\n");
    expect(seg.remainder).toBe("![chart](./out.png)\nand more text\n");
    expect(seg.livePreview()).not.toContain("./out");
  });

  it("holds an [OPTIONS trailer while it arrives", () => {
    const seg = new SlackSegment(3500);
    seg.append("Pick one:\n[OPTIONS: a | b");
    seg.advance();
    expect(seg.fedText).not.toContain("OPTIONS");
    expect(seg.livePreview()).not.toContain("OPTIONS");
    seg.append(" | c]");
    seg.advance();
    expect(seg.fedText).not.toContain("OPTIONS");
  });

  it("flattens a pipe table whole: no header is fed without its rows", () => {
    const seg = new SlackSegment(3500);
    seg.append("Results:\n| name | score |\n|---|---|\n");
    seg.advance();
    expect(seg.fedText).toBe("Results:\n");
    seg.append("| ann | 3 |\n\nDone.\n");
    seg.advance();
    const chunks = seg.finish(seg.remainder);
    const shown = seg.committed + chunks.join("");
    expect(shown).not.toContain("|---|");
    expect(shown).toContain("**name:** ann");
    expect(present("| name | score |\n|---|---|\n| ann | 3 |\n")).toBe("- **name:** ann | **score:** 3\n");
  });

  it("cuts a long fenced answer into chunks within the limit, each fence-balanced", () => {
    const seg = new SlackSegment(500);
    const code = Array.from({ length: 60 }, (_, i) => `line ${i} = compute(${i})`).join("\n");
    seg.append(`Intro\n\n\`\`\`py\n${code}\n\`\`\`\nOutro\n`);
    const chunks = [...seg.advance(), ...seg.finish(seg.remainder)];
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) {
      expect(Array.from(c).length).toBeLessThanOrEqual(500);
      expect(fenceLines(c) % 2).toBe(0);
    }
  });
});
