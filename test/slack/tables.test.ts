/**
 * A pipe table is flattened for Slack after the kit cut the answer into chunks, and the flattened
 * form is longer than the table: every message (streamed or edited) still fits 3,900 code points,
 * nothing is lost, and a streamed message only ever appended what its seal kept.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Stack } from "./helpers.js";
import { ALICE, DM, done, settled, shown, startStack, text, untilFooter } from "./helpers.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const header = "| service name | owner team | status |\n|---|---|---|\n";
const rows = Array.from({ length: 60 }, (_, i) => `| svc-${i} | team-${i % 7} | ok |\n`).join("");

describe.each([
  ["streamed", true],
  ["edited", false],
] as const)("slack: a table that grows when flattened (%s)", (_name, streaming) => {
  it("keeps every message under the cap and every row readable", async () => {
    stack = await startStack({
      slack: { streaming },
      turns: [
        [
          text(`${"Prose before the table. ".repeat(40)}\n\n`),
          text(header),
          text(rows),
          text("\nDone."),
          done,
        ],
      ],
    });
    const { ts } = stack.fake.userMessage({ channel: DM, user: ALICE, text: "the services?" });
    await untilFooter(stack.fake, DM);
    await settled(stack);
    expect(stack.fake.violations).toEqual([]);
    for (const m of stack.fake.botMessages(DM)) expect(Array.from(m.text).length).toBeLessThanOrEqual(3900);
    const seen = shown(stack.fake, DM, ts).join("\n");
    for (let i = 0; i < 60; i++) expect(seen).toContain(`svc-${i}`);
    expect(seen).not.toContain("|---|");
    expect(seen).toContain("Done.");
  });
});
