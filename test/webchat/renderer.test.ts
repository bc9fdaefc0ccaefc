/**
 * The web chat renderer on the kit's LiveRenderer: what a bubble's separate fields get (text,
 * status, final, role, buttons, chips), the opening frames that go out at once, and a seal whose
 * bubble is gone posting a new one.
 */
import { describe, expect, it, vi } from "vitest";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import type { PromptOption } from "../../src/messaging/turn/renderer.js";
import { WebChatRenderer } from "../../src/webchat/renderer.js";
import { WebChatTransport } from "../../src/webchat/transport.js";
import { testDrops } from "../helpers/drops.js";
import { ManualClock, settle } from "../helpers/manual-clock.js";

const CONV = "c1";
const PROMPT = { toolTitle: "Run ls", toolPurpose: "", nonce: "n1" };
const OPTIONS: PromptOption[] = [
  { id: "o1", label: "Approve", verdict: "approve" },
  { id: "o2", label: "Deny", verdict: "deny" },
];

function setup() {
  const transport = new WebChatTransport({
    drops: testDrops(new MemoryAuditSink(), "webchat"),
    audit: new MemoryAuditSink(),
  });
  transport.admit("owner", () => {});
  transport.open(CONV);
  const clock = new ManualClock();
  const renderer = new WebChatRenderer(transport, CONV, {
    timers: clock,
    now: () => clock.now(),
    throttleMs: 80,
  });
  return { transport, clock, renderer, bubbles: () => transport.bubbles(CONV) };
}

describe("WebChatRenderer", () => {
  it("shows the turn at once, its first words at once, and throttles the rest", async () => {
    const { clock, renderer, bubbles } = setup();
    await renderer.onTurnStart();
    await settle();
    expect(bubbles()).toMatchObject([{ role: "assistant", text: "", status: "💭 Thinking…", final: false }]);
    await renderer.onTextChunk("Hello");
    await settle();
    expect(bubbles()).toMatchObject([{ text: "Hello", status: "✍️ Writing…", final: false }]);
    await renderer.onTextChunk(" world");
    await settle();
    expect(bubbles()[0]?.text).toBe("Hello");
    await clock.advance(80);
    expect(bubbles()[0]?.text).toBe("Hello world");
    expect(clock.pendingDelays().every((ms) => ms > 80)).toBe(true);
  });

  it("ends with the answer as text, the turn status as status, and the options as chips", async () => {
    const { renderer, bubbles } = setup();
    await renderer.onTurnStart();
    await renderer.onTextChunk("Pick one:\n[OPTIONS: red | blue]");
    await renderer.onDone("end_turn");
    await renderer.close();
    expect(bubbles()).toHaveLength(1);
    const [bubble] = bubbles();
    expect(bubble).toMatchObject({
      role: "assistant",
      text: "Pick one:",
      chips: ["red", "blue"],
      final: true,
    });
    expect(bubble?.status).toMatch(/^Finished in /);
  });

  it("a prompt is an open approval bubble; its outcome becomes its status and the turn goes on below", async () => {
    const { clock, renderer, bubbles } = setup();
    await renderer.onTurnStart();
    await renderer.onTextChunk("Let me look.");
    await renderer.onPromptChoice(OPTIONS, "r1", PROMPT);
    const prompt = bubbles().find((b) => b.role === "approval");
    expect(prompt).toMatchObject({ final: false, status: "" });
    expect(prompt?.text).toContain("🔐 **Permission needed:** Run ls");
    expect(prompt?.buttons?.map((b) => [b.label, b.requestId, b.nonce])).toEqual([
      ["Approve", "r1", "n1"],
      ["Deny", "r1", "n1"],
    ]);
    await renderer.markApproval("r1", "✅ Approved (this once)");
    await clock.advance(80);
    await renderer.onTextChunk("Done.");
    await renderer.onDone("end_turn");
    expect(bubbles().map((b) => [b.role, b.text.split("\n")[0], b.final])).toEqual([
      ["assistant", "Let me look.", true],
      ["approval", "🔐 **Permission needed:** Run ls", true],
      ["assistant", "Done.", true],
    ]);
    expect(bubbles()[1]).toMatchObject({ status: "✅ Approved (this once)", buttons: [] });
  });

  it("a status mark in the agent's text stays out of the status line", async () => {
    const { renderer, bubbles } = setup();
    await renderer.onTurnStart();
    await renderer.onTextChunk("a\u001eb");
    await renderer.onDone("end_turn");
    expect(bubbles()[0]?.text).toBe("ab");
    expect(bubbles()[0]?.status).toMatch(/^Finished in /);
  });

  it("a seal whose bubble is gone posts the answer as a new bubble", async () => {
    const { transport, clock, renderer, bubbles } = setup();
    await renderer.onTurnStart();
    await renderer.onTextChunk("the answer");
    await clock.advance(80);
    const edit = transport.edit.bind(transport);
    vi.spyOn(transport, "edit").mockImplementation((c, id, patch) =>
      patch.final ? false : edit(c, id, patch),
    );
    await renderer.onDone("end_turn");
    expect(renderer.deliveryFailed).toBe(false);
    expect(bubbles().map((b) => [b.text, b.final])).toEqual([
      ["the answer", false],
      ["the answer", true],
    ]);
  });
});
