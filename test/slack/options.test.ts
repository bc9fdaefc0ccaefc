/**
 * [OPTIONS:] as buttons: at most 5 (more are numbered in the text), resolved by the index the
 * pressed button carries to the label the user saw, and re-dispatched as the user's next message
 * with command interpretation OFF, so a model-authored `!new` is text for the agent, not a command.
 * A press by someone not allowed chooses nothing.
 */
import { afterEach, describe, expect, it } from "vitest";
import { buttonsOf } from "../fakes/slack/server.js";
import type { Stack } from "./helpers.js";
import { ALICE, DM, done, MALLORY, settled, shown, startStack, text, untilFooter } from "./helpers.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe("slack options", () => {
  it("shows at most 5 buttons; a press sends its label uninterpreted; a stranger's press chooses nothing", async () => {
    stack = await startStack({
      turns: [
        [text("Next step?\n[OPTIONS: !new | Deploy | Test | Lint | Format | Publish | Rollback]"), done],
        [text("Starting over? No: you chose a label."), done],
      ],
    });
    const f = stack.fake;
    const { ts: thread } = f.userMessage({ channel: DM, user: ALICE, text: "what now?" });
    await untilFooter(f, DM);
    await settled(stack);
    const card = f.botMessages(DM).find((m) => buttonsOf(m).length > 0);
    if (!card) throw new Error("no buttons");
    expect(buttonsOf(card).map((b) => b.label)).toEqual(["!new", "Deploy", "Test", "Lint", "Format"]);
    // The overflow is still readable, numbered, in the text.
    const said = shown(f, DM, thread).join("\n");
    expect(said).toMatch(/6\W+Publish/);
    expect(said).toMatch(/7\W+Rollback/);

    const first = buttonsOf(card)[0]?.actionId as string;
    await f.delivery.acked(f.press({ ts: card.ts, actionId: first, user: MALLORY }));
    await settled(stack);
    expect(stack.audit.find("inbound", "denied").map((r) => r.fields.user)).toEqual([MALLORY]);
    expect(stack.provider.prompts).toHaveLength(1);

    f.press({ ts: card.ts, actionId: first, user: ALICE });
    await untilFooter(f, DM, 2);
    await settled(stack);
    // The label reached the agent as the user's message; no fresh conversation was started.
    expect(JSON.stringify(stack.provider.prompts[1])).toContain("!new");
    expect(stack.startedKeys).toHaveLength(1);
    expect(shown(f, DM, thread).some((t) => t.includes("Fresh conversation"))).toBe(false);
    // The buttons went; the choice is written where they were.
    expect(buttonsOf(f.botMessages(DM).find((m) => m.ts === card.ts) as typeof card)).toEqual([]);
    expect(shown(f, DM, thread).join("\n")).toContain("✔️ !new");
  });
});
