/**
 * Turns end to end against the fake: only the final answer (no placeholder), plain text with
 * options numbered, a credential in halves or hidden by markup never sent, approvals typed 1/2 with
 * the prompt and its timeout as their own messages, and mid-turn messages steered into a live turn
 * or queued behind it with one receipt per burst, drained as one turn.
 */
import { describe, expect, it } from "vitest";
import { RECEIPT_MAX_ITEMS } from "../../src/messaging/queue/receipt.js";
import type { ScriptedTurn } from "../../src/providers/scripted.js";
import { waitFor } from "../fakes/imsg/control.js";
import { permissionRequest } from "../helpers/events.js";
import { ManualClock } from "../helpers/manual-clock.js";
import { caughtUp, done, imsgLab, OWNER, text } from "./channel-harness.js";

const lab = imsgLab();
const SECRET = "AKIAQ7ZR3M5TXW2KP9VB";
const sentWith = (needle: string) => () =>
  lab
    .folder()
    .sent(OWNER)
    .some((t) => t.includes(needle));

describe("an answer", () => {
  it("is one plain-text message, no placeholder before it, options numbered", async () => {
    const folder = lab.folder();
    await lab.channel({
      turns: () => [
        [
          { type: "thinking", text: "hmm" },
          { type: "tool_call", toolCallId: "t0", title: "look", kind: "read" },
          text("## Pick\n\n**One** of:\n[OPTIONS: red | green]"),
          done,
        ],
      ],
    });
    await folder.incoming(OWNER, "choose");
    await waitFor(sentWith("Pick"), "the answer");
    expect(folder.sent(OWNER)).toHaveLength(1);
    expect(folder.sent(OWNER)[0]).toMatch(/^Pick\n\nOne of:\n\n1\. red\n2\. green\n\nFinished in \d+s$/);
  });

  it(`${SECRET} split across two chunks, or inside markdown that flattening removes, never reaches a send`, async () => {
    const folder = lab.folder();
    await lab.channel({
      turns: () => [
        [
          text(`one ${SECRET.slice(0, 9)}`),
          text(`${SECRET.slice(9)} two\n\n`),
          text(`three AKIA**${SECRET.slice(4, 12)}**${SECRET.slice(12)} four\n\n`),
          text(`five [${SECRET.slice(0, 10)}](https://example.com/x)${SECRET.slice(10)} six\n\n`),
          text(`seven \`${SECRET.slice(0, 6)}\`${SECRET.slice(6)} eight\n\n`),
          text(`nine ${"x".repeat(3_990)}${SECRET}`),
          done,
        ],
      ],
    });
    await folder.incoming(OWNER, "show me the keys");
    await waitFor(sentWith("Finished"), "the answer");
    const everything = folder.sent(OWNER).join("\n");
    expect(everything).toContain("one");
    expect(everything).toContain("nine");
    expect(everything).not.toContain(SECRET.slice(4));
    expect(everything.replace(/[\s*_`[\]()]/g, "")).not.toContain(SECRET.slice(4));
  });
});

describe("approvals", () => {
  const guarded = (title: string, after: string): ScriptedTurn => ({
    steps: [text("Let me check."), permissionRequest({ requestId: "r1", title })],
    onPermission: { approve: [text(`${after}: done`), done], deny: [text(`${after}: skipped`), done] },
  });

  it("the prompt is its own message; a typed 1 approves while it is open; the outcome is a new message", async () => {
    const folder = lab.folder();
    const c = await lab.channel({ supportsSteer: true, turns: () => [guarded("rm -rf build", "cleanup")] });
    await folder.incoming(OWNER, "clean up");
    await waitFor(sentWith("Permission needed: rm -rf build"), "the prompt");
    const [before, prompt] = folder.sent(OWNER);
    expect(before).toBe("Let me check.");
    expect(prompt).toMatch(/Reply 1 to approve or 2 to deny\.$/);
    await folder.incoming(OWNER, "1");
    await waitFor(sentWith("cleanup: done"), "the continuation");
    const provider = [...c.providers.values()][0];
    expect(provider?.answers).toEqual([{ requestId: "r1", verdict: "approve" }]);
    expect(provider?.prompts).toEqual(["clean up"]);
    expect(provider?.steers).toEqual([]);
    const sent = folder.sent(OWNER);
    expect(sent.indexOf("🔐 rm -rf build: ✅ Approved (this once)")).toBe(2);
  });

  it("silence denies, and the timeout comes as a new message", async () => {
    const folder = lab.folder();
    const c = await lab.channel({
      turns: () => [guarded("drop the table", "drop")],
      overrides: { approvalTimeoutMs: 300 },
    });
    await folder.incoming(OWNER, "tidy the database");
    await waitFor(sentWith("drop: skipped"), "the continuation");
    expect([...c.providers.values()][0]?.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
    expect(folder.sent(OWNER)).toContain("🔐 drop the table: ⌛ No answer in time: denied");
  });
});

describe("mid-turn", () => {
  it("steered into a live turn when the agent takes it", async () => {
    const clock = new ManualClock();
    const folder = lab.folder();
    const c = await lab.channel({
      supportsSteer: true,
      provider: { timers: clock },
      turns: () => [[{ delayMs: 1000 }, text("done"), done]],
    });
    await folder.incoming(OWNER, "first");
    await waitFor(() => [...c.providers.values()][0]?.hasActiveTurn() === true, "the turn");
    await folder.incoming(OWNER, "and this too");
    await waitFor(() => [...c.providers.values()][0]?.steers.length === 1, "steered");
    await clock.advance(1000);
    await waitFor(sentWith("done"), "the answer");
    expect(folder.sent(OWNER)).toHaveLength(1);
  });

  it("queued behind a turn that cannot be steered: one receipt per burst, never edited, drained as one turn", async () => {
    const clock = new ManualClock();
    const folder = lab.folder();
    const c = await lab.channel({
      queueMode: "queue",
      provider: { timers: clock },
      turns: () => [
        [{ delayMs: 1000 }, text("first done"), done],
        [text("the rest done"), done],
      ],
    });
    await folder.incoming(OWNER, "first");
    await waitFor(() => [...c.providers.values()][0]?.hasActiveTurn() === true, "the turn");
    await folder.incoming(OWNER, "second");
    await folder.incoming(OWNER, "third");
    await waitFor(() => folder.sent(OWNER).length === 1, "the receipt");
    await caughtUp(c, folder);
    await new Promise((r) => setTimeout(r, 200));
    // One receipt for the burst (there is no edit to update it with).
    expect(folder.sent(OWNER)).toHaveLength(1);
    expect(RECEIPT_MAX_ITEMS).toBeGreaterThan(1);
    await clock.advance(1000);
    await waitFor(sentWith("the rest done"), "the drained turn");
    const prompts = [...c.providers.values()][0]?.prompts ?? [];
    expect(prompts).toHaveLength(2);
    expect(prompts[1]).toContain("second");
    expect(prompts[1]).toContain("third");
    expect(folder.sent(OWNER)).toHaveLength(3);
  });
});
