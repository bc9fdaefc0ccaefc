/**
 * Parity with the Python reference (fixtures/parity/tables.json): every record is run, and every
 * one must match byte for byte. There are no deliberate differences inside this record set; the
 * port's deliberate departures (card items that would open a fence, unassigned code points) are
 * outside it and pinned in tables.test.ts.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  displayWidth,
  normalizeTablePolicy,
  renderTables,
  renderTablesWithMetadata,
  resolveTablePolicy,
} from "../../../../src/messaging/text/tables/index.js";

interface ParityRecord {
  fn: string;
  args: unknown[];
  kwargs: Record<string, unknown>;
  out: unknown;
}

const records: ParityRecord[] = JSON.parse(
  readFileSync(new URL("../../../../fixtures/parity/tables.json", import.meta.url), "utf8"),
);

function str(value: unknown): string {
  if (typeof value !== "string") throw new TypeError(`expected a string, got ${JSON.stringify(value)}`);
  return value;
}

function renderOptions(kwargs: Record<string, unknown>) {
  const policy = kwargs.policy;
  if (policy !== null && typeof policy !== "string") throw new TypeError("policy must be a string or null");
  return {
    policy,
    nativeTables: kwargs.native_tables === true,
    final: kwargs.final !== false,
  };
}

// Results are normalised to the reference's JSON shape (tuples as arrays) for comparison.
function call(record: ParityRecord): unknown {
  const [first] = record.args;
  switch (record.fn) {
    case "render_tables":
      return renderTables(str(first), renderOptions(record.kwargs));
    case "render_tables_with_metadata": {
      const result = renderTablesWithMetadata(str(first), renderOptions(record.kwargs));
      return [result.text, result.generatedGrid];
    }
    case "resolve_table_policy":
      return resolveTablePolicy(first === null ? null : str(first), {
        nativeTables: record.kwargs.native_tables === true,
      });
    case "normalize_table_policy":
      return normalizeTablePolicy(first);
    case "display_width":
      return displayWidth(str(first));
    default:
      throw new Error(`no port for ${record.fn}`);
  }
}

describe("tables parity with the reference", () => {
  it("the fixture holds every function family", () => {
    const families = new Set(records.map((r) => r.fn));
    expect([...families].sort()).toEqual([
      "display_width",
      "normalize_table_policy",
      "render_tables",
      "render_tables_with_metadata",
      "resolve_table_policy",
    ]);
    expect(records.length).toBe(410);
  });

  it.each(records.map((record, index) => [index, record.fn, record] as const))(
    "record %i (%s)",
    (_index, _fn, record) => {
      expect(call(record)).toEqual(record.out);
    },
  );
});
