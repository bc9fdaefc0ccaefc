/**
 * Issue #32's acceptance, on the corrected fake: WhatsApp that connects, stays connected, and says
 * so when it cannot. A 405 at connect is reported (log, doctor's record, the owner on the web chat)
 * and never retried; 401, 440 and 403 each end as they are, the owner told on the web chat; a
 * scheduled result reaches a LID self-chat; a group answer streams with one metadata fetch; a
 * reconnect in the middle of an answer leaves every message answerable by getMessage; the intake
 * counts what it does not hand on.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { proto } from "@whiskeysockets/baileys";
import { describe, expect, it, vi } from "vitest";
import { Egress } from "../../src/messaging/channel/egress.js";
import type { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { buildDmSessionKey } from "../../src/messaging/session/keys.js";
import { MemorySessionStore } from "../../src/messaging/session/session-store.js";
import { WebChatTransport } from "../../src/webchat/transport.js";
import { readEnded } from "../../src/whatsapp/endings.js";
import { FakeWhatsApp } from "../fakes/whatsapp/server.js";
import { testDrops } from "../helpers/drops.js";
import type { ChannelUnderTest } from "./harness.js";
import {
  CURRENT_VERSION,
  connected,
  done,
  fakeWhatsAppLab,
  GROUP,
  GUEST_JID,
  selfChat,
  startChannel,
  text,
} from "./harness.js";

const lab = fakeWhatsAppLab();

/** The gateway's egress with the web chat running beside WhatsApp: its page open, its owner admitted. */
function webChatBeside() {
  let web: WebChatTransport | undefined;
  const make = (audit: MemoryAuditSink) => {
    const egress = new Egress({ audit, store: new MemorySessionStore() });
    web = new WebChatTransport({ audit, drops: testDrops(audit, "webchat") });
    web.admit("owner", () => {});
    web.open("web-1");
    egress.register(web);
    return egress;
  };
  const told = () => (web?.bubbles("web-1") ?? []).map((b) => b.text);
  return { make, told };
}

async function endsWith(
  c: ChannelUnderTest,
  fake: FakeWhatsApp,
  close: () => void,
): Promise<{ sockets: number }> {
  await connected(c, fake);
  const before = fake.socketCount;
  close();
  await fake.waitFor(() => c.running.connection.state === "stopped", 5000, "the stop");
  return { sockets: before };
}

