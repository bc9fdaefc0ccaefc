/**
 * SegmentBuffer, pure (the LiveRenderer's presentFirst splitter): only settled text reaches the
 * splitter; a local image reference and an [OPTIONS trailer are held until the seal; a growing
 * table holds the live frame; a long fenced answer is cut into chunks within the limit, each
 * fence-balanced.
 */
import { describe, expect, it } from "vitest";
import { SegmentBuffer } from "../../../src/messaging/text/segment-buffer.js";

const fences = (text: string) => text.split("\n").filter((l) => /^ {0,3}(`{3,}|~{3,})/.test(l)).length;

describe("SegmentBuffer", () => {
  it("holds a local image reference, and what follows it, until the seal", () => {
    const seg = new SegmentBuffer(3500);
    seg.append("Here is the chart:\n![chart](./out");
    seg.advance();
    seg.append(".png)\nand more text\n");
    seg.advance();
    expect(seg.fedText).toBe("Here is the chart:\n");
    expect(seg.remainder).toBe("![chart](./out.png)\nand more text\n");
    expect(seg.livePreview()).not.toContain("./out");
  });

  it("holds an [OPTIONS trailer while it arrives, hidden from the live frame", () => {
    const seg = new SegmentBuffer(3500);
    seg.append("Pick one:\n[OPTIONS: a | b");
    seg.advance();
    expect(seg.fedText).not.toContain("OPTIONS");
    expect(seg.livePreview()).not.toContain("OPTIONS");
  });

  it("a growing table holds the live frame; the seal renders it whole", () => {
    const seg = new SegmentBuffer(3500);
    seg.append("Results:\n| name | score |\n|---|---|\n| ann | 3 |\n");
    seg.advance();
    expect(seg.tableGrowing).toBe(true);
    expect(seg.livePreview()).toBeNull();
    const chunks = seg.finish(seg.remainder);
    expect(chunks.join("")).toContain("ann");
    expect(chunks.join("")).not.toContain("|---|");
  });

  it("cuts a long fenced answer into chunks within the limit, each fence-balanced", () => {
    const seg = new SegmentBuffer(500);
    const code = Array.from({ length: 60 }, (_, i) => `line ${i} = compute(${i})`).join("\n");
    seg.append(`Intro\n\n\`\`\`py\n${code}\n\`\`\`\nOutro\n`);
    const chunks = [...seg.advance(), ...seg.finish(seg.remainder)];
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) {
      expect(Array.from(c).length).toBeLessThanOrEqual(500);
      expect(fences(c) % 2).toBe(0);
    }
  });
});
