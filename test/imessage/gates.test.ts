/**
 * Inbound gates against the fake imsg, in the order that keeps a self-chat from answering itself:
 * is_from_me dropped unaudited; then groups and the allow-list, each refusal audited and never
 * answered; then, last, the own-message ledger. Handles match normalized on both sides.
 */
import { describe, expect, it } from "vitest";
import { waitFor } from "../fakes/imsg/control.js";
import { caughtUp, done, GUEST, imsgLab, OWNER, promptsOf, STRANGER, text } from "./channel-harness.js";

const lab = imsgLab();
const settle = () => new Promise((r) => setTimeout(r, 400));

describe("who is answered", () => {
  it("a stranger and a group chat get no reply, and an audit row each", async () => {
    const folder = lab.folder();
    const c = await lab.channel({ turns: () => [[text("answer"), done]] });
    await folder.incoming(STRANGER, "hello?");
    await folder.incoming(OWNER, "hi all", { group: true });
    await caughtUp(c, folder);
    await settle();
    expect(folder.sent()).toEqual([]);
    expect(c.audit.find("inbound", "denied").map((r) => r.fields?.user)).toEqual([STRANGER, OWNER]);
    expect(c.audit.find("imessage.chat_gate", "denied").map((r) => r.fields?.reason)).toEqual([
      "denied_group_chat",
    ]);
    expect(c.providers.size).toBe(0);
  });

  it("+61 400 000 000 in the allow-list matches +61400000000 and its formatted form; emails fold case", async () => {
    const folder = lab.folder();
    const c = await lab.channel({
      turns: () => [
        [text("one"), done],
        [text("two"), done],
      ],
    });
    await folder.incoming("+61400000000", "first");
    await waitFor(() => folder.sent(OWNER).length === 1, "the first answer");
    await folder.incoming("+61 400 000 000", "second");
    await waitFor(() => folder.sent(OWNER).length === 2, "the second answer");
    await folder.incoming("GUEST@example.com", "third");
    await waitFor(() => folder.sent(GUEST).length === 1, "the guest's answer");
    expect(c.audit.find("inbound", "denied")).toEqual([]);
  });
});

describe("own messages", () => {
  it("a self-chat whose echo arrives unattributed is answered once and never loops", async () => {
    const folder = lab.folder({ selfHandle: OWNER, selfChatRace: true, correctAfterMs: 80 });
    // Every turn answers: a loop would show as more sends and more prompts.
    const c = await lab.channel({
      turns: () => Array.from({ length: 5 }, (_, i) => [text(`reply ${i}`), done]),
    });
    await folder.incoming(OWNER, "hello me");
    await waitFor(() => folder.sent(OWNER).length >= 1, "the answer");
    await settle();
    await caughtUp(c, folder);
    expect(folder.sent(OWNER)).toHaveLength(1);
    expect(promptsOf(c)).toEqual(["hello me"]);
    // The unattributed echo was seen and dropped by the ledger (not missed), its record spent.
    expect(c.drops.count("imessage", "own_echo")).toBe(1);
    expect(c.running.ledger.size).toBe(0);
  });

  it("an allowed user repeating the agent's text is suppressed once, and only once", async () => {
    const folder = lab.folder();
    const c = await lab.channel({
      turns: () => [
        [text("same words"), done],
        [text("heard you"), done],
      ],
    });
    await folder.incoming(GUEST, "say something");
    await waitFor(() => folder.sent(GUEST).length === 1, "the answer");
    const answer = folder.sent(GUEST)[0] ?? "";
    // The attributed copy (is_from_me) went by first and must not have spent the record.
    await caughtUp(c, folder);
    expect(c.running.ledger.size).toBe(1);
    await folder.incoming(GUEST, answer);
    await caughtUp(c, folder);
    await settle();
    expect(folder.sent(GUEST)).toHaveLength(1);
    await folder.incoming(GUEST, answer);
    await waitFor(() => folder.sent(GUEST).length === 2, "the repeat answered");
    expect(promptsOf(c)).toEqual(["say something", answer]);
  });

  it("a stranger or a group sending the agent's text cannot spend the record (the ledger is the last gate)", async () => {
    const folder = lab.folder();
    const c = await lab.channel({ turns: () => [[text("the words"), done]] });
    await folder.incoming(GUEST, "go");
    await waitFor(() => folder.sent(GUEST).length === 1, "the answer");
    const answer = folder.sent(GUEST)[0] ?? "";
    await folder.incoming(STRANGER, answer);
    await folder.incoming(GUEST, answer, { group: true });
    await caughtUp(c, folder);
    expect(c.running.ledger.size).toBe(1);
    await folder.incoming(GUEST, answer);
    await caughtUp(c, folder);
    expect(c.running.ledger.size).toBe(0);
    expect(folder.sent(GUEST)).toHaveLength(1);
  });
});
