import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  canonicalizeDisplay,
  dropFormatChars,
  joinsToACredential,
  redactForDisplay,
  safeSplitOffset,
  seversACredential,
  stripAnsi,
} from "../../../src/messaging/security/display-safety.js";

/**
 * Records of the Python original's behaviour (fixtures/parity/README.md). Its redactor was
 * `redact_credentials(redact_exfiltration_urls(text))`, which is the shared `redactAll` default.
 * Offsets and limits in `safe_split_offset` records are code points; the port takes a code-point
 * limit and answers a UTF-16 index, so expectations are converted below.
 */
interface ParityRecord {
  fn: string;
  args: unknown[];
  kwargs: Record<string, unknown>;
  out: unknown;
}

const records: ParityRecord[] = JSON.parse(
  readFileSync(new URL("../../../fixtures/parity/display_safety.json", import.meta.url), "utf8"),
);

function str(value: unknown): string {
  if (typeof value !== "string") throw new TypeError(`expected a string, got ${JSON.stringify(value)}`);
  return value;
}

function strs(value: unknown): string[] {
  if (!Array.isArray(value)) throw new TypeError(`expected an array, got ${JSON.stringify(value)}`);
  return value.map(str);
}

function num(value: unknown): number {
  if (typeof value !== "number") throw new TypeError(`expected a number, got ${JSON.stringify(value)}`);
  return value;
}

/** The UTF-16 index of code point `points` in `text`. */
function utf16Index(text: string, points: number): number {
  return Array.from(text).slice(0, points).join("").length;
}

function run(record: ParityRecord): unknown {
  const [a, b] = record.args;
  switch (record.fn) {
    case "strip_ansi":
      return stripAnsi(str(a));
    case "canonicalize_display":
      return canonicalizeDisplay(str(a));
    case "drop_format_chars":
      return dropFormatChars(str(a));
    case "redact_for_display": {
      const { text, changed } = redactForDisplay(str(a));
      return [text, changed];
    }
    case "joins_to_a_credential":
      return joinsToACredential(str(a), str(b));
    case "severs_a_credential":
      return seversACredential(strs(a));
    case "safe_split_offset":
      return safeSplitOffset(str(a), num(b));
    default:
      throw new Error(`no port for ${record.fn}`);
  }
}

/** What the reference answered, in the port's units. */
function expected(record: ParityRecord): unknown {
  if (record.fn === "safe_split_offset") return utf16Index(str(record.args[0]), num(record.out));
  return record.out;
}

/**
 * Each record where the port answers differently: its actual answer, and why that is better.
 *
 * `port` entries come from this module's extra readings and must keep differing. `redactor` entries
 * come from the shared redactor (src/messaging/security) redacting more than the original's did; they
 * assert the listed answer, but the reference answer is accepted too, so the redactor converging on
 * the original does not break this file. Every entry is in the safe direction, which the last
 * describe block checks: more redaction, with every span the reference redacted gone, or a cut
 * refused that the reference allowed.
 */
