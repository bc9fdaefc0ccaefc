/**
 * slack.showThinking: the agent's reasoning is shown once, redacted, in its own message ahead of
 * the answer, streamed and edited alike (an edited turn's live message opened before the agent
 * reasoned becomes the reasoning, and the answer opens below it).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Stack } from "./helpers.js";
import { ALICE, DM, done, settled, startStack, text, untilFooter } from "./helpers.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe.each([
  ["streamed", true],
  ["edited", false],
] as const)("slack: the reasoning preview (%s)", (_name, streaming) => {
  it("shows the reasoning once, above the answer", async () => {
    stack = await startStack({
      slack: { streaming, showThinking: true },
      turns: [
        [
          { type: "thinking", text: "The user wants the build status." },
          text("The build is green.\n"),
          text("All 40 checks passed."),
          done,
        ],
      ],
    });
    stack.fake.userMessage({ channel: DM, user: ALICE, text: "status?" });
    await untilFooter(stack.fake, DM);
    await settled(stack);
    const said = stack.fake.botMessages(DM).map((m) => stack?.fake.visible(m) ?? "");
    const reasoning = said.filter((t) => t.includes("The user wants the build status."));
    expect(reasoning).toHaveLength(1);
    const answerAt = said.findIndex((t) => t.includes("The build is green."));
    expect(said.indexOf(reasoning[0] as string)).toBeLessThan(answerAt);
    expect(said[answerAt]).toContain("All 40 checks passed.");
  });
});
