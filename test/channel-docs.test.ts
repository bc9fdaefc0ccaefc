/**
 * Every channel's doc carries its "Wire" table: each frame and field the client reads and each frame
 * its fake emits, with the platform source it was taken from. A row without a source is a guess.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const dir = new URL("../docs/channels/", import.meta.url);
const docs = readdirSync(dir).filter((f) => f.endsWith(".md"));
/** The channels whose fake has a folder of another name (the web chat is our own protocol: no fake). */
const FAKE_DIR: Readonly<Record<string, string>> = { imessage: "imsg" };
const hasFake = (channel: string) =>
  existsSync(new URL(`../test/fakes/${FAKE_DIR[channel] ?? channel}/`, import.meta.url));

/** The rows of the first table under `## Wire`, as cells. */
function wireRows(markdown: string): { header: string[]; rows: string[][] } {
  const section = markdown.split(/^## Wire\s*$/m)[1]?.split(/^## /m)[0] ?? "";
  const lines = section.split("\n").filter((l) => l.trim().startsWith("|"));
  const cells = (line: string) =>
    line
      .trim()
      .replace(/^\||\|$/g, "")
      .split(/(?<!\\)\|/)
      .map((c) => c.trim());
  const [header = "", , ...rows] = lines;
  return { header: cells(header).map((c) => c.toLowerCase()), rows: rows.map(cells) };
}

describe("channel docs", () => {
  it("cover all eleven channels", () => {
    expect(docs).toHaveLength(11);
  });

  for (const doc of docs)
    it(`${doc}: a Wire table whose every row names its source`, () => {
      const { header, rows } = wireRows(readFileSync(new URL(doc, dir), "utf8"));
      const source = header.findIndex((h) => h.includes("source"));
      expect(source, "a source column").toBeGreaterThanOrEqual(0);
      expect(rows.length).toBeGreaterThanOrEqual(5);
      const unsourced = rows.filter((r) => (r[source] ?? "").replace(/[`*_-]/g, "").trim() === "");
      expect(unsourced).toEqual([]);
      // The fake's frames are listed too, not only what the client reads.
      if (hasFake(doc.replace(/\.md$/, "")))
        expect(rows.some((r) => r.join(" ").toLowerCase().includes("fake"))).toBe(true);
    });
});