const DELIBERATE: ReadonlyMap<number, { out: unknown; cause: "port" | "redactor"; why: string }> = new Map([
  [
    26,
    {
      out: ["[REDACTED: credential]", true],
      cause: "port",
      why: "the literal match stops at the code span, so the reference left `cdefghijkl` on screen: rendered, the reader sees xoxb- + 20 characters, the rest of the Slack token. The port compares the redacted literal with the redacted deep reading and sends the latter when the literal left a tail",
    },
  ],
  [
    67,
    {
      out: ["[REDACTED: credential]", true],
      cause: "port",
      why: "the Slack-link label hides where the bearer token ends: the reference left `FNP2rE0YG8vQTxL-`, the token's last characters, beside the link; read deeply the label and its tail are one token, redacted whole",
    },
  ],
  [
    71,
    {
      out: ["[REDACTED: credential]", true],
      cause: "port",
      why: "the JWT's signature runs on inside `**JB3j**`: the reference's literal match stopped at the bold and left four signature characters visible; the deep reading takes the whole token",
    },
  ],
  [
    88,
    {
      out: [
        "region table the server key response warning error choose request: [REDACTED: credential]",
        true,
      ],
      cause: "port",
      why: "a link splits the JWT: the reference kept the 30-character signature tail after the link visible; the port redacts the rendered label and tail as one token",
    },
  ],
  [
    93,
    {
      out: [
        "https://app.example.com/x?token=[REDACTED: credential]\n\n\n[REDACTED: credential]\n\tcommit server approve token merge token merge quick over dog option",
        true,
      ],
      cause: "port",
      why: "the token parameter's value continues past the link (`sYxs1vUzjFz5GdI3S3Tm` stayed visible in the reference); the deep reading decodes `t&#111;ken&equals;` and joins label and tail, so the whole value is redacted, at the cost of the message's markup",
    },
  ],
  [
    117,
    {
      out: ["[REDACTED: credential]", true],
      cause: "port",
      why: "a soft hyphen (invisible) splits the Slack token: the reference redacted up to it and left `1A4Th5kI1d`, the rest of the token, visible. Dropped format characters make it one token",
    },
  ],
  [
    181,
    {
      out: ["[REDACTED: suspicious URL to 169.254.169.254]", true],
      cause: "port",
      why: "a code span splits the host of a metadata-service URL with a long query: the reference redacted only the query value, the port's deep reading sees the whole URL and withholds it",
    },
  ],
  [
    34,
    {
      out: ["[REDACTED: credential]", true],
      cause: "port",
      why:
        "rendered, the link label and its tail read dop_v1_ + 64 hex, a whole DigitalOcean token; the " +
        "original's canonical reading deletes every `_`, so dop_v1_ never matched. The reading that keeps " +
        "`_` sees it",
    },
  ],
  [
    150,
    {
      out: ["[REDACTED: credential]", true],
      cause: "port",
      why:
        "rendered, the code span vanishes and the reader sees ghp_ + 36 characters, a whole GitHub token; " +
        "the original's canonical reading turned ghp_ into ghp and missed it",
    },
  ],
  [
    212,
    {
      out: true,
      cause: "port",
      why:
        "message one ends `key**sk_`, message two opens `test_kjQa…`: the lone `**` stays literal on screen, " +
        "so the reader reads sk_test_ + 24 characters across the break. The original graded only canonical " +
        "readings, which delete the `_` and glue `key` to the key's first letter",
    },
  ],
  [
    227,
    {
      out: true,
      cause: "port",
      why:
        "the two halves render as sk_live_ + 24 characters once `**` vanishes; only a reading that keeps " +
        "`_` can see a Stripe key, and the original had none",
    },
  ],
  [
    228,
    {
      out: true,
      cause: "port",
      why: "the three-piece form of record 227: the same Stripe key, visible only in the reading that keeps `_`",
    },
  ],
  [
    223,
    {
      out: true,
      cause: "redactor",
      why:
        "the pieces render as ghr_ + 30 characters; the reading that keeps `_` shows it, and the shared " +
        "redactor counts that length as a GitHub token where the original's pattern wanted 36",
    },
  ],
  [
    73,
    {
      out: [
        "[REDACTED: credential]\t[REDACTED: credential]=bucket secret=[REDACTED: credential] commit key retry dog branch value retry run",
        true,
      ],
      cause: "redactor",
      why: "the shared redactor also treats `secret=commit` as a key/value secret; both reference redactions stay",
    },
  ],
  [
    80,
    {
      out: ['author*\u200c*ization": "[REDACTED: credential]', true],
      cause: "redactor",
      why:
        "the shared redactor already catches `bearer <token>` in the literal form, so the canonical form " +
        "reveals nothing more; the token the reference redacted is gone, only the word `authorization` shows",
    },
  ],
  [
    83,
    {
      out: [
        '"Authorization"": "[REDACTED: credential] response the region quick over value lazy server deploy client\n\nserver',
        true,
      ],
      cause: "redactor",
      why: "the shared redactor takes `bearer` together with its token; the reference redacted only the token",
    },
  ],
  [
    134,
    {
      out: [
        "[REDACTED: credential] bucket choose the https://app.example.c\u00adom/x&#x26;access_token={token}\n[REDACTED: credential] test error request retry retry build jumps config server table",
        true,
      ],
      cause: "redactor",
      why: "the shared redactor's bearer token runs on through `=cancel`; the reference stopped at `=`",
    },
  ],
  [
    168,
    {
      out: [
        "<https://x.example|https://app.example.com/x?access_token=[REDACTED: credential]>ACTED: credential]",
        true,
      ],
      cause: "redactor",
      why:
        "the shared redactor treats the access_token= value `[RED` as a secret in the literal form, which " +
        "the reference left alone; the reference redacted nothing, so nothing it redacted can survive",
    },
  ],
]);

