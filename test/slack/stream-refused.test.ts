/**
 * Slack refuses native streaming (an app without it, an old workspace): the turn goes on by editing
 * one message, the answer lands whole and once, and the channel's later turns edit from the start.
 */
import { afterEach, describe, expect, it } from "vitest";
import { buttonsOf } from "../fakes/slack/server.js";
import type { Stack } from "./helpers.js";
import { ALICE, DM, done, settled, shown, startStack, text, untilFooter } from "./helpers.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe("slack: streaming refused", () => {
  it("edits instead, this turn and the next", async () => {
    stack = await startStack({
      turns: [
        [text("First line.\n"), text("Second line.\n"), done],
        [text("The next answer."), done],
      ],
    });
    const f = stack.fake;
    f.failNext("chat.startStream", { error: "not_allowed_token_type" });
    const { ts } = f.userMessage({ channel: DM, user: ALICE, text: "go" });
    await untilFooter(f, DM);
    await settled(stack);
    expect(f.callsTo("chat.startStream")).toHaveLength(1);
    expect(shown(f, DM, ts).filter((t) => t.includes("First line."))).toEqual([
      expect.stringMatching(/^First line\.\nSecond line\./),
    ]);
    expect(stack.logger.entries.some((e) => /streaming refused/.test(e.message))).toBe(true);
    f.userMessage({ channel: DM, user: ALICE, text: "again", threadTs: ts });
    await untilFooter(f, DM, 2);
    await settled(stack);
    // The refusal is remembered: no second try at a stream.
    expect(f.callsTo("chat.startStream")).toHaveLength(1);
    expect(shown(f, DM, ts).join("\n")).toContain("The next answer.");
  });

  it("refused at the seal: the answer is posted in mrkdwn, its buttons under it, and pings nobody", async () => {
    stack = await startStack({ turns: [[text("Pick one, <!channel>: [OPTIONS: Alpha | Beta]"), done]] });
    const f = stack.fake;
    f.failNext("chat.startStream", { error: "not_allowed_token_type" });
    const { ts } = f.userMessage({ channel: DM, user: ALICE, text: "go" });
    await untilFooter(f, DM);
    await settled(stack);
    expect(f.callsTo("chat.startStream")).toHaveLength(1);
    expect(f.controlSequences()).toEqual([]);
    const said = shown(f, DM, ts).join("\n");
    expect(said).toContain("Pick one");
    expect(said).toContain("Finished in");
    expect(f.botMessages(DM).flatMap((m) => buttonsOf(m).map((b) => b.label))).toEqual(["Alpha", "Beta"]);
  });
});
