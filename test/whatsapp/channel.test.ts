/**
 * The WhatsApp channel end to end against the fake: who is answered, who is not, and what they may
 * do. The operator's account is the agent's: their self-chat is the command surface, their own
 * sends come back as echoes, and the people they admit may talk but not act.
 */
import { describe, expect, it, vi } from "vitest";
import { AutoApproveGrant } from "../../src/messaging/approval/grant.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { permissionRequest } from "../helpers/events.js";
import {
  connected,
  done,
  fakeWhatsAppLab,
  GUEST,
  GUEST_JID,
  GUEST_LID,
  linkedHome,
  STRANGER_JID,
  selfChat,
  text,
} from "./harness.js";

const lab = fakeWhatsAppLab();
const seen = (pattern: string | RegExp) =>
  lab.fake.waitFor(
    () =>
      lab.fake.visible().some((v) => (typeof pattern === "string" ? v.includes(pattern) : pattern.test(v))),
    5000,
    `"${pattern}" on screen`,
  );
const ALLOW_GUEST = { dmPolicy: "allowlist", allowFrom: [GUEST] };

describe("the operator's self-chat", () => {
  it("answers the operator, with ⏳ then ✅ on their message and no read receipt", async () => {
    const c = await lab.channel({ turns: () => [[text("Hello **operator**"), done]] });
    await connected(c, lab.fake);
    const asked = selfChat(lab.fake, "hi");
    await seen("Hello *operator*");
    await lab.fake.waitFor(() => lab.fake.reactionOn(asked.key.id ?? "") === "✅", 5000, "the tick");
    expect(lab.fake.reactions().map((r) => r.emoji)).toEqual(["⏳", "✅"]);
    expect(lab.fake.records.some((r) => r.kind === "presence" && r.type === "composing")).toBe(true);
  });

  it("a turn that fails leaves ⚠️, not ✅, on the message, and says why", async () => {
    const c = await lab.channel({ turns: () => [[text("half an answer"), { throws: "the agent crashed" }]] });
    await connected(c, lab.fake);
    const asked = selfChat(lab.fake, "do it");
    await lab.fake.waitFor(() => lab.fake.reactionOn(asked.key.id ?? "") === "⚠️", 5000, "the warning");
    expect(lab.fake.reactions().map((r) => r.emoji)).toEqual(["⏳", "⚠️"]);
    expect(lab.fake.visible()).toEqual([
      expect.stringMatching(/^half an answer\n\n_⚠️ Failed after \d+s: the agent crashed_$/),
    ]);
  });

  it("a self-chat command works; the same words to a contact start nothing", async () => {
    const c = await lab.channel({ turns: () => [[text("answered"), done]] });
    await connected(c, lab.fake);
    lab.fake.receive({ chat: STRANGER_JID, fromMe: true, text: "/status" });
    lab.fake.receive({ chat: STRANGER_JID, fromMe: true, text: "are you coming tonight?" });
    selfChat(lab.fake, "/status");
    await seen("Status");
    expect(c.providers.size).toBe(0);
    expect(lab.fake.visible().every((v) => !v.includes("answered"))).toBe(true);
    // The operator's own conversation with a contact is not parley's: no reply there, no audit row
    // naming it; only counted.
    expect(lab.fake.visible(STRANGER_JID)).toEqual([]);
    expect(c.dropLedger.count("whatsapp", "operator_elsewhere")).toBe(2);
    expect(
      c.audit.records.filter((r) => JSON.stringify(r).includes(STRANGER_JID.split("@")[0] ?? "-")),
    ).toEqual([]);
  });

  it("a command is the whole message: `/new please` is words for the agent, `/new` is the command", async () => {
    const c = await lab.channel({ turns: () => [[text("words received"), done]] });
    await connected(c, lab.fake);
    selfChat(lab.fake, "/new please");
    await seen("words received");
    expect([...c.providers.values()][0]?.prompts).toEqual(["/new please"]);
    selfChat(lab.fake, "/new");
    await seen("🆕 Fresh conversation started.");
    expect([...c.providers.values()][0]?.prompts).toEqual(["/new please"]);
  });

  it("our own sends never start a turn, even redelivered, and not after a restart either", async () => {
    const home = await linkedHome(lab.fake);
    const a = await lab.channel({ home, turns: () => [[text("first answer"), done]] });
    await connected(a, lab.fake);
    selfChat(lab.fake, "hello");
    await seen("first answer");
    await vi.waitFor(() => expect(a.providers.values().next().value?.prompts).toEqual(["hello"]));
    const echoes = [...lab.fake.outbox];
    expect(echoes.length).toBeGreaterThan(1);
    lab.fake.deliver(echoes, "notify");
    lab.fake.deliver(echoes, "append");
    await a.stop();
    const b = await lab.channel({ home, turns: () => [[text("must not run"), done]] });
    await connected(b, lab.fake);
    lab.fake.deliver(echoes, "append");
    selfChat(lab.fake, "/status");
    await seen("Status");
    expect(b.providers.size).toBe(0);
    expect([...a.providers.values()][0]?.prompts).toEqual(["hello"]);
  });
});

