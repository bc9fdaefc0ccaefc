/**
 * The Gateway through @discordjs/ws against the fake: a dropped connection resumes, and a gateway
 * that keeps closing right after accepting stays on the reconnect guard's exponential curve.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Stack } from "./helpers.js";
import { ALICE, DM, startStack, untilFooter } from "./helpers.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const backoffs = (s: Stack) =>
  s.logger.entries
    .filter((r) => r.message === "discord gateway reconnect backoff")
    .map((r) => (r.fields as { ms: number }).ms);

describe("discord gateway", () => {
  it("resumes after a drop, backing off more on each short-lived connection, and still answers", async () => {
    stack = await startStack({
      turns: [
        [
          { type: "text", text: "Still here." },
          { type: "complete", stopReason: "end_turn" },
        ],
      ],
      overrides: { client: { reconnect: { baseMs: 20, minHealthyMs: 60_000 } } },
    });
    for (let i = 1; i <= 3; i++) {
      const before = stack.fake.calls.length;
      stack.fake.dropGateway(4000);
      await vi.waitFor(() => expect(backoffs(stack as Stack)).toHaveLength(i), { timeout: 5000 });
      await vi.waitFor(() => expect(stack?.running.client.connected).toBe(true), { timeout: 5000 });
      expect(stack.fake.calls.length).toBe(before); // a resume needs no new discovery or identify
    }
    expect(backoffs(stack)).toEqual([20, 40, 80]);
    expect(stack.fake.identifies).toHaveLength(1);
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "still there?" });
    await untilFooter(stack.fake, DM);
  });
});
