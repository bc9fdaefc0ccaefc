/**
 * What Slack's native stream appends, pure: only settled whole lines (the kit's settledCut); a local
 * image reference is held from its first character, with everything after it, until the seal
 * extracts it whole; an [OPTIONS trailer is held while it arrives; a pipe table is held until it
 * ends, then presented whole (flattened: Slack draws no table), links with their targets shown.
 */
import { describe, expect, it } from "vitest";
import { settledCut } from "../../src/messaging/channel/live-stream.js";
import { present } from "../../src/slack/segment.js";

const settled = (text: string) => text.slice(0, settledCut(text));

describe("the Slack stream's settled text", () => {
  it("holds a local image reference, and what follows it, until the seal", () => {
    expect(settled("Here is the chart:\n![chart](./out")).toBe("Here is the chart:\n");
    expect(settled("Here is the chart:\n![chart](./out.png)\nand more text\n")).toBe("Here is the chart:\n");
  });

  it("holds an [OPTIONS trailer while it arrives and once it is whole", () => {
    // The line before it waits too: the trailer's cut may take its line break with it.
    expect(settled("Intro\nPick one:\n[OPTIONS: a | b")).toBe("Intro\n");
    expect(settled("Intro\nPick one:\n[OPTIONS: a | b | c]")).toBe("Intro\n");
  });

  it("settles only whole lines", () => {
    expect(settled("one\ntwo\nthr")).toBe("one\ntwo\n");
    expect(settled("no line break yet")).toBe("");
  });

  it("holds a pipe table until a line without pipes ends it, then presents it whole", () => {
    expect(settled("Results:\n| name | score |\n|---|---|\n")).toBe("Results:\n");
    const whole = "Results:\n| name | score |\n|---|---|\n| ann | 3 |\n\nDone.\n";
    expect(settled(whole)).toBe(whole);
    const shown = present(settled(whole));
    expect(shown).not.toContain("|---|");
    expect(shown).toContain("- **name:** ann | **score:** 3");
    expect(present("| name | score |\n|---|---|\n| ann | 3 |\n")).toBe("- **name:** ann | **score:** 3\n");
  });

  it("shows a link's target; code keeps its bytes", () => {
    expect(present("see [the docs](https://example.com/d)\n")).toBe("see the docs (https://example.com/d)\n");
    expect(present("```\n[x](https://e.com) | a |\n```\n")).toBe("```\n[x](https://e.com) | a |\n```\n");
  });
});
