import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HOSTILE_GENERATORS } from "../../helpers/hostile-text.js";
import { TEXT_FUNCTIONS } from "../../helpers/text-functions.js";

/**
 * Issue 14, finding 5: every function agent text passes through runs in linear time on hostile
 * text. bench/linearity.bench.ts measures the time ratios; this property drives the same
 * generators and functions under a generous wall-clock guard, which the quadratic versions failed
 * by seconds (40k backticks took 6 s in the splitter, 20k `sk-` 0.8 s in redaction) and linear ones
 * pass by two orders of magnitude. Sizes stay moderate so the suite stays quick on a shared machine.
 */
const GUARD_MS = 1500;

describe("every text function is linear on hostile text (wall-clock guard)", () => {
  it("finishes each generator at 40k characters well inside the guard", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...TEXT_FUNCTIONS),
        fc.constantFrom(...HOSTILE_GENERATORS),
        fc.integer({ min: 20_000, max: 40_000 }),
        ([name, fn], gen, size) => {
          const text = gen.make(size);
          const started = performance.now();
          fn(text);
          const ms = performance.now() - started;
          expect({ name, gen: gen.name, slow: ms > GUARD_MS }).toEqual({ name, gen: gen.name, slow: false });
        },
      ),
      { numRuns: 150 },
    );
  });

  it("handles the issue's own cases: 80k `sk-`, 40k backticks, a 1 MB line", () => {
    const cases: Array<[string, string]> = [
      ["redactAll", "sk-".repeat(27_000)],
      ["StreamRedactor16", "sk-".repeat(27_000)],
      ["splitMarkdownSafe", "`".repeat(40_000)],
      ["StreamingSplitter16", "~".repeat(40_000)],
      ["redactForDisplay", HOSTILE_GENERATORS.find((g) => g.name === "single-line")!.make(1 << 20)],
    ];
    for (const [name, text] of cases) {
      const fn = TEXT_FUNCTIONS.find(([n]) => n === name)![1];
      const started = performance.now();
      fn(text);
      expect(performance.now() - started).toBeLessThan(GUARD_MS * 2);
    }
  });
});