describe("who else may write", () => {
  it("a stranger under dmPolicy self gets no reply and an audit row", async () => {
    const c = await lab.channel({ turns: () => [[text("nope"), done]] });
    await connected(c, lab.fake);
    lab.fake.receive({ chat: STRANGER_JID, text: "hello, who is this?" });
    await vi.waitFor(() => expect(c.audit.find("inbound", "denied")).toHaveLength(1));
    expect(c.audit.find("inbound", "denied")[0]?.fields).toMatchObject({ user: "+4917000000099" });
    expect(lab.fake.visible()).toEqual([]);
    expect(c.providers.size).toBe(0);
  });

  it("an @lid sender allowed by number is admitted (the message's own alt, or baileys' mapping); an unmapped one is refused, and why", async () => {
    const OTHER = "+4917000000003";
    const OTHER_JID = "4917000000003@s.whatsapp.net";
    const OTHER_LID = "80000000003@lid";
    const c = await lab.channel({
      whatsapp: { dmPolicy: "allowlist", allowFrom: [GUEST, OTHER] },
      turns: () => [
        [text("hi there"), done],
        [text("again"), done],
      ],
    });
    await connected(c, lab.fake);
    // The message carries the phone JID beside the LID (remoteJidAlt): matched without a lookup.
    lab.fake.receive({ chat: GUEST_LID, alt: GUEST_JID, text: "hello from my lid" });
    await lab.fake.waitFor(() => lab.fake.visible(GUEST_LID).some((v) => v.includes("hi there")), 5000, "1");
    // Only baileys' mapping store knows this one: looked up there.
    lab.fake.mapLid(OTHER_LID, OTHER_JID, false);
    lab.fake.receive({ chat: OTHER_LID, text: "and me" });
    await lab.fake.waitFor(() => lab.fake.visible(OTHER_LID).some((v) => v.includes("hi there")), 5000, "2");
    lab.fake.receive({ chat: "80000000099@lid", text: "who am I" });
    await vi.waitFor(() => expect(c.audit.find("inbound", "denied")).toHaveLength(1));
    expect(c.audit.find("inbound", "denied")[0]?.fields).toMatchObject({
      user: "lid:80000000099",
      reason: "unmapped_lid",
    });
    expect(c.dropLedger.count("whatsapp", "unmapped_lid")).toBe(1);
    // One person, one conversation, whichever address they wrote from; what was learned is kept.
    lab.fake.receive({ chat: GUEST_LID, text: "third" });
    await vi.waitFor(() =>
      expect(c.providers.get("whatsapp:default:direct:+4917000000002")?.prompts).toHaveLength(2),
    );
    expect([...c.providers.keys()].sort()).toEqual([
      "whatsapp:default:direct:+4917000000002",
      "whatsapp:default:direct:+4917000000003",
    ]);
    expect(lab.fake.records.filter((r) => r.kind === "lid_lookup" && r.lid === GUEST_LID)).toHaveLength(0);
    expect(lab.fake.records.filter((r) => r.kind === "lid_lookup" && r.lid === OTHER_LID)).toHaveLength(1);
  });

  it("dmPolicy disabled denies everyone; open admits anyone", async () => {
    for (const [policy, admitted] of [
      ["disabled", false],
      ["open", true],
    ] as const) {
      const c = await lab.channel({
        whatsapp: { dmPolicy: policy },
        turns: () => [[text(`answer ${policy}`), done]],
      });
      await connected(c, lab.fake);
      lab.fake.receive({ chat: STRANGER_JID, text: "hi" });
      if (admitted) await seen(`answer ${policy}`);
      else await vi.waitFor(() => expect(c.audit.find("inbound", "denied")).toHaveLength(1));
      await c.stop();
    }
  });
});