const MARKER = /\[REDACTED: [^\]]*\]/g;

/**
 * The spans the reference replaced with markers, found by aligning the text between its markers
 * against the forms it may have emitted (literal, format-stripped, canonical).
 */
function referenceRedactedSpans(input: string, referenceOut: string): string[] {
  const segments = referenceOut.split(MARKER);
  const base = stripAnsi(input);
  for (const form of [base, dropFormatChars(base), canonicalizeDisplay(base)]) {
    const spans: string[] = [];
    const first = segments[0] ?? "";
    if (!form.startsWith(first)) continue;
    let pos = first.length;
    let aligned = true;
    for (const [i, segment] of segments.slice(1).entries()) {
      const last = i === segments.length - 2;
      const at = last ? form.length - segment.length : form.indexOf(segment, pos);
      if (at < pos || (last && !form.endsWith(segment))) {
        aligned = false;
        break;
      }
      spans.push(form.slice(pos, at));
      pos = at + segment.length;
    }
    if (aligned) return spans;
  }
  throw new Error(`cannot align the reference output ${JSON.stringify(referenceOut)}`);
}

/** Every way a reader could see `text` that the spans are checked against. */
function views(text: string): string[] {
  const plain = stripAnsi(text);
  return [plain, dropFormatChars(plain), canonicalizeDisplay(plain)];
}

describe("display-safety parity with the Python original", () => {
  it("has records for every function", () => {
    const fns = new Set(records.map((r) => r.fn));
    expect([...fns].sort()).toEqual([
      "canonicalize_display",
      "drop_format_chars",
      "joins_to_a_credential",
      "redact_for_display",
      "safe_split_offset",
      "severs_a_credential",
      "strip_ansi",
    ]);
  });

  const matching = records.flatMap((record, index) =>
    DELIBERATE.has(index) ? [] : [[index, record.fn, record] as const],
  );
  it.each(matching)("record %i (%s) matches", (_index, _fn, record) => {
    expect(run(record)).toEqual(expected(record));
  });

  const deliberate = [...DELIBERATE].map(([index, entry]) => [index, records[index]!, entry] as const);
  it.each(deliberate)("record %i differs deliberately", (_index, record, { out, cause, why }) => {
    expect(why.length).toBeGreaterThan(20);
    expect(out).not.toEqual(expected(record));
    const actual = run(record);
    if (cause === "port") expect(actual).toEqual(out);
    else expect([out, expected(record)]).toContainEqual(actual);
  });
});

describe("each deliberate difference is in the safe direction", () => {
  const deliberate = [...DELIBERATE].map(([index, entry]) => [index, records[index]!, entry] as const);

  it.each(deliberate)("record %i redacts at least what the reference did", (_index, record, { out }) => {
    switch (record.fn) {
      case "redact_for_display": {
        const input = str(record.args[0]);
        const [refText] = record.out as [string, boolean];
        const [text, changed] = out as [string, boolean];
        expect(changed).toBe(true);
        // Every span the reference redacted is gone from every form of the port's answer.
        for (const span of referenceRedactedSpans(input, refText)) {
          const needle = canonicalizeDisplay(stripAnsi(span));
          if (needle.length < 8) continue;
          for (const view of views(text)) expect(canonicalizeDisplay(view)).not.toContain(needle);
        }
        break;
      }
      case "joins_to_a_credential":
      case "severs_a_credential":
        // A sever the reference missed: the port refuses the cut, the safe answer.
        expect(record.out).toBe(false);
        expect(out).toBe(true);
        break;
      case "safe_split_offset": {
        const input = str(record.args[0]);
        // An earlier cut than the reference's, and a cut the port grades safe.
        const cut = num(out);
        expect(cut).toBeLessThan(num(expected(record)));
        if (cut > 0) expect(joinsToACredential(input.slice(0, cut), input.slice(cut))).toBe(false);
        break;
      }
      default:
        throw new Error(`${record.fn} has no deliberate difference`);
    }
  });
});
