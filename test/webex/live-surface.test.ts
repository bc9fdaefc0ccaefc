/**
 * Webex on the kit's LiveRenderer, where a card meets the kit's rules: a message's card is posted
 * once (the status line edited onto an answer does not post its choices again), and a prompt whose
 * text the organization's policy refused is still shown by its card, the text never offered again.
 */
import { describe, expect, it } from "vitest";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { WebexRenderer } from "../../src/webex/renderer.js";
import type { WebexRest } from "../../src/webex/transport.js";
import { ManualClock } from "../helpers/manual-clock.js";

/** Webex as the renderer sees it; `refuse` answers a body with the policy's 403. */
function webex(refuse: (markdown: string) => boolean = () => false) {
  const calls: { op: "post" | "edit"; id: string; markdown: string; card: boolean }[] = [];
  let next = 0;
  const rest = {
    createMessage: async (b: { markdown: string; attachments?: unknown[] }) => {
      next += 1;
      calls.push({ op: "post", id: `m${next}`, markdown: b.markdown, card: Boolean(b.attachments?.length) });
      if (refuse(b.markdown)) return { ok: false as const, status: 403, message: "policy", trackingId: "T1" };
      return { ok: true as const, data: { id: `m${next}`, roomId: "r", personId: "bot" } };
    },
    editMessage: async (id: string, b: { markdown: string }) => {
      calls.push({ op: "edit", id, markdown: b.markdown, card: false });
      if (refuse(b.markdown)) return { ok: false as const, status: 403, message: "policy", trackingId: "T2" };
      return { ok: true as const, data: { id, roomId: "r", personId: "bot" } };
    },
  } as unknown as WebexRest;
  return { rest, calls };
}

describe("webex cards on the kit's renderer", () => {
  it("the end's status line edited onto an answer with choices does not post its card again", async () => {
    const { rest, calls } = webex();
    const offers: string[] = [];
    const r = new WebexRenderer({
      rest,
      roomId: "r",
      logger: new MemoryLogger(),
      clock: new ManualClock(),
      holdOffers: (id) => offers.push(id),
    });
    await r.onTurnStart();
    await r.onTextChunk("Pick one:\n[OPTIONS: red | blue]");
    await r.onSteerConsumed("also green");
    await r.onDone("end_turn");
    await r.close();
    expect(calls.filter((c) => c.card)).toHaveLength(1);
    expect(offers).toHaveLength(1);
    // The answer took the placeholder; the status line was then written onto it.
    const edits = calls.filter((c) => c.op === "edit" && c.id === "m1").map((c) => c.markdown);
    expect(edits[0]).toBe("Pick one:");
    expect(edits.at(-1)).toMatch(/^Pick one:\n\n_Finished in/);
    expect(r.deliveryFailed).toBe(false);
  });

  it("a prompt whose text the policy refused is shown by its card; the text is not offered again", async () => {
    const { rest, calls } = webex((markdown) => markdown.includes("Permission needed"));
    const r = new WebexRenderer({ rest, roomId: "r", logger: new MemoryLogger(), clock: new ManualClock() });
    await r.onTurnStart();
    const shown = await r.onPromptChoice(
      [
        { id: "a", label: "Allow", verdict: "approve" },
        { id: "d", label: "Deny", verdict: "deny" },
      ],
      "r1",
      { toolTitle: "deploy", toolPurpose: "", nonce: "n1" },
    );
    expect(shown).toBe(true);
    expect(calls.filter((c) => c.markdown.includes("Permission needed"))).toHaveLength(1);
    expect(calls.filter((c) => c.card)).toHaveLength(1);
    // The outcome cannot be written onto a card: nothing is edited or posted for it.
    const before = calls.length;
    await r.markApproval("r1", "✅ Approved");
    expect(calls.slice(before).filter((c) => c.markdown.includes("Approved"))).toEqual([]);
    await r.close();
  });
});