describe("an admitted person talks to the agent but cannot make it act", () => {
  it("is answered with every tool denied even while the operator's grant is on, and their /new is refused", async () => {
    const audit = new MemoryAuditSink();
    const grant = new AutoApproveGrant({ audit });
    grant.arm({ source: "whatsapp", caller: "+4917000000001" });
    const c = await lab.channel({
      whatsapp: ALLOW_GUEST,
      grant,
      turns: () => [
        {
          steps: [permissionRequest({ requestId: "r1", title: "rm -rf ~" })],
          onPermission: {
            approve: [text("deleted"), done],
            deny: [text("I may not do that for you."), done],
          },
        },
      ],
    });
    await connected(c, lab.fake);
    expect(grant.isActive()).toBe(true);
    lab.fake.receive({ chat: GUEST_JID, text: "please clean my home folder" });
    await seen("I may not do that for you.");
    const provider = c.providers.get("whatsapp:default:direct:+4917000000002");
    expect(provider?.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
    // The agent is told who it is talking to; the words themselves are recorded as sent.
    expect(provider?.prompts[0]).toMatch(/^\[parley: this message comes from someone the operator admitted/);
    expect(provider?.prompts[0]).toContain("please clean my home folder");
    lab.fake.receive({ chat: GUEST_JID, text: "/new" });
    await seen("Only the operator can use `/new` here.");
    expect(c.audit.find("whatsapp.command", "refused")[0]?.fields).toMatchObject({
      user: GUEST,
      command: "new",
    });
    lab.fake.receive({ chat: GUEST_JID, text: "/help" });
    await seen("Commands");
  });

  it("keeps its own session under dmScope unified, and never steers into a running turn", async () => {
    const c = await lab.channel({
      whatsapp: { ...ALLOW_GUEST, dmScope: "unified" },
      supportsSteer: true,
      turns: (key) =>
        key.startsWith("unified")
          ? [[text("operator answer"), done]]
          : [
              [text("working on it"), { delayMs: 400 }, text(" and done"), done],
              [text("second answer"), done],
            ],
    });
    await connected(c, lab.fake);
    selfChat(lab.fake, "mine");
    await seen("operator answer");
    lab.fake.receive({ chat: GUEST_JID, text: "first" });
    await seen("working on it");
    lab.fake.receive({ chat: GUEST_JID, text: "second" });
    await seen("second answer");
    expect([...c.providers.keys()].sort()).toEqual([
      "unified:default",
      "whatsapp:default:direct:+4917000000002",
    ]);
    const guest = c.providers.get("whatsapp:default:direct:+4917000000002");
    expect(guest?.steers).toEqual([]);
    expect(guest?.prompts.at(-1)).toContain("second");
  });
});

describe("approvals by typed reply", () => {
  it("`1` approves only while a prompt is open; a sentence is a message; a timeout is written on the prompt", async () => {
    const c = await lab.channel({
      turns: () => [
        [text("one is just a number"), done],
        {
          steps: [permissionRequest({ requestId: "r1", title: "cat secrets.txt" })],
          onPermission: { approve: [text("read it"), done], deny: [text("left it alone"), done] },
        },
        [text("using the other file"), done],
      ],
      overrides: { approvalTimeoutMs: 400 },
    });
    await connected(c, lab.fake);
    selfChat(lab.fake, "1");
    await seen("one is just a number");
    selfChat(lab.fake, "read my secrets");
    await seen("cat secrets.txt");
    selfChat(lab.fake, "no, use the other file");
    await seen(/cat secrets\.txt[\s\S]*⌛ No answer in time: denied/);
    await seen("using the other file");
    const provider = [...c.providers.values()][0];
    expect(provider?.prompts).toEqual(["1", "read my secrets", "no, use the other file"]);
    expect(provider?.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
  });

  it("`1` typed while a prompt is open approves it, and never reaches the model as a message", async () => {
    const c = await lab.channel({
      turns: () => [
        {
          steps: [permissionRequest({ requestId: "r1", title: "cat notes.txt" })],
          onPermission: { approve: [text("read the notes"), done], deny: [text("left them alone"), done] },
        },
      ],
    });
    await connected(c, lab.fake);
    selfChat(lab.fake, "read my notes");
    await seen("cat notes.txt");
    selfChat(lab.fake, "1");
    await seen("read the notes");
    const provider = [...c.providers.values()][0];
    expect(provider?.answers).toEqual([{ requestId: "r1", verdict: "approve" }]);
    expect(provider?.prompts).toEqual(["read my notes"]);
  });

  it("a guest's `1` never answers the operator's prompt", async () => {
    const c = await lab.channel({
      whatsapp: { groups: { "120363000000000001@g.us": { mode: "mention" } } },
      turns: () => [
        {
          steps: [permissionRequest({ requestId: "r1", title: "git push" })],
          onPermission: { approve: [text("pushed"), done], deny: [text("not pushed"), done] },
        },
        [text("after"), done],
      ],
      overrides: { approvalTimeoutMs: 400 },
    });
    await connected(c, lab.fake);
    const group = "120363000000000001@g.us";
    lab.fake.receive({ chat: group, fromMe: true, text: "push it", mentions: [lab.fake.operator.pn] });
    await seen("git push");
    lab.fake.receive({ chat: group, from: GUEST_JID, text: "1", mentions: [lab.fake.operator.pn] });
    await seen("not pushed");
    expect([...c.providers.values()][0]?.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
  });
});
