/**
 * The live half of the render kit, pure: the status line (phase, tool as the agent retitles and
 * finishes it, a wait in line, a silence that names /stop) and the paragraph rule around tools.
 */
import { describe, expect, it } from "vitest";
import { LiveStatus, ToolParagraphs } from "../../../src/messaging/channel/live-status.js";

describe("LiveStatus", () => {
  it("follows the phase: thinking, writing, a tool as the agent retitles and finishes it", () => {
    const s = new LiveStatus("/stop");
    expect(s.line).toBe("💭 Thinking…");
    s.writing();
    expect(s.line).toBe("✍️ Writing…");
    s.tool("t1", "Terminal");
    expect(s.line).toBe("🔧 Terminal…");
    s.toolChanged("t1", { title: "ls -la", status: "in_progress" });
    expect(s.line).toBe("🔧 ls -la…");
    s.toolChanged("t1", { status: "completed" });
    expect(s.line).toBe("✅ ls -la");
    s.tool("t2", "rm x");
    s.toolChanged("t2", { status: "failed" });
    expect(s.line).toBe("❌ rm x");
  });

  it("ignores an update to a tool it already left behind", () => {
    const s = new LiveStatus("/stop");
    s.tool("t1", "first");
    s.tool("t2", "second");
    s.toolChanged("t1", { title: "renamed first", status: "completed" });
    expect(s.line).toBe("🔧 second…");
  });

  it("says where the conversation waits in line for a free agent", () => {
    const s = new LiveStatus("/stop");
    s.agent({ type: "waiting", position: 3 });
    expect(s.line).toBe("⏳ Waiting for a free agent… (2 ahead)");
    s.agent({ type: "waiting", position: 1 });
    expect(s.line).toBe("⏳ Waiting for a free agent… (next in line)");
    s.thinking();
    expect(s.line).toBe("💭 Thinking…");
  });

  it("a silence says how long and how to end it, until the agent does anything again", () => {
    const s = new LiveStatus("`!stop`");
    s.tool("t1", "npm test");
    s.agent({ type: "silent", seconds: 30 });
    expect(s.line).toBe("⏳ No output from the agent for 30s · `!stop` ends the turn");
    s.agent({ type: "silent", seconds: 90 });
    expect(s.line).toBe("⏳ No output from the agent for 1m 30s · `!stop` ends the turn");
    s.toolChanged("t1", { status: "completed" });
    expect(s.line).toBe("✅ npm test");
  });

  it("a tool title is one bounded line; an empty one reads as Working", () => {
    const s = new LiveStatus("/stop");
    s.tool("t1", `cat a\n${"x".repeat(500)}`);
    expect(s.line).not.toContain("\n");
    expect(Array.from(s.line).length).toBeLessThanOrEqual(203);
    s.tool("t2", "");
    expect(s.line).toBe("🔧 Working…");
  });
});

describe("ToolParagraphs", () => {
  it("text after a tool call opens a new paragraph, once", () => {
    const p = new ToolParagraphs();
    expect(p.next("I'll list the files.", "x")).toBe("x");
    p.toolCalled();
    expect(p.next("I'll list the files.", "LISTED")).toBe("\n\nLISTED");
    expect(p.next("I'll list the files.\n\nLISTED", " more")).toBe(" more");
  });

  it("adds only what is missing, and nothing at the top of a message", () => {
    const p = new ToolParagraphs();
    p.toolCalled();
    expect(p.next("Line\n", "next")).toBe("\nnext");
    p.toolCalled();
    expect(p.next("Para\n\n", "next")).toBe("next");
    p.toolCalled();
    expect(p.next("", "first")).toBe("first");
    p.toolCalled();
    expect(p.next("Done.", "  \n\n  indented")).toBe("\n\n  indented");
  });
});
