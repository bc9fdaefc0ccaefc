/**
 * Approvals and choices on Webex: typed 1/2 is primary, the card beside the prompt approves only
 * with its own prompt's nonce, every outcome is audited, and an options card is single use with
 * its label sent back as content (never a command).
 */
import { describe, expect, it } from "vitest";
import { CHOICE, KIND, NONCE, REQUEST } from "../../src/webex/cards.js";
import { permissionRequest } from "../helpers/events.js";
import type { WebexOptions } from "./harness.js";
import { ALICE, DM, done, text, until, webexLab } from "./harness.js";

const lab = webexLab();
const channel = (o?: WebexOptions) => lab.channel(o);

const approvalTurn = {
  steps: [permissionRequest({ requestId: "r1", title: "rm -rf build" })],
  onPermission: { approve: [text("removed"), done], deny: [text("kept"), done] },
};

function card() {
  const m = lab.fake.botMessages(DM).find((x) => x.attachments.length > 0);
  if (!m) throw new Error("no card posted");
  const attachment = m.attachments[0] as { content: { actions: { data: Record<string, unknown> }[] } };
  return { id: m.id, actions: attachment.content.actions };
}

describe("webex approvals", () => {
  it("a stale card press or one without a nonce approves nothing; typed 1 approves the open prompt", async () => {
    const c = await channel({ turns: [approvalTurn] });
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "clean up" });
    await until(() => lab.fake.botMessages(DM).some((m) => m.attachments.length > 0), "the card");
    const { id, actions } = card();
    const approve = actions[0]?.data ?? {};
    lab.fake.pressCard({ email: ALICE, messageId: id, inputs: { ...approve, [NONCE]: "stale" } });
    lab.fake.pressCard({
      email: ALICE,
      messageId: id,
      inputs: { [KIND]: "approval", [REQUEST]: "r1", [CHOICE]: 0 },
    });
    await until(() => c.audit.find("webex.approval", "refused").length === 2, "both refused");
    expect(c.providers[0]?.answers).toEqual([]);
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "1" });
    await until(
      () => lab.fake.botMessages(DM).some((m) => m.markdown.includes("removed")),
      "the continuation",
    );
    expect(c.providers[0]?.answers).toEqual([{ requestId: "r1", verdict: "approve" }]);
    // The prompt's text message shows how it was decided.
    expect(lab.fake.botMessages(DM).some((m) => /rm -rf build[\s\S]*Approved/.test(m.markdown))).toBe(true);
    // A press after the decision: neutral, audited, nothing changes.
    lab.fake.pressCard({ email: ALICE, messageId: id, inputs: approve });
    await until(() => c.audit.find("webex.approval", "refused").length === 3, "the late press refused");
    expect(c.providers[0]?.answers).toHaveLength(1);
  });

  it("the card's own Deny press resolves the prompt, audited", async () => {
    const c = await channel({ turns: [approvalTurn] });
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "clean up" });
    await until(() => lab.fake.botMessages(DM).some((m) => m.attachments.length > 0), "the card");
    const { id, actions } = card();
    lab.fake.pressCard({ email: ALICE, messageId: id, inputs: actions[1]?.data ?? {} });
    await until(() => lab.fake.botMessages(DM).some((m) => m.markdown.includes("kept")), "the continuation");
    expect(c.providers[0]?.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
    expect(c.audit.find("webex.approval", "denied")).toHaveLength(1);
  });

  it("a stranger's press is refused at the gate", async () => {
    const c = await channel({ turns: [approvalTurn] });
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "clean up" });
    await until(() => lab.fake.botMessages(DM).some((m) => m.attachments.length > 0), "the card");
    const { id, actions } = card();
    lab.fake.pressCard({ email: "mallory@example.com", messageId: id, inputs: actions[0]?.data ?? {} });
    await until(() => c.audit.find("inbound", "denied").length === 1, "the refusal");
    expect(c.providers[0]?.answers).toEqual([]);
  });

  it("an options card: one press, echoed, sent as content; a second press finds nothing", async () => {
    const c = await channel({
      turns: [
        [text("Pick one:\n[OPTIONS: /new | Keep going]"), done],
        [text("going on"), done],
      ],
    });
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "choices?" });
    await until(() => lab.fake.botMessages(DM).some((m) => m.attachments.length > 0), "the options card");
    const { id, actions } = card();
    lab.fake.pressCard({ email: ALICE, messageId: id, inputs: actions[0]?.data ?? {} });
    await until(
      () => lab.fake.botMessages(DM).some((m) => m.markdown.includes("going on")),
      "the second turn",
    );
    // "/new" was the model's label: the agent received it as text, no command ran.
    expect(c.providers[0]?.prompts.at(-1)).toContain("/new");
    expect(lab.fake.botMessages(DM).some((m) => m.markdown.includes("✔️ /new"))).toBe(true);
    lab.fake.pressCard({ email: ALICE, messageId: id, inputs: actions[1]?.data ?? {} });
    await until(
      () => lab.fake.botMessages(DM).some((m) => m.markdown.includes("That choice is no longer available.")),
      "the spent offer",
    );
    expect(c.providers[0]?.prompts).toHaveLength(2);
  });

  it("more choices than buttons: five on the card, the rest numbered in the text; a press answers its own button", async () => {
    const c = await channel({
      turns: [
        [text("Pick a region:\n[OPTIONS: r1 | | r2 | r3 | r4 | r5 | r6 | r7]"), done],
        [text("noted"), done],
      ],
    });
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "where?" });
    await until(() => lab.fake.botMessages(DM).some((m) => m.attachments.length > 0), "the options card");
    const m = lab.fake.botMessages(DM).find((x) => x.attachments.length > 0);
    if (!m) throw new Error("no options card");
    const { content } = m.attachments[0] as {
      content: { actions: { title: string; data: Record<string, unknown> }[] };
    };
    // The blank choice is dropped once, for both the buttons and the presses.
    expect(content.actions.map((a) => a.title)).toEqual(["r1", "r2", "r3", "r4", "r5"]);
    const answer = lab.fake
      .botMessages(DM)
      .map((x) => x.markdown)
      .join("\n");
    expect(answer).toMatch(/6\.\s*r6/);
    expect(answer).toMatch(/7\.\s*r7/);
    lab.fake.pressCard({ email: ALICE, messageId: m.id, inputs: content.actions[3]?.data ?? {} });
    await until(() => lab.fake.botMessages(DM).some((x) => x.markdown.includes("noted")), "the second turn");
    expect(lab.fake.botMessages(DM).some((x) => x.markdown === "✔️ r4")).toBe(true);
    expect(c.providers[0]?.prompts.at(-1)).toContain("r4");
  });
});
