import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HOSTILE_GENERATORS } from "../../helpers/hostile-text.js";
import { TEXT_FUNCTIONS } from "../../helpers/text-functions.js";

/**
 * Issue 14, finding 5: every function agent text passes through runs in linear time on hostile
 * text. bench/linearity.bench.ts measures the time ratios; this property drives the same generators
 * and functions under a wall-clock guard generous enough that a loaded machine cannot trip it: the
 * sizes are where the quadratic versions needed minutes (40k backticks took 6 s in the splitter, 20k
 * `sk-` 0.8 s in redaction; five times the size is twenty-five times that), while a linear function
 * takes well under a second, so the guard sits two orders of magnitude from both.
 */
const GUARD_MS = 10_000;

describe("every text function is linear on hostile text (a generous wall-clock guard)", () => {
  it("finishes each generator at 100k-200k characters well inside the guard", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...TEXT_FUNCTIONS),
        fc.constantFrom(...HOSTILE_GENERATORS),
        fc.integer({ min: 100_000, max: 200_000 }),
        ([name, fn], gen, size) => {
          const text = gen.make(size);
          const started = performance.now();
          fn(text);
          const slow = performance.now() - started > GUARD_MS;
          expect({ name, gen: gen.name, slow }).toEqual({ name, gen: gen.name, slow: false });
        },
      ),
      { numRuns: 60 },
    );
  }, 300_000);

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
