/**
 * Parity with the Python original (fixtures/parity/options.json): every record runs. A record the
 * port deliberately answers differently is listed in DELIBERATE with its index, the port's actual
 * answer, and why that answer is better; everything else must match byte for byte.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  applyOptionsCap,
  capChoices,
  chunkText,
  displaySafe,
  displaySafeFor,
  formatOverflow,
  type OptionsCaps,
  renderOptionsAsText,
  splitOptionsTrailer,
} from "../../../src/messaging/text/options.js";

interface ParityRecord {
  fn: string;
  args: unknown[];
  kwargs: Record<string, unknown>;
  out: unknown;
}

interface PyCaps {
  max_buttons: number;
  mention_grammars: boolean;
}

const RECORDS: ParityRecord[] = JSON.parse(
  readFileSync(new URL("../../../fixtures/parity/options.json", import.meta.url), "utf8"),
);

function caps(raw: unknown): OptionsCaps {
  const py = raw as PyCaps;
  // The reference reads only max_buttons and the truthiness of mention_grammars.
  return { maxButtons: py.max_buttons, mentionGrammars: Boolean(py.mention_grammars) };
}

function run(record: ParityRecord): unknown {
  const a = record.args;
  switch (record.fn) {
    case "chunk_text":
      return chunkText(a[0] as string, a[1] as number);
    case "split_options_trailer": {
      const { body, choices } = splitOptionsTrailer(a[0] as string, {
        hidePartial: record.kwargs.hide_partial === true,
      });
      return [body, choices];
    }
    case "render_options_as_text":
      return renderOptionsAsText(a[0] as string, caps(a[1]));
    case "apply_options_cap": {
      const { body, choices } = applyOptionsCap(a[0] as string, a[1] as string[], caps(a[2]));
      return [body, choices];
    }
    case "cap_choices": {
      const { kept, overflow } = capChoices(a[0] as string[], caps(a[1]));
      return [kept, overflow];
    }
    case "format_overflow": {
      const raw = record.kwargs.capabilities;
      return formatOverflow(a[0] as string[], a[1] as number, raw == null ? undefined : caps(raw));
    }
    case "display_safe":
      return displaySafe(a[0] as string);
    case "display_safe_for":
      return displaySafeFor(a[0] as string, caps(a[1]));
    default:
      throw new Error(`options.json has a record for an unknown fn: ${record.fn}`);
  }
}

/** Record index -> the port's answer and why it differs. Empty: the port matches every record. */
const DELIBERATE: ReadonlyMap<number, { out: unknown; why: string }> = new Map();

describe("options parity (fixtures/parity/options.json)", () => {
  it("covers every function the fixture documents", () => {
    expect(new Set(RECORDS.map((r) => r.fn))).toEqual(
      new Set([
        "chunk_text",
        "split_options_trailer",
        "render_options_as_text",
        "apply_options_cap",
        "cap_choices",
        "format_overflow",
        "display_safe",
        "display_safe_for",
      ]),
    );
    expect(RECORDS.length).toBe(355);
  });

  it.each(RECORDS.map((record, index) => [index, record.fn, record] as const))(
    "record %i (%s)",
    (index, _fn, record) => {
      const deliberate = DELIBERATE.get(index);
      const actual = run(record);
      if (deliberate) {
        expect(actual).not.toEqual(record.out);
        expect(actual).toEqual(deliberate.out);
      } else {
        expect(actual).toEqual(record.out);
      }
    },
  );
});
