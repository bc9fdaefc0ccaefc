/**
 * Approve/Deny buttons carry a per-prompt nonce (a:<request_id>:<nonce>:<1|0>): a stale or forged
 * press fails closed with a neutral ephemeral notice, a fresh one approves, and the prompt shows
 * the outcome with its buttons gone. Option buttons (opt:<i>) re-dispatch the label as a turn.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { RECEIPT_EXPIRED } from "../../src/messaging/approval/approvals.js";
import type { FakeMessage } from "../fakes/discord/server.js";
import { permissionRequest } from "../helpers/events.js";
import type { Stack } from "./helpers.js";
import { ALICE, DM, startStack, untilFooter } from "./helpers.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const permission = (requestId: string) => permissionRequest({ requestId });

const toolTurn = (requestId: string) => ({
  steps: [{ type: "text" as const, text: "Cleaning up." }, permission(requestId)],
  onPermission: {
    approve: [
      { type: "text" as const, text: "Removed." },
      { type: "complete" as const, stopReason: "end_turn" },
    ],
    deny: [
      { type: "text" as const, text: "Left it alone." },
      { type: "complete" as const, stopReason: "end_turn" },
    ],
  },
});

function buttons(m: FakeMessage): string[] {
  return (m.components as Array<{ components: Array<{ custom_id: string }> }>).flatMap((r) =>
    r.components.map((b) => b.custom_id),
  );
}

async function promptMessage(s: Stack): Promise<FakeMessage> {
  let found: FakeMessage | undefined;
  await vi.waitFor(
    () => {
      found = s.fake.channelMessages(DM).find((m) => m.content.startsWith("🔐") && buttons(m).length === 2);
      if (!found) throw new Error("no prompt yet");
    },
    { timeout: 5000, interval: 10 },
  );
  return found as FakeMessage;
}

describe("discord: approval buttons", () => {
  it("a forged nonce fails closed; the fresh button approves", async () => {
    stack = await startStack({ turns: [toolTurn("r1")] });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "clean the build" });
    const prompt = await promptMessage(stack);
    const [approve, deny] = buttons(prompt);
    expect(approve).toMatch(/^a:r1:[A-Za-z0-9_-]{22}:1$/);
    expect(deny).toMatch(/^a:r1:[A-Za-z0-9_-]{22}:0$/);
    // "Cleaning up." was sealed above the prompt, not left live below it.
    expect(stack.fake.channelMessages(DM)[0]?.content).toBe("Cleaning up.");

    stack.fake.press({ messageId: prompt.id, customId: "a:r1:AAAAAAAAAAAAAAAAAAAAAA:1", userId: ALICE });
    await vi.waitFor(() => expect(stack?.fake.callsTo("POST", /^\/webhooks\//)).toHaveLength(1), {
      timeout: 5000,
    });
    const notice = stack.fake.callsTo("POST", /^\/webhooks\//)[0]?.body as { content: string; flags: number };
    expect(notice.content).toBe(RECEIPT_EXPIRED);
    expect(notice.flags).toBe(1 << 6);
    expect(stack.provider.answers).toEqual([]);

    stack.fake.press({ messageId: prompt.id, customId: approve ?? "", userId: ALICE });
    await untilFooter(stack.fake, DM);
    expect(stack.provider.answers).toEqual([{ requestId: "r1", verdict: "approve" }]);
    const resolved = stack.fake.messages.get(prompt.id);
    expect(resolved?.content).toMatch(/✅ Approved \(this once\)$/);
    expect(resolved?.components).toEqual([]);
    // Every press was acknowledged first with a deferred update.
    const acks = stack.fake.callsTo("POST", /^\/interactions\/\d+\/[^/]+\/callback$/).map((c) => c.body);
    expect(acks).toEqual([
      { type: 6, data: { allowed_mentions: { parse: [] } } },
      { type: 6, data: { allowed_mentions: { parse: [] } } },
    ]);
  });

  it("!stop answers an open prompt (deny) instead of leaving the turn parked until it times out", async () => {
    stack = await startStack({ turns: [toolTurn("r1")] });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "clean" });
    await promptMessage(stack);
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "!stop" });
    // The default decision window is minutes long: only the stop can end the turn this soon.
    await vi.waitFor(() => expect(stack?.provider.answers).toEqual([{ requestId: "r1", verdict: "deny" }]), {
      timeout: 5000,
    });
    await vi.waitFor(() => expect(stack?.sessions.isBusy(stack.startedKeys[0] ?? "")).toBe(false), {
      timeout: 5000,
    });
    expect(stack.fake.channelMessages(DM).some((m) => m.content.startsWith("🛑 Stopping"))).toBe(true);
  });

  it("a button from an earlier prompt with a reused request id never approves the new one", async () => {
    stack = await startStack({
      turns: [toolTurn("r1"), toolTurn("r1")],
      overrides: { approvalTimeoutMs: 300 },
    });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "first" });
    const first = await promptMessage(stack);
    const [oldApprove] = buttons(first);
    stack.fake.press({ messageId: first.id, customId: buttons(first)[1] ?? "", userId: ALICE });
    await untilFooter(stack.fake, DM);
    expect(stack.provider.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);

    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "second" });
    await vi.waitFor(
      () => expect(stack?.fake.channelMessages(DM).filter((m) => buttons(m).length === 2)).toHaveLength(1),
      { timeout: 5000 },
    );
    // ACP request ids restart per process: the old button names r1 again, with the old nonce.
    stack.fake.press({ messageId: first.id, customId: oldApprove ?? "", userId: ALICE });
    await untilFooter(stack.fake, DM, 2);
    expect(stack.provider.answers).toEqual([
      { requestId: "r1", verdict: "deny" },
      { requestId: "r1", verdict: "deny" },
    ]);
    const notices = stack.fake
      .callsTo("POST", /^\/webhooks\//)
      .map((c) => (c.body as { content: string }).content);
    expect(notices).toEqual([RECEIPT_EXPIRED]);
    expect(stack.fake.channelMessages(DM).some((m) => m.content.includes("No answer in time"))).toBe(true);
  });

  it("[OPTIONS:] become buttons; a press sends the label as the next turn, never as a command", async () => {
    stack = await startStack({
      turns: [
        [
          { type: "text", text: "Which one?\n[OPTIONS: Blue | !new]" },
          { type: "complete", stopReason: "end_turn" },
        ],
        [
          { type: "text", text: "Resetting is not a choice I act on." },
          { type: "complete", stopReason: "end_turn" },
        ],
      ],
    });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "pick" });
    await untilFooter(stack.fake, DM);
    const asked = stack.fake.channelMessages(DM)[0] as FakeMessage;
    expect(asked.content).toMatch(/^Which one\?\n-# Finished in/);
    expect(buttons(asked)).toEqual(["opt:0", "opt:1"]);
    stack.fake.press({ messageId: asked.id, customId: "opt:1", userId: ALICE });
    await untilFooter(stack.fake, DM, 2);
    expect(stack.provider.prompts[1]).toBe("!new");
    expect(stack.fake.messages.get(asked.id)?.components).toEqual([]);
    expect(stack.fake.messages.get(asked.id)?.content).toMatch(/-# ✔️ !new$/);
  });
});
