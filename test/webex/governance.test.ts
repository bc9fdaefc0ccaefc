/**
 * An organization's policy refusing what the bot sends (Webex answers 403 in its error shape, with
 * a tracking id): the refused words are never sent again, the refusal is audited and the reader is
 * told once with the tracking id, the rest of the answer still lands, and a permission prompt
 * nobody could see resolves as a deny at once instead of waiting out the approval window.
 */
import { describe, expect, it } from "vitest";
import type { PolicyInput } from "../fakes/webex/server.js";
import { permissionRequest } from "../helpers/events.js";
import type { WebexOptions } from "./harness.js";
import { ALICE, DM, done, text, until, webexLab } from "./harness.js";

const lab = webexLab();
const channel = (o?: WebexOptions) => lab.channel(o);
const posted = () => lab.fake.botMessages(DM).map((m) => m.markdown);

/** How many times these exact words were offered to Webex, refused or not. */
function attempts(words: string): number {
  return lab.fake.calls.filter(
    (c) =>
      (c.method === "POST" || c.method === "PUT") &&
      /^\/v1\/messages/.test(c.path) &&
      String((c.body as { markdown?: unknown }).markdown ?? "").includes(words),
  ).length;
}

describe("webex under an organization's policy", () => {
  it("a refused prompt resolves a deny at once; audited; its words are not sent again", async () => {
    const c = await channel({
      turns: [
        {
          steps: [permissionRequest({ requestId: "r1", title: "upload the customer list" })],
          onPermission: { approve: [text("uploaded"), done], deny: [text("left it alone"), done] },
        },
      ],
    });
    // The policy refuses anything naming the tool: the prompt's text and its card alike.
    lab.fake.policy = (m: PolicyInput) =>
      m.markdown.includes("customer list") || JSON.stringify(m.attachments).includes("customer list");
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "share it" });
    // No clock is advanced: the deny is immediate, not the approval window running out.
    await until(() => posted().some((v) => v.includes("left it alone")), "the continuation");
    expect(c.providers[0]?.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
    // The prompt's text was offered once (as the placeholder's edit), the card once: no blind retry.
    expect(lab.fake.policyRefusals.map((r) => r.method)).toEqual(["PUT", "POST"]);
    expect(attempts("Permission needed")).toBe(1);
    expect(c.audit.find("webex.approval", "denied")[0]?.fields).toMatchObject({
      request: "r1",
      reason: "prompt_not_shown",
    });
    const refused = c.audit.find("webex.send", "refused");
    expect(refused.map((r) => r.fields.what)).toEqual(["edit", "card"]);
    expect(refused[0]?.fields).toMatchObject({ status: 403, reason: "policy", room: DM });
    expect(refused[0]?.fields.trackingId).toBe(lab.fake.policyRefusals[0]?.trackingId);
    // The reader learns why nothing was asked, with the id an administrator can look up.
    const notice = posted().find((v) => v.includes("refused to show a permission request"));
    expect(notice).toContain(lab.fake.policyRefusals.at(-1)?.trackingId);
    expect(posted().some((v) => v.includes("customer list"))).toBe(false);
  });

  it("a refused answer chunk is sent once, never again; the reader is told once; the rest lands", async () => {
    const para = (n: number, extra = "") => `Section ${n}. ${"the figures hold steady. ".repeat(60)}${extra}`;
    const answer = [
      para(1),
      para(2, "INTERNAL-ONLY margin"),
      para(3),
      para(4, "INTERNAL-ONLY forecast"),
      para(5),
    ];
    const c = await channel({ turns: [[text(answer.join("\n\n")), done]] });
    lab.fake.policy = (m) => m.markdown.includes("INTERNAL-ONLY");
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "report" });
    await until(() => posted().some((v) => v.includes("Section 5.")), "the end of the answer");
    await until(() => c.audit.find("webex.send", "refused").length >= 2, "both refusals audited");
    // Each refused chunk was offered exactly once.
    const refusedBodies = lab.fake.policyRefusals.map((r) => r.markdown);
    expect(new Set(refusedBodies).size).toBe(refusedBodies.length);
    for (const body of refusedBodies) expect(attempts(body)).toBe(1);
    expect(refusedBodies).toHaveLength(2);
    // Told once, with the tracking id; the other sections all landed, in order.
    const notices = posted().filter((v) => v.includes("Webex refused part of this answer"));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain(lab.fake.policyRefusals[0]?.trackingId);
    const all = posted().join("\n");
    for (const n of [1, 3, 5]) expect(all).toContain(`Section ${n}.`);
    expect(all).not.toContain("INTERNAL-ONLY");
  });
});
