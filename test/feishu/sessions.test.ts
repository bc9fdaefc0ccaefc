/**
 * Session identity on Feishu: a DM keys on the person's open_id (direct), a group on its chat_id
 * (forum), so a group turn never resumes a member's DM session, also when `dmScope` is unified; /new
 * in a group leaves the DM alone; and the shared-audience rules hold in a group (/yolo refused).
 */
import { describe, expect, it } from "vitest";
import { dmChat, done, fakeFeishuLab, GROUP, GUEST, OWNER, shown, text } from "./channel-harness.js";

const lab = fakeFeishuLab();
const GROUPS = { allowGroup: true, allowedGroupIds: [GROUP] };

const dm = (who: { openId: string }) => ({
  chatType: "p2p" as const,
  route: who.openId,
  chatId: dmChat(who),
});
const group = { chatType: "group" as const, route: GROUP, chatId: GROUP };

describe("sessions", () => {
  it("a group turn runs on the group's session, never on the sender's DM session", async () => {
    const c = await lab.connected({ feishu: GROUPS, turns: () => [[text("answered"), done]] });
    lab.fake.pushMessage(OWNER, "in private");
    await lab.fake.waitFor(() => shown(lab.fake, dmChat(OWNER)).length === 1, 5000, "the DM answer");
    lab.fake.pushMessage(OWNER, "in the group", { chatType: "group", chatId: GROUP, mentionBot: true });
    await lab.fake.waitFor(() => shown(lab.fake, GROUP).length === 1, 5000, "the group answer");
    expect([...c.providers.keys()]).toEqual([
      `feishu:default:direct:${OWNER.openId}`,
      `feishu:default:forum:${GROUP}`,
    ]);
    expect(c.providers.get(`feishu:default:forum:${GROUP}`)?.prompts).toEqual(["in the group"]);
  });

  it("under dmScope unified the sole operator's DM joins the unified bucket, and a group still does not", async () => {
    const c = await lab.connected({
      feishu: { ...GROUPS, allowedOpenIds: [OWNER.openId], dmScope: "unified" },
      turns: () => [[text("ok"), done]],
    });
    expect(c.running.hub.keyOf(dm(OWNER))).toBe("unified:default");
    expect(c.running.hub.keyOf(group)).toBe(`feishu:default:forum:${GROUP}`);
    lab.fake.pushMessage(OWNER, "hi all", { chatType: "group", chatId: GROUP, mentionBot: true });
    await lab.fake.waitFor(() => shown(lab.fake, GROUP).length === 1, 5000, "the group answer");
    expect([...c.providers.keys()]).toEqual([`feishu:default:forum:${GROUP}`]);
  });

  it("/new in a group starts the group afresh and leaves the DM's session alone", async () => {
    const c = await lab.connected({ feishu: GROUPS, turns: () => [[text("ok"), done]] });
    const dmBefore = c.running.hub.keyOf(dm(OWNER));
    const groupBefore = c.running.hub.keyOf(group);
    lab.fake.pushMessage(OWNER, "/new", { chatType: "group", chatId: GROUP, mentionBot: true });
    await lab.fake.waitFor(
      () => shown(lab.fake, GROUP).some((v) => v.includes("Fresh conversation")),
      5000,
      "/new",
    );
    expect(c.running.hub.keyOf(group)).not.toBe(groupBefore);
    expect(c.running.hub.keyOf(dm(OWNER))).toBe(dmBefore);
    expect(c.store.generationOf(dmBefore)).toBe(0);
  });

  it("/yolo is refused in a group, even to the owner, and by a guest in a DM", async () => {
    const c = await lab.connected({ feishu: GROUPS });
    lab.fake.pushMessage(OWNER, "/yolo on", { chatType: "group", chatId: GROUP, mentionBot: true });
    lab.fake.pushMessage(GUEST, "/yolo on");
    await lab.fake.waitFor(() => c.audit.find("auto_approve", "refused").length === 2, 5000, "two refusals");
    expect(c.running.hub.keyOf(dm(GUEST))).toContain(GUEST.openId);
    expect(
      c.audit
        .find("auto_approve", "refused")
        .map((r) => r.fields.caller)
        .sort(),
    ).toEqual([OWNER.openId, GUEST.openId].sort());
    await lab.fake.waitFor(() => shown(lab.fake).length === 2, 5000, "both refusals said");
    lab.fake.pushMessage(OWNER, "/yolo on 30m");
    await lab.fake.waitFor(
      () => shown(lab.fake).some((v) => v.includes("Auto-approve is ON")),
      5000,
      "granted",
    );
    expect(c.audit.find("auto_approve", "granted")[0]?.fields).toMatchObject({
      source: "feishu",
      caller: OWNER.openId,
    });
  });

  it("/help lists the Feishu table and how to answer a prompt", async () => {
    await lab.connected();
    lab.fake.pushMessage(OWNER, "/help");
    await lab.fake.waitFor(() => shown(lab.fake).length === 1, 5000, "help");
    const help = shown(lab.fake)[0] ?? "";
    for (const name of ["/new", "/stop", "/status", "/compact", "/model", "/yolo", "/help"])
      expect(help).toContain(name);
    expect(help).not.toContain("/queue");
    expect(help).toContain("reply 1 to approve or 2 to deny");
  });
});
