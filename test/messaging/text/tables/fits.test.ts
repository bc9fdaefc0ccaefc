/**
 * `fits`: a grid that would cross one message of its target becomes cards (each readable on its
 * own once split); a run no card can show keeps its raw source, reported in `rawRuns` so the caller
 * can cut it losslessly. Without `fits` nothing changes.
 */
import { describe, expect, it } from "vitest";
import { renderTablesWithMetadata } from "../../../../src/messaging/text/tables/index.js";

const under = (max: number) => (grid: string) => grid.length <= max;

function longNarrow(rows: number): string {
  const body = Array.from({ length: rows }, (_, i) => `| r${i} | ${i} |`).join("\n");
  return `| k | v |\n|---|---|\n${body}`;
}

describe("tables that must fit one message", () => {
  it("a grid that fits stays a grid", () => {
    const r = renderTablesWithMetadata(longNarrow(3), { policy: "auto", fits: under(1000) });
    expect(r.generatedGrid).toBe(true);
    expect(r.text.startsWith("```")).toBe(true);
    expect(r.rawRuns).toBeUndefined();
  });

  it("a grid that would cross a message becomes cards", () => {
    const grid = renderTablesWithMetadata(longNarrow(80), { policy: "auto" });
    expect(grid.generatedGrid).toBe(true);
    const r = renderTablesWithMetadata(longNarrow(80), { policy: "auto", fits: under(200) });
    expect(r.generatedGrid).toBe(false);
    expect(r.text).not.toContain("```");
    expect(r.text).toContain("**r79**\n- v: 79");
    expect(r.rawRuns).toBeUndefined();
  });

  it("a run no card can show is kept raw, its offsets reported exactly", () => {
    const header = `| ${Array.from({ length: 60 }, (_, i) => `column${i}`).join(" | ")} |`;
    const delimiter = `|${"---|".repeat(60)}`;
    const table = `${header}\n${delimiter}`;
    const text = `Before the table.\n\n${table}\n\nAfter it.`;
    const r = renderTablesWithMetadata(text, { policy: "auto", fits: under(500) });
    expect(r.text).toBe(text);
    expect(r.generatedGrid).toBe(false);
    expect(r.rawRuns).toEqual([[19, 19 + table.length]]);
    const [start, end] = r.rawRuns?.[0] ?? [0, 0];
    expect(r.text.slice(start, end)).toBe(table);
  });

  it("offsets stay right when an earlier table was rendered and a later one kept raw", () => {
    const small = "| a | b |\n|---|---|\n| 1 | 2 |";
    const empty = `| ${"x".repeat(300)} | y |\n|---|---|\n|  |  |`;
    const text = `${small}\n\ntext\n\n${empty}\n`;
    const r = renderTablesWithMetadata(text, { policy: "auto", fits: under(100) });
    expect(r.generatedGrid).toBe(true);
    const [start, end] = r.rawRuns?.[0] ?? [0, 0];
    expect(r.text.slice(start, end)).toBe(empty);
    expect(r.text.endsWith(`${empty}\n`)).toBe(true);
  });
});
