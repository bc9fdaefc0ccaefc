/**
 * Approvals as Adaptive Cards pressed through the real endpoint: an Action.Submit comes back as a
 * message activity whose value is the button's data (a lookup key: request id, nonce, verdict).
 * A fresh press runs the tool and the card becomes its outcome; a stale or forged press approves
 * nothing and settles the old card; the owner's Approve + auto-approve arms the one grant through
 * the shared helper (and says what it covers); a card that never landed denies at once; an expired
 * prompt's card says so.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { RECEIPT_EXPIRED } from "../../src/messaging/approval/approvals.js";
import type { ShownMessage } from "../fakes/teams/server.js";
import { permissionRequest } from "../helpers/events.js";
import type { Stack } from "./helpers.js";
import { approvalCard, cardButton, cardTexts, done, seen, startStack, text } from "./helpers.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const toolTurn = (title = "rm -rf build") => ({
  steps: [text("Let me clean up."), permissionRequest({ requestId: "r1", title })],
  onPermission: { approve: [text("Removed."), done], deny: [text("Kept everything."), done] },
});

describe("teams: approval cards", () => {
  it("Approve runs the tool and the card becomes its outcome", async () => {
    stack = await startStack({ turns: [toolTurn()] });
    const { driver, alice, fake, provider } = stack;
    await driver.post(driver.message(alice, "clean up"));
    const prompt = await approvalCard(stack);
    expect(cardTexts(prompt).buttons).toEqual(["Approve", "Approve + auto-approve", "Deny"]);
    expect(cardTexts(prompt).text).toContain("Or reply 1 to approve or 2 to deny.");
    // What the middle button reaches is said on the card, before anyone presses it.
    expect(cardTexts(prompt).text).toContain("every conversation, on every channel");
    await driver.post(driver.submit(alice, prompt.id, cardButton(prompt, "Approve")));
    await seen(fake, "Removed.");
    expect(provider.answers).toEqual([{ requestId: "r1", verdict: "approve" }]);
    const settled = fake
      .shown(fake.personalConversation(alice))
      .find((m) => m.id === prompt.id) as ShownMessage;
    expect(cardTexts(settled)).toEqual({
      text: expect.stringContaining("Approved (this once)"),
      buttons: [],
    });
  });

  it("a non-owner's card has no auto-approve button, and a forged auto-approve press approves nothing", async () => {
    stack = await startStack({ both: true, turns: [toolTurn()] });
    const { driver, bob, fake, provider, audit } = stack;
    await driver.post(driver.message(bob, "clean up"));
    const prompt = await approvalCard(stack, bob);
    expect(cardTexts(prompt).buttons).toEqual(["Approve", "Deny"]);
    const forged = { ...cardButton(prompt, "Approve"), v: "approve_auto" };
    await driver.post(driver.submit(bob, prompt.id, forged));
    await seen(fake, "Only the owner of this bot can switch auto-approve on.");
    expect(audit.find("auto_approve", "refused")[0]?.fields).toMatchObject({
      source: "teams",
      caller: bob.upn,
      reason: "not_owner",
    });
    expect(provider.answers).toEqual([]);
    expect(audit.find("auto_approve", "granted")).toEqual([]);
    // The real button still works.
    await driver.post(driver.submit(bob, prompt.id, cardButton(prompt, "Deny")));
    await seen(fake, "Kept everything.");
    expect(provider.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
  });

  it("a stale press (another prompt's nonce) approves nothing, settles its card, and a fresh one then runs the tool", async () => {
    stack = await startStack({
      turns: [
        {
          steps: [permissionRequest({ requestId: "r1", title: "first tool" })],
          onPermission: { deny: [done] },
        },
        toolTurn("second tool"),
      ],
    });
    const { driver, alice, fake, provider } = stack;
    await driver.post(driver.message(alice, "one"));
    const old = await approvalCard(stack);
    // Kept as pressed: the fake shows the card as it is now, and it is about to be settled.
    const oldApprove = cardButton(old, "Approve");
    await driver.post(driver.submit(alice, old.id, cardButton(old, "Deny")));
    await seen(fake, "❌ Denied");
    await vi.waitFor(() => expect(stack?.sessions.isBusy(stack.startedKeys[0] ?? "")).toBe(false));
    await driver.post(driver.message(alice, "two"));
    await seen(fake, "second tool");
    const fresh = await approvalCard(stack);
    expect(fresh.id).not.toBe(old.id);
    const freshApprove = cardButton(fresh, "Approve");
    // ACP request ids restart: the old card names r1 again, with its old nonce.
    await driver.post(driver.submit(alice, old.id, oldApprove));
    await seen(fake, RECEIPT_EXPIRED);
    expect(provider.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
    const oldNow = fake.shown(fake.personalConversation(alice)).find((m) => m.id === old.id) as ShownMessage;
    expect(cardTexts(oldNow).buttons).toEqual([]);
    // A made-up nonce for the live prompt approves nothing either.
    await driver.post(driver.submit(alice, fresh.id, { ...freshApprove, n: "x".repeat(22) }));
    expect(provider.answers).toHaveLength(1);
    await driver.post(driver.submit(alice, fresh.id, freshApprove));
    await seen(fake, "Removed.");
    expect(provider.answers).toEqual([
      { requestId: "r1", verdict: "deny" },
      { requestId: "r1", verdict: "approve" },
    ]);
  });

  it("the owner's Approve + auto-approve arms the one grant through the shared helper, then approves", async () => {
    stack = await startStack({ turns: [toolTurn()] });
    const { driver, alice, fake, provider, audit } = stack;
    await driver.post(driver.message(alice, "clean up"));
    const prompt = await approvalCard(stack);
    await driver.post(driver.submit(alice, prompt.id, cardButton(prompt, "Approve + auto-approve")));
    await seen(fake, "Removed.");
    await seen(fake, "Auto-approve is ON for 1h");
    expect(provider.answers).toEqual([{ requestId: "r1", verdict: "approve" }]);
    expect(audit.find("auto_approve", "granted")[0]?.fields).toMatchObject({
      source: "teams",
      caller: alice.upn,
    });
    const settled = fake
      .shown(fake.personalConversation(alice))
      .find((m) => m.id === prompt.id) as ShownMessage;
    expect(cardTexts(settled).text).toContain("auto-approve is on");
    expect(cardTexts(settled).buttons).toEqual([]);
  });

  it("a prompt nobody answers is denied when its window closes, and its card says so", async () => {
    stack = await startStack({ turns: [toolTurn()], overrides: { approvalTimeoutMs: 1500 } });
    const { driver, alice, fake, provider } = stack;
    await driver.post(driver.message(alice, "clean up"));
    const prompt = await approvalCard(stack);
    await seen(fake, "No answer in time: denied");
    await seen(fake, "Kept everything.");
    expect(provider.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
    expect(cardTexts(prompt).buttons).toEqual([]);
  });

  it("a card that never landed denies at once, and says so", async () => {
    stack = await startStack({
      turns: [toolTurn()],
      overrides: { approvalTimeoutMs: 60_000, connector: { backoffMs: 1, maxRetries: 1 } },
    });
    const { driver, alice, fake, provider } = stack;
    // The card's post fails past its retries.
    fake.failNext({ method: "POST", path: /\/activities\//, body: /AdaptiveCard/, status: 502, times: 2 });
    await driver.post(driver.message(alice, "clean up"));
    await vi.waitFor(() => expect(provider.answers).toEqual([{ requestId: "r1", verdict: "deny" }]), {
      timeout: 5000,
    });
    await seen(fake, "The approval card could not be shown, so the tool was denied.");
    await seen(fake, "Kept everything.");
  });
});
