import { afterEach, describe, expect, it } from "vitest";
import type { Stack } from "./helpers.js";
import { ALICE, DM, done, shown, startStack, text, untilFooter } from "./helpers.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe.each(["socket", "http"] as const)("slack e2e (%s)", (mode) => {
  it("answers a DM in the thread the message opens, streamed", async () => {
    stack = await startStack({ mode, turns: [[text("Hello "), text("there.\nSecond line.\n"), done]] });
    const { ts } = stack.fake.userMessage({ channel: DM, user: ALICE, text: "hi" });
    await untilFooter(stack.fake, DM);
    const replies = stack.fake.thread(DM, ts).filter((m) => m.bot);
    expect(replies).toHaveLength(1);
    expect(replies[0]?.threadTs).toBe(ts);
    expect(shown(stack.fake, DM, ts)[0]).toMatch(/^Hello there\.\nSecond line\.\n\nFinished in \d+s/);
    const [started] = stack.fake.callsTo("chat.startStream");
    expect(stack.fake.callsTo("chat.startStream")).toHaveLength(1);
    // Named in a DM too, as Bolt's sayStream does: the user who wrote, in their workspace.
    expect(started?.args).toMatchObject({ recipient_user_id: ALICE, recipient_team_id: stack.fake.teamId });
  });
});
