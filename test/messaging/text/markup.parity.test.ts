import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  flattenMermaidBody,
  flattenPipeTables,
  stripThinkingTags,
} from "../../../src/messaging/text/markup.js";

/** Records of the Python original's behaviour (fixtures/parity/README.md). */
interface ParityRecord {
  fn: string;
  args: unknown[];
  kwargs: Record<string, unknown>;
  out: unknown;
}

const records: ParityRecord[] = JSON.parse(
  readFileSync(new URL("../../../fixtures/parity/markup.json", import.meta.url), "utf8"),
);

function text(value: unknown): string {
  if (typeof value !== "string") throw new TypeError(`expected a string, got ${JSON.stringify(value)}`);
  return value;
}

function flag(value: unknown): boolean {
  if (typeof value !== "boolean") throw new TypeError(`expected a boolean, got ${JSON.stringify(value)}`);
  return value;
}

function run(record: ParityRecord): unknown {
  const input = text(record.args[0]);
  switch (record.fn) {
    case "strip_thinking_tags": {
      const { visible, reasoning } = stripThinkingTags(input, {
        stripWhitespace: flag(record.kwargs.strip_whitespace),
        hidePartial: flag(record.kwargs.hide_partial),
      });
      return [visible, reasoning];
    }
    case "flatten_pipe_tables":
      return flattenPipeTables(input);
    case "flatten_mermaid_body":
      return flattenMermaidBody(input);
    default:
      throw new Error(`no port for ${record.fn}`);
  }
}

describe("markup parity with the Python original", () => {
  it("has records for every reduction", () => {
    const fns = new Set(records.map((r) => r.fn));
    expect([...fns].sort()).toEqual(["flatten_mermaid_body", "flatten_pipe_tables", "strip_thinking_tags"]);
    expect(records.length).toBeGreaterThan(100);
  });

  it.each(records.map((record, index) => [index, record.fn, record] as const))(
    "record %i (%s) matches",
    (_index, _fn, record) => {
      expect(run(record)).toEqual(record.out);
    },
  );
});