describe("final endings", () => {
  it("a 405 at connect: said in the log, kept for doctor, told to the owner on the web chat, not retried", async () => {
    const fake = await FakeWhatsApp.start({ lifetimeMs: 30_000, minVersion: CURRENT_VERSION });
    try {
      const web = webChatBeside();
      // WhatsApp Web cannot be asked (no network here): baileys' built-in version, which is refused.
      const c = await startChannel(fake, {
        egress: web.make,
        overrides: {
          fetchVersion: async () => {
            throw new Error("offline");
          },
          backoff: { initialMs: 1, maxMs: 1 },
        },
      });
      try {
        await fake.waitFor(() => c.running.connection.state === "stopped", 5000, "the stop");
        await new Promise((r) => setTimeout(r, 50));
        expect(fake.socketCount).toBe(1);
        expect(c.logger.entries.some((e) => /could not ask WhatsApp Web/.test(e.message))).toBe(true);
        expect(c.logger.entries.some((e) => e.level === "error" && /outdated \(405\)/.test(e.message))).toBe(
          true,
        );
        expect(readEnded(c.home)).toMatchObject({ ending: "outdated", code: 405 });
        await vi.waitFor(() => expect(web.told().join("\n")).toMatch(/WhatsApp stopped: .*outdated \(405\)/));
        expect(c.audit.find("whatsapp.connection", "failed").map((r) => r.fields.reason)).toEqual([
          "outdated",
        ]);
      } finally {
        await c.stop();
      }
    } finally {
      await fake.stop();
    }
  });

  it("the version WhatsApp Web answered is the one announced, and is accepted", async () => {
    const c = await lab.channel();
    await connected(c, lab.fake);
    expect(lab.fake.announced).toEqual([CURRENT_VERSION]);
  });

  it("401 (logged out): stopped, the keys kept, doctor's record, the owner told on the web chat", async () => {
    const web = webChatBeside();
    const c = await lab.channel({ egress: web.make, overrides: { backoff: { initialMs: 1 } } });
    const { sockets } = await endsWith(c, lab.fake, () =>
      lab.fake.disconnect(401, lab.fake.live(), { reason: "401" }),
    );
    expect(lab.fake.socketCount).toBe(sockets);
    expect(existsSync(join(c.home, "whatsapp", "creds.json"))).toBe(true);
    expect(readEnded(c.home)).toMatchObject({ ending: "logged_out", code: 401 });
    await vi.waitFor(() =>
      expect(web.told().join("\n")).toMatch(/WhatsApp stopped: WhatsApp logged this device out/),
    );
  });

  it("401 device_removed: stopped, the keys deleted, the owner told on the web chat", async () => {
    const web = webChatBeside();
    const c = await lab.channel({ egress: web.make });
    await endsWith(c, lab.fake, () => lab.fake.removeDevice());
    await vi.waitFor(() => expect(existsSync(join(c.home, "whatsapp", "creds.json"))).toBe(false));
    await vi.waitFor(() => expect(readEnded(c.home)).toMatchObject({ ending: "removed" }));
    await vi.waitFor(() => expect(web.told().join("\n")).toMatch(/removed from the account on the phone/));
  });

  it("440 (replaced): stopped without a fight, the keys kept, the owner told on the web chat", async () => {
    const web = webChatBeside();
    const c = await lab.channel({ egress: web.make, overrides: { backoff: { initialMs: 1 } } });
    const { sockets } = await endsWith(c, lab.fake, () => lab.fake.replaceSession());
    await new Promise((r) => setTimeout(r, 30));
    expect(lab.fake.socketCount).toBe(sockets);
    expect(existsSync(join(c.home, "whatsapp", "creds.json"))).toBe(true);
    expect(readEnded(c.home)).toMatchObject({ ending: "replaced", code: 440 });
    await vi.waitFor(() => expect(web.told().join("\n")).toMatch(/another client took over/));
  });

  it("403 (restricted): stopped, the keys kept (re-linking cures no ban), the owner told on the web chat", async () => {
    const web = webChatBeside();
    const c = await lab.channel({ egress: web.make });
    await endsWith(c, lab.fake, () => lab.fake.restrict());
    expect(existsSync(join(c.home, "whatsapp", "creds.json"))).toBe(true);
    expect(readEnded(c.home)).toMatchObject({ ending: "restricted", code: 403 });
    await vi.waitFor(() => expect(web.told().join("\n")).toMatch(/refused this account \(403/));
  });

  it("with no other channel to tell, the log says so", async () => {
    const c = await lab.channel();
    await endsWith(c, lab.fake, () => lab.fake.restrict());
    await vi.waitFor(() =>
      expect(c.logger.entries.some((e) => /no other channel to tell the owner on/.test(e.message))).toBe(
        true,
      ),
    );
  });
});

describe("LIDs on the proactive path", () => {
  it("a scheduled result to the operator's LID self-chat is delivered; an unmapped LID is refused, and why", async () => {
    const c = await lab.channel({ whatsapp: { dmPolicy: "allowlist", allowFrom: ["+4917000000002"] } });
    await connected(c, lab.fake);
    const egress = new Egress({ audit: c.audit, store: new MemorySessionStore() });
    egress.register(c.running.transport);
    const sessionKey = buildDmSessionKey("whatsapp", "default", "+4917000000001");
    const toLid = await egress.send({
      purpose: "schedule",
      destination: {
        kind: "link",
        link: { channelType: "whatsapp", conversationId: lab.fake.operator.lid },
        sessionKey,
      },
      text: "the nightly report is ready",
    });
    expect(toLid).toEqual({ status: "sent", parts: 1, channel: "whatsapp" });
    expect(lab.fake.visible(lab.fake.operator.lid)).toEqual(["the nightly report is ready"]);
    const stranger = await egress.send({
      purpose: "schedule",
      destination: {
        kind: "link",
        link: { channelType: "whatsapp", conversationId: "80000000055@lid" },
        sessionKey,
      },
      text: "nope",
    });
    expect(stranger).toEqual({ status: "refused", reason: "not_allowed" });
    expect(
      c.audit
        .find("channel.proactive_send_authorize", "denied")
        .some((r) => r.fields.reason === "unmapped_lid"),
    ).toBe(true);
  });

  it("an allow-listed number is reached in its LID chat once baileys' mapping store knows it (asked at connect)", async () => {
    lab.fake.mapLid("80000000002@lid", GUEST_JID, false);
    const c = await lab.channel({ whatsapp: { dmPolicy: "allowlist", allowFrom: ["+4917000000002"] } });
    await connected(c, lab.fake);
    await vi.waitFor(() => expect(lab.fake.records.some((r) => r.kind === "pn_lookup")).toBe(true));
    await vi.waitFor(() => expect(c.running.transport.maySendTo("80000000002@lid")).toBe(true));
    expect(await c.running.transport.sendMessage("80000000002@lid", "hello")).not.toBe("");
  });
});

describe("groups", () => {
  it("an answer streamed into a group asks for the group's metadata once", async () => {
    const c = await lab.channel({
      whatsapp: { groups: { [GROUP]: { mode: "mention" } } },
      turns: () => [
        [
          { delayMs: 20, event: { type: "text", text: "One. " } },
          { delayMs: 20, event: { type: "text", text: "Two. " } },
          { delayMs: 20, event: { type: "text", text: "Three. " } },
          { delayMs: 20, event: { type: "text", text: "Four." } },
          done,
        ],
      ],
    });
    await connected(c, lab.fake);
    lab.fake.receive({
      chat: GROUP,
      from: GUEST_JID,
      text: "count please",
      mentions: [lab.fake.operator.pn],
    });
    await lab.fake.waitFor(
      () => lab.fake.visible(GROUP).some((v) => v.includes("Four.")),
      5000,
      "the answer",
    );
    await vi.waitFor(() => expect(lab.fake.reactions(GROUP).map((r) => r.emoji)).toContain("✅"));
    const sendsAndEdits = lab.fake.records.filter(
      (r) => (r.kind === "send" || r.kind === "edit" || r.kind === "react") && r.chat === GROUP,
    );
    expect(sendsAndEdits.length).toBeGreaterThan(3);
    const fetches = lab.fake.records.filter((r) => r.kind === "group_list" || r.kind === "group_metadata");
    expect(fetches).toEqual([{ kind: "group_list" }]);
  });

  it("without the list, the first send's miss is fetched once; a group update fetches it again", async () => {
    const c = await lab.channel({ whatsapp: { groups: { [GROUP]: { mode: "mention" } } } });
    // The account's group list is empty (a failed or late call): nothing cached at connect.
    lab.fake.groups.clear();
    await connected(c, lab.fake);
    for (const t of ["a", "b", "c"]) await c.running.transport.sendText(GROUP, t);
    expect(lab.fake.records.filter((r) => r.kind === "group_metadata")).toHaveLength(1);
    lab.fake.live()?.emit("group-participants.update", {
      id: GROUP,
      author: lab.fake.operator.pn,
      participants: [],
      action: "add",
    } as never);
    await vi.waitFor(() =>
      expect(lab.fake.records.filter((r) => r.kind === "group_metadata")).toHaveLength(2),
    );
    await c.running.transport.sendText(GROUP, "d");
    expect(lab.fake.records.filter((r) => r.kind === "group_metadata")).toHaveLength(2);
  });
});

describe("a reconnect in the middle of an answer", () => {
  it("leaves no message a recipient's retry cannot get (getMessage answers what the new socket never sent)", async () => {
    const c = await lab.channel({
      overrides: { backoff: { initialMs: 5, maxMs: 5 }, renderer: { editIntervalMs: 0, firstFrameMs: 0 } },
      turns: () => [
        [
          text("Part one. "),
          { delayMs: 150, event: { type: "text", text: "Part two. " } },
          { delayMs: 150, event: { type: "text", text: "Part three." } },
          done,
        ],
      ],
    });
    await connected(c, lab.fake);
    const self = lab.fake.operator.pn;
    selfChat(lab.fake, "tell me in parts");
    await lab.fake.waitFor(
      () => lab.fake.visible(self).some((v) => v.includes("Part one.")),
      5000,
      "part one",
    );
    lab.fake.disconnect(428);
    await lab.fake.waitFor(
      () => lab.fake.visible(self).some((v) => v.includes("Part three.")),
      5000,
      "the end",
    );
    await vi.waitFor(() => expect(lab.fake.reactions(self).map((r) => r.emoji)).toContain("✅"));
    expect(lab.fake.socketCount).toBe(2);
    const ids = lab.fake.outbox.map((m) => m.key.id ?? "");
    expect(ids.length).toBeGreaterThan(2);
    for (const id of ids) expect(await lab.fake.retry(self, id)).toBe(true);
  });
});

describe("nothing silent at intake", () => {
  it("an unknown shape, a protocol message and a duplicate are each counted with their reason", async () => {
    const c = await lab.channel({ turns: () => [[text("once"), done]] });
    await connected(c, lab.fake);
    const self = lab.fake.operator.pn;
    lab.fake.receive({ chat: self, fromMe: true, message: { groupInviteMessage: { groupJid: GROUP } } });
    lab.fake.receive({ chat: self, fromMe: true, message: { reactionMessage: { text: "👍" } } });
    const first = selfChat(lab.fake, "only once please");
    await lab.fake.waitFor(
      () => lab.fake.visible(self).some((v) => v.startsWith("once")),
      5000,
      "the answer",
    );
    lab.fake.deliver([first], "append");
    await vi.waitFor(() => expect(c.dropLedger.count("whatsapp", "redelivered")).toBe(1));
    expect(c.dropLedger.count("whatsapp", "duplicate")).toBe(0);
    expect(c.dropLedger.count("whatsapp", "unknown_shape")).toBe(1);
    expect(c.dropLedger.count("whatsapp", "not_a_message")).toBe(1);
    expect(lab.fake.visible(self).filter((v) => v.startsWith("once"))).toHaveLength(1);
  });

  it("a view-once placeholder and an undecryptable stub each get a one-line reply", async () => {
    const c = await lab.channel();
    await connected(c, lab.fake);
    const self = lab.fake.operator.pn;
    const viewOnce = lab.fake.build({ chat: self, fromMe: true, text: "" });
    viewOnce.message = undefined;
    Object.assign(viewOnce.key, { isViewOnce: true });
    const stub = lab.fake.build({ chat: self, fromMe: true, text: "" });
    stub.message = undefined;
    stub.messageStubType = proto.WebMessageInfo.StubType.CIPHERTEXT;
    stub.messageStubParameters = ["Bad MAC"];
    lab.fake.deliver([viewOnce, stub], "notify");
    await lab.fake.waitFor(() => lab.fake.visible(self).length === 2, 5000, "two replies");
    expect(lab.fake.visible(self)[0]).toMatch(/can't open view-once messages/);
    expect(lab.fake.visible(self)[1]).toMatch(/couldn't read that message/);
    expect(c.providers.size).toBe(0);
  });
});
