/**
 * Groups: listed ones only; mention mode answers what addresses the agent; rules mode reads every
 * message and may choose silence, never streams or reacts unprompted, and cools down after it
 * spoke; one session for all, everyone told so; a member's command is dropped and a member's files
 * need individual admission; a listed group the account is not in is named once, at first connect.
 */
import { describe, expect, it, vi } from "vitest";
import { GROUP_FILES_REFUSED } from "../../src/whatsapp/intake.js";
import { connected, done, fakeWhatsAppLab, GROUP, GUEST, GUEST_JID, PNG, text } from "./harness.js";

const lab = fakeWhatsAppLab();
const MEMBER = "4917000000055@s.whatsapp.net";
const seen = (pattern: string | RegExp, chat?: string) =>
  lab.fake.waitFor(
    () =>
      lab.fake
        .visible(chat)
        .some((v) => (typeof pattern === "string" ? v.includes(pattern) : pattern.test(v))),
    5000,
    `"${pattern}" on screen`,
  );

describe("mention mode", () => {
  it("answers a mention or a reply to the agent, nothing else; one session for every member", async () => {
    const c = await lab.channel({
      whatsapp: { groups: { [GROUP]: { mode: "mention" } } },
      turns: () => [
        [text("answer to the mention"), done],
        [text("answer to the reply"), done],
      ],
    });
    await connected(c, lab.fake);
    lab.fake.receive({ chat: GROUP, from: MEMBER, text: "lunch at noon?" });
    lab.fake.receive({
      chat: "120363000000000999@g.us",
      from: MEMBER,
      text: "an unlisted group",
      mentions: [lab.fake.operator.pn],
    });
    lab.fake.receive({ chat: GROUP, from: MEMBER, text: "what is 2+2?", mentions: [lab.fake.operator.pn] });
    await seen("answer to the mention", GROUP);
    const ours = lab.fake.messages.find((m) => m.text.includes("answer to the mention"));
    lab.fake.receive({ chat: GROUP, from: GUEST_JID, text: "and 3+3?", quoted: ours?.id ?? "" });
    await seen("answer to the reply", GROUP);
    const key = `whatsapp:default:forum:${GROUP}`;
    expect([...c.providers.keys()]).toEqual([key]);
    const prompts = c.providers.get(key)?.prompts ?? [];
    expect(prompts).toHaveLength(2);
    for (const p of prompts)
      expect(p).toMatch(/^\[parley: this message comes from a WhatsApp group\. Every member reads/);
    expect(lab.fake.visible("120363000000000999@g.us")).toEqual([]);
    // Unlisted groups and unaddressed chatter are not refusals: nothing of them is recorded.
    expect(c.audit.find("inbound", "denied")).toEqual([]);
  });

  it("a member's command is dropped; the operator's works (a group is a shared audience: no /yolo)", async () => {
    const c = await lab.channel({ whatsapp: { groups: { [GROUP]: { mode: "mention" } } } });
    await connected(c, lab.fake);
    lab.fake.receive({ chat: GROUP, from: MEMBER, text: "/new", mentions: [lab.fake.operator.pn] });
    await vi.waitFor(() => expect(c.audit.find("whatsapp.command", "dropped")).toHaveLength(1));
    lab.fake.receive({ chat: GROUP, fromMe: true, text: "/yolo on", quoted: "none" });
    lab.fake.receive({ chat: GROUP, fromMe: true, text: "/yolo on", mentions: [lab.fake.operator.pn] });
    await seen("Auto-approve can only be switched on in a direct conversation", GROUP);
    expect(lab.fake.visible(GROUP).some((v) => v.includes("Fresh conversation"))).toBe(false);
  });

  it("a member's files need individual admission; the refusal is spoken and nothing is fetched", async () => {
    const c = await lab.channel({
      whatsapp: { groups: { [GROUP]: { mode: "mention" } }, allowFrom: [GUEST] },
      turns: () => [
        [text("got your words"), done],
        [text("got the photo"), done],
      ],
    });
    await connected(c, lab.fake);
    const photo = await lab.fake.mediaMessage({
      kind: "image",
      bytes: PNG,
      mimetype: "image/png",
      caption: "look @me",
    });
    const withMention = (m: typeof photo) => ({
      imageMessage: { ...m.imageMessage, contextInfo: { mentionedJid: [lab.fake.operator.pn] } },
    });
    lab.fake.receive({ chat: GROUP, from: MEMBER, message: withMention(photo) });
    await seen(GROUP_FILES_REFUSED, GROUP);
    await seen("got your words", GROUP);
    expect(lab.fake.downloads).toEqual([]);
    expect(c.audit.find("whatsapp.group_media", "refused")).toHaveLength(1);
    // A number the operator listed is admitted individually: their photo is read.
    const second = await lab.fake.mediaMessage({
      kind: "image",
      bytes: PNG,
      mimetype: "image/png",
      caption: "mine",
    });
    lab.fake.receive({ chat: GROUP, from: GUEST_JID, message: withMention(second) });
    await seen("got the photo", GROUP);
    expect(lab.fake.downloads).toHaveLength(1);
  });
});

describe("rules mode", () => {
  it("unprompted: no stream, no reaction; silence sends nothing; a delivered answer starts the cooldown", async () => {
    const c = await lab.channel({
      whatsapp: {
        groups: {
          [GROUP]: { mode: "rules", rules: "Only answer questions about the build.", cooldownSeconds: 3600 },
        },
      },
      turns: () => [
        [text("NO_"), text("REPLY"), done],
        [text("The build is green."), done],
        [text("asked directly"), done],
      ],
      overrides: { renderer: { editIntervalMs: 0, firstFrameMs: 0 } },
    });
    await connected(c, lab.fake);
    lab.fake.receive({ chat: GROUP, from: MEMBER, text: "nice weather" });
    const key = `whatsapp:default:forum:${GROUP}`;
    await vi.waitFor(() =>
      expect(c.sessions.isBusy(key) || (c.providers.get(key)?.prompts.length ?? 0) > 0).toBe(true),
    );
    await vi.waitFor(() => expect(c.sessions.isBusy(key)).toBe(false));
    expect(lab.fake.visible(GROUP)).toEqual([]);
    lab.fake.receive({ chat: GROUP, from: MEMBER, text: "is the build green?" });
    await seen("The build is green.", GROUP);
    lab.fake.receive({ chat: GROUP, from: MEMBER, text: "and now?" });
    lab.fake.receive({ chat: GROUP, from: MEMBER, text: "hey agent", mentions: [lab.fake.operator.pn] });
    await seen("asked directly", GROUP);
    const prompts = c.providers.get(key)?.prompts ?? [];
    // The third message fell in the cooldown: no turn. The addressed one is always answered.
    expect(prompts).toHaveLength(3);
    expect(prompts[0]).toContain("[The group's rules for you: Only answer questions about the build.]");
    expect(prompts[0]).toContain("answer exactly NO_REPLY");
    expect(prompts[2]).not.toContain("answer exactly NO_REPLY");
    // Only the addressed turn reacted; the unprompted ones never did, and never streamed.
    expect(lab.fake.reactions(GROUP).map((r) => r.emoji)).toEqual(["⏳", "✅"]);
    expect(lab.fake.records.filter((r) => r.kind === "edit")).toEqual([]);
  });
});

describe("configured groups the account is not in", () => {
  it("are named once, at the first connect, and not again after a reconnect", async () => {
    const missing = "120363000000000777@g.us";
    const c = await lab.channel({
      whatsapp: { groups: { [GROUP]: { mode: "mention" }, [missing]: { mode: "rules" } } },
      overrides: { backoff: { initialMs: 1 } },
    });
    await connected(c, lab.fake);
    const warned = () =>
      c.logger.entries.filter((e) => e.message.includes("configured groups this account is not in"));
    await vi.waitFor(() => expect(warned()).toHaveLength(1));
    expect(warned()[0]?.fields).toEqual({ groups: missing });
    // The groups it is in are listed with their names, so the operator can copy a JID.
    const listed = c.logger.entries.filter((e) => e.message.includes("groups this account is in"));
    expect(listed.map((e) => e.fields)).toEqual([{ groups: `${GROUP} (Group 0001) [configured]` }]);
    lab.fake.disconnect(428);
    await vi.waitFor(() => expect(lab.fake.socketCount).toBe(2));
    await connected(c, lab.fake);
    // Fetched again (it refills the metadata cache, one query for every group), but said once.
    await vi.waitFor(() => expect(lab.fake.records.filter((r) => r.kind === "group_list")).toHaveLength(2));
    expect(warned()).toHaveLength(1);
  });

  it("an empty group list names nothing (it cannot tell a stale JID from a failed call)", async () => {
    lab.fake.groups.clear();
    const c = await lab.channel({ whatsapp: { groups: { [GROUP]: { mode: "mention" } } } });
    await connected(c, lab.fake);
    await vi.waitFor(() => expect(lab.fake.records.some((r) => r.kind === "group_list")).toBe(true));
    expect(c.logger.entries.filter((e) => e.message.includes("configured groups"))).toEqual([]);
  });
});
