import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FinalAppendGate } from "../../../src/messaging/security/append-gate.js";
import {
  canonicalizeDisplay,
  decodeCharacterReferences,
  displayReadings,
  redactForDisplay,
} from "../../../src/messaging/security/display-safety.js";
import { credentialDisguiseArbitrary, survivesIn } from "../../helpers/credential-disguises.js";

const KEY = "AKIAQ7ZR3M5TXW2KP9VB";

/** Cut `text` at the given sizes (UTF-16 units; a surrogate pair may land in two pieces). */
function piecesOf(text: string, sizes: number[]): string[] {
  const out: string[] = [];
  let at = 0;
  for (const size of sizes) {
    if (at >= text.length) break;
    out.push(text.slice(at, at + size));
    at += size;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

/**
 * Drive the gate the way a streaming renderer does: the source grows piece by piece, every offer is
 * the source not yet consumed (with `lineComplete` when the caller knows the last line ended), and
 * the stream ends with `finish`. Returns everything shown and whether a breach was reported.
 */
function stream(pieces: readonly string[], mode: "partial" | "lines"): { shown: string; breach: boolean } {
  const gate = new FinalAppendGate();
  let source = "";
  let consumed = 0;
  let shown = "";
  for (const piece of pieces) {
    source += piece;
    let pending = source.slice(consumed);
    let lineComplete = false;
    if (mode === "lines") {
      // A line-granular caller (the Slack renderer): complete lines only, trailing whitespace held.
      const end = pending.lastIndexOf("\n");
      if (end < 0) continue;
      pending = pending.slice(0, end).replace(/\s+$/u, "");
      lineComplete = true;
    }
    const step = gate.next(pending, { lineComplete });
    expect(pending.startsWith(pending.slice(0, step.consumed))).toBe(true);
    consumed += step.consumed;
    shown += step.append;
    expect(gate.shown).toBe(shown);
  }
  const last = gate.finish(source.slice(consumed));
  return { shown: shown + last.append, breach: last.breach };
}

/** Every form a reader can end up seeing of `shown` (markup rendered, references decoded). */
function seen(shown: string): string[] {
  return [...displayReadings(shown), canonicalizeDisplay(decodeCharacterReferences(shown))];
}

describe("FinalAppendGate", () => {
  it("never shows a disguised credential, however the stream is cut (partial offers)", () => {
    fc.assert(
      fc.property(
        credentialDisguiseArbitrary(),
        fc.array(fc.integer({ min: 1, max: 9 }), { maxLength: 40 }),
        fc.constantFrom("", "Intro line.\n", "x **"),
        (sample, sizes, lead) => {
          const pieces = [lead, ...sample.chunks.flatMap((c) => piecesOf(c, sizes)), " and more.\nEnd."];
          const { shown, breach } = stream(pieces, "partial");
          expect(breach).toBe(false);
          for (const form of seen(shown)) expect(survivesIn(form, sample), form).toBe(false);
          // What was shown is a fixed point: no reading of the joined appends reveals anything more.
          expect(redactForDisplay(shown).text).toBe(shown);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("never shows a disguised credential when offered whole lines (the streaming renderer's way)", () => {
    fc.assert(
      fc.property(
        credentialDisguiseArbitrary(),
        fc.array(fc.integer({ min: 1, max: 9 }), { maxLength: 40 }),
        (sample, sizes) => {
          const text = `First line.\n${sample.text}\nsecond ${sample.text} line\nlast`;
          const { shown, breach } = stream(piecesOf(text, sizes), "lines");
          expect(breach).toBe(false);
          for (const form of seen(shown)) expect(survivesIn(form, sample), form).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("changes nothing in text that needs no redaction: it only delays it", () => {
    const words = fc.constantFrom(
      "alpha ",
      "beta\n",
      "**bold** ",
      "`code` ",
      "[link](https://x.test) ",
      "\n\n",
    );
    fc.assert(
      fc.property(
        fc.array(words, { maxLength: 40 }).map((w) => w.join("")),
        fc.array(fc.integer({ min: 1, max: 7 }), { maxLength: 60 }),
        fc.constantFrom("partial", "lines"),
        (text, sizes, mode) => {
          fc.pre(redactForDisplay(text).text === text);
          expect(stream(piecesOf(text, sizes), mode as "partial" | "lines").shown).toBe(text);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("holds a key's first half while emphasis could still join it to the next append", () => {
    const gate = new FinalAppendGate();
    const first = gate.next(`Your key is AKIA**${KEY.slice(4, 10)}`);
    expect(first.append).toBe("");
    const line = gate.next(`Your key is AKIA**${KEY.slice(4, 10)}${KEY.slice(10)}** ok\n`);
    expect(line.append).not.toContain("AKIA");
    expect(line.append).toContain("[REDACTED");
    expect(gate.finish("").breach).toBe(false);
  });

  it("shows a finished line at once when the caller says the line ended", () => {
    const gate = new FinalAppendGate();
    expect(gate.next("Hello world.", { lineComplete: true })).toEqual({
      append: "Hello world.",
      consumed: 12,
    });
    // Without that knowledge the unfinished line waits: markup on it could still change it.
    expect(new FinalAppendGate().next("Hello world.").append).toBe("");
  });

  it("never shows the body of a PEM block, open or closed", () => {
    const gate = new FinalAppendGate();
    const pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq9\n";
    const first = gate.next(`Key:\n${pem}`);
    expect(first.append.startsWith("Key:\n")).toBe(true);
    const end = gate.finish(`${pem.slice(first.consumed - 5)}-----END RSA PRIVATE KEY-----\n`);
    expect(end.breach).toBe(false);
    expect(gate.shown).not.toContain("MIIEowIBAAKCAQEA7bq9");
  });
});
