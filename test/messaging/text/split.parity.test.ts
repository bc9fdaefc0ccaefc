import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  chunkUtf8Bytes,
  iterFenceLines,
  iterFenceSpans,
  splitMarkdownBytes,
  splitMarkdownSafe,
  truncateUtf8,
} from "../../../src/messaging/text/split.js";

interface ParityRecord {
  fn: string;
  args: unknown[];
  kwargs: Record<string, unknown>;
  out: unknown;
}

const records: ParityRecord[] = JSON.parse(
  readFileSync(new URL("../../../fixtures/parity/split.json", import.meta.url), "utf8"),
);

function str(value: unknown): string {
  if (typeof value !== "string")
    throw new TypeError(`expected a string argument, got ${JSON.stringify(value)}`);
  return value;
}

function int(value: unknown): number {
  if (typeof value !== "number")
    throw new TypeError(`expected a number argument, got ${JSON.stringify(value)}`);
  return value;
}

function reserveOf(kwargs: Record<string, unknown>): { reserve?: number } {
  return kwargs.reserve === undefined ? {} : { reserve: int(kwargs.reserve) };
}

/** The reference reports code point offsets; the port reports UTF-16 offsets so callers can slice. */
function codePointSpansToUtf16(text: string, spans: Array<[number, number]>): Array<[number, number]> {
  const unitAt: number[] = [];
  let unit = 0;
  for (const ch of text) {
    unitAt.push(unit);
    unit += ch.length;
  }
  unitAt.push(unit);
  return spans.map(([a, b]) => [unitAt[a]!, unitAt[b]!]);
}

function call(record: ParityRecord): unknown {
  const [a, b] = record.args;
  switch (record.fn) {
    case "split_markdown_safe":
      return splitMarkdownSafe(str(a), int(b), reserveOf(record.kwargs));
    case "split_markdown_bytes":
      return splitMarkdownBytes(str(a), int(b), reserveOf(record.kwargs));
    case "chunk_utf8_bytes":
      return chunkUtf8Bytes(str(a), int(b));
    case "truncate_utf8":
      return truncateUtf8(str(a), int(b));
    case "iter_fence_spans":
      return iterFenceSpans(str(a));
    case "iter_fence_lines":
      return [...iterFenceLines(str(a))];
    default:
      throw new Error(`no port for ${record.fn}`);
  }
}

function expected(record: ParityRecord): unknown {
  if (record.fn === "iter_fence_spans") {
    return codePointSpansToUtf16(str(record.args[0]), record.out as Array<[number, number]>);
  }
  return record.out;
}

function raises(out: unknown): boolean {
  return typeof out === "object" && out !== null && "__raises__" in out;
}

/** Does the chunk, read on its own, end inside a fence it never closes? */
function endsInsideFence(chunk: string): boolean {
  let open = false;
  for (const [, role] of iterFenceLines(chunk)) {
    if (role === "open") open = true;
    if (role === "close") open = false;
  }
  return open;
}

/**
 * A line of nothing but fence markers, longer than the cap: the reference cuts it two markers at a
 * time (every longer prefix would open a fence), flooding the chat. The port cuts it hard at the cap
 * (issue 14, finding 11): the same markers, ceil(n / limit) messages.
 */
function markerFlood(marker: string, n: number, limit: number, refCount: number) {
  return {
    why:
      `The reference splits ${n} '${marker}' at ${limit} into ${refCount} messages of two markers; ` +
      "the port cuts a long marker run hard at the cap, so the count is ceil(n / limit).",
    check(got: string[], ref: string[]) {
      expect(ref).toHaveLength(refCount);
      expect(got.join("")).toBe(marker.repeat(n));
      expect(got).toHaveLength(Math.ceil(n / limit));
      expect(got.every((chunk) => chunk.length <= limit)).toBe(true);
    },
  };
}

/**
 * Records where the port deliberately differs, each with its reason; the test asserts what the port
 * does instead, so a change on either side is noticed.
 */
const DELIBERATE: Record<number, { why: string; check: (got: string[], ref: string[]) => void }> = {
  70: markerFlood("`", 200, 33, 85),
  74: markerFlood("~", 150, 33, 60),
  266: markerFlood("~", 150, 16, 68),
  270: {
    why:
      "The reference's UTF-8 floor re-cuts each oversize 16-character chunk alone, so every chunk leaves " +
      "a short remainder (12 bytes then 4, over and over) and the message count grows by half. The port " +
      "tries one more split at the proportional character budget and keeps whichever sends fewer " +
      "messages (issue 14, finding 10): the same text, every piece within the cap, fewer pieces.",
    check(got, ref) {
      expect(got.join("")).toBe(ref.join(""));
      expect(got.every((chunk) => Buffer.byteLength(chunk) <= 16)).toBe(true);
      expect(got.length).toBeLessThan(ref.length);
      expect(got.length).toBe(Math.ceil(Buffer.byteLength(ref.join("")) / 15));
    },
  },
  220: {
    why:
      "The reference seals the 13-character prefix '````js title=' of the opener line '````js title=\"x\"' " +
      "as a chunk of its own. Read alone, that chunk opens a code block it never closes: exactly the " +
      "fabricated delimiter the contract forbids (a cut's prefix must leave the fence state untouched). " +
      "The port keeps every cut of that line below the three-backtick run ('``', then '``js title=\"x'), " +
      "the treatment the reference itself gives the other opener lines it has to cut (#134, #136, #171, #194).",
    check(got, ref) {
      expect(got.slice(0, 18)).toEqual(ref.slice(0, 18));
      expect(ref.slice(18, 20)).toEqual(["````js title=", '"x"\n\n````']);
      expect(got.slice(18, 21)).toEqual(["``", '``js title="x', '"\n\n````']);
      expect(got.slice(21)).toEqual(ref.slice(20));
      expect(endsInsideFence(ref[18]!)).toBe(true);
      expect(got.slice(18, 20).some(endsInsideFence)).toBe(false);
    },
  },
};

describe("split parity with the Python reference (fixtures/parity/split.json)", () => {
  it("has the sample this harness was written against", () => {
    expect(records).toHaveLength(416);
    expect(new Set(records.map((r) => r.fn))).toEqual(
      new Set([
        "split_markdown_safe",
        "split_markdown_bytes",
        "chunk_utf8_bytes",
        "truncate_utf8",
        "iter_fence_spans",
        "iter_fence_lines",
      ]),
    );
  });

  it.each(records.map((record, index) => [index, record.fn, record] as const))(
    "#%i %s",
    (index, _fn, record) => {
      const deliberate = DELIBERATE[index];
      if (deliberate !== undefined) {
        deliberate.check(call(record) as string[], record.out as string[]);
        return;
      }
      if (raises(record.out)) {
        expect(() => call(record)).toThrow();
        return;
      }
      expect(call(record)).toEqual(expected(record));
    },
  );

  it("lists only deliberate differences that are real differences", () => {
    for (const index of Object.keys(DELIBERATE).map(Number)) {
      const record = records[index]!;
      expect(call(record)).not.toEqual(expected(record));
    }
  });
});
