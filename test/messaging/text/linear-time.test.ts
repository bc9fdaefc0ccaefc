import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HOSTILE_GENERATORS } from "../../helpers/hostile-text.js";
import { TEXT_FUNCTIONS } from "../../helpers/text-functions.js";

/**
 * Issue 14, finding 5: every function agent text passes through runs in linear time on hostile
 * text. bench/linearity.bench.ts measures the time ratios; this property drives the same
 * generators and functions with no clock (a timed unit test fails on a loaded machine, not on a
 * slow function): the issue's own cases run at sizes where the quadratic versions needed minutes
 * (40k backticks took 6 s in the splitter, 20k `sk-` 0.8 s in redaction; ten times the size is a
 * hundred times that), so a regression fails by the suite's test timeout, and linear ones finish in
 * well under a second.
 */

describe("every text function handles hostile text (linearity: bench/linearity)", () => {
  it("runs each generator at 40k characters through every function", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...TEXT_FUNCTIONS),
        fc.constantFrom(...HOSTILE_GENERATORS),
        fc.integer({ min: 20_000, max: 40_000 }),
        ([, fn], gen, size) => {
          const text = gen.make(size);
          expect(() => fn(text)).not.toThrow();
        },
      ),
      { numRuns: 150 },
    );
  }, 60_000);

  it("handles the issue's own cases ten times over: 800k `sk-`, 400k backticks, a 1 MB line", () => {
    const cases: Array<[string, string]> = [
      ["redactAll", "sk-".repeat(270_000)],
      ["StreamRedactor16", "sk-".repeat(270_000)],
      ["splitMarkdownSafe", "`".repeat(400_000)],
      ["StreamingSplitter16", "~".repeat(400_000)],
      ["redactForDisplay", HOSTILE_GENERATORS.find((g) => g.name === "single-line")!.make(1 << 20)],
    ];
    for (const [name, text] of cases) {
      const fn = TEXT_FUNCTIONS.find(([n]) => n === name)![1];
      expect(() => fn(text)).not.toThrow();
    }
  });
});
