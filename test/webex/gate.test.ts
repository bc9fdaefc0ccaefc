/**
 * Who Webex admits: deny by default, every refusal audited, spaces opt-in twice, a non-US org's
 * messages still found, own messages dropped.
 */
import { describe, expect, it } from "vitest";
import { EU_CLUSTER } from "../fakes/webex/server.js";
import type { WebexOptions } from "./harness.js";
import { ALICE, DM, done, text, until, webexLab } from "./harness.js";

const BOB = "bob@example.com";

const lab = webexLab();
const channel = (o?: WebexOptions) => lab.channel(o);

describe("webex gate", () => {
  it("a stranger, a space not listed, a listed space with the switch off: no reply, an audit row each", async () => {
    lab.fake.addRoom("space-listed", "group");
    lab.fake.addRoom("space-other", "group");
    const c = await channel({
      webex: { allowGroupRooms: false, allowedRoomIds: ["space-listed"] },
      turns: [[text("should not happen"), done]],
    });
    const stranger = lab.fake.userMessage({
      email: "mallory@example.com",
      roomId: "room-mallory",
      text: "hi",
    });
    const listedOff = lab.fake.userMessage({ email: ALICE, roomId: "space-listed", text: "parley hi" });
    await until(() => lab.fake.acked(stranger.frameId) && lab.fake.acked(listedOff.frameId), "both acked");
    const d = await channel({ webex: { allowGroupRooms: true, allowedRoomIds: ["space-listed"] } });
    await c.stop();
    const unlisted = lab.fake.userMessage({ email: ALICE, roomId: "space-other", text: "parley hi" });
    await until(() => lab.fake.acked(unlisted.frameId), "acked");
    expect(lab.fake.botMessages()).toEqual([]);
    expect(c.providers).toHaveLength(0);
    expect(d.providers).toHaveLength(0);
    const denied = c.audit.find("inbound", "denied").map((r) => r.fields.user);
    expect(denied).toEqual(expect.arrayContaining(["mallory@example.com", ALICE]));
    expect(c.audit.find("webex.space", "denied")[0]?.fields).toMatchObject({
      room: "space-listed",
      reason: "group_rooms_off",
    });
    expect(d.audit.find("webex.space", "denied")[0]?.fields).toMatchObject({
      room: "space-other",
      reason: "room_not_listed",
    });
    expect(d.audit.find("inbound", "denied")).toHaveLength(1);
  });

  it("a listed space with the switch on is answered as its own conversation, the mention stripped", async () => {
    lab.fake.addRoom("space-listed", "group");
    const c = await channel({
      webex: { allowGroupRooms: true, allowedRoomIds: ["space-listed"] },
      turns: [[text("hello space"), done]],
    });
    lab.fake.userMessage({ email: ALICE, roomId: "space-listed", text: "parley what is up" });
    await until(
      () => lab.fake.botMessages("space-listed").some((m) => m.markdown.includes("hello space")),
      "answer",
    );
    expect(c.providers[0]?.prompts[0]).toContain("what is up");
    expect(c.providers[0]?.prompts[0]).not.toContain("parley what");
    expect(c.running.hub.keyOf({ roomId: "space-listed", space: true, email: ALICE })).toContain(
      "space-listed",
    );
  });

  it("a room on a non-US cluster is answered: ids built with the cluster its conversation URL names", async () => {
    const c = await channel({ turns: [[text("hallo Frankfurt"), done]] });
    const sent = lab.fake.userMessage({ email: ALICE, roomId: DM, text: "hi", cluster: EU_CLUSTER });
    await until(() => lab.fake.botMessages(DM).some((m) => m.markdown.includes("hallo Frankfurt")), "answer");
    const hydrated = lab.fake.callsTo("GET", /^\/v1\/messages\//);
    expect(hydrated.map((call) => call.status)).toEqual([200]);
    const asked = decodeURIComponent(hydrated[0]?.path.split("/").pop() ?? "");
    expect(asked).toBe(sent.messageId);
    expect(Buffer.from(asked, "base64url").toString()).toMatch(
      /^ciscospark:\/\/urn:TEAM:eu-central-1_k\/MESSAGE\//,
    );
    // The catalog was asked in the host map format (the fake answers nothing else).
    expect(lab.fake.callsTo("GET", /^\/u2c\/catalog$/).map((call) => call.status)).toEqual([200]);
    expect(c.dropLedger.count("webex", "unknown_cluster")).toBe(0);
  });

  it("a card press in a non-US room reads its attachment action with that cluster's id", async () => {
    const c = await channel();
    const { messageId, frameId } = lab.fake.userMessage({
      email: ALICE,
      roomId: DM,
      text: "x",
      cluster: EU_CLUSTER,
    });
    await until(() => lab.fake.acked(frameId), "the message handled");
    lab.fake.pressCard({
      email: ALICE,
      messageId,
      inputs: { "parley.kind": "approval", "parley.request": "r1", "parley.nonce": "n", "parley.choice": 0 },
    });
    // Nothing asked for r1: the press is read (200) and refused, audited.
    await until(() => c.audit.find("webex.approval", "refused").length === 1, "the press judged");
    const read = lab.fake.callsTo("GET", /^\/v1\/attachment\/actions\//);
    expect(read.map((call) => call.status)).toEqual([200]);
    const asked = Buffer.from(
      decodeURIComponent(read[0]?.path.split("/").pop() ?? ""),
      "base64url",
    ).toString();
    expect(asked).toMatch(/^ciscospark:\/\/urn:TEAM:eu-central-1_k\/ATTACHMENT_ACTION\//);
  });

  it("a conversation's cluster is remembered; a host the catalog does not know is dropped and counted", async () => {
    lab.fake.addRoom("room-other-eu", "direct", EU_CLUSTER);
    const c = await channel({
      webex: { allowedEmails: [ALICE, BOB] },
      turns: [
        [text("first from Frankfurt"), done],
        [text("second from Frankfurt"), done],
      ],
    });
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "hi", cluster: EU_CLUSTER });
    await until(() => lab.fake.botMessages(DM).some((m) => m.markdown.includes("first from")), "answer");
    // The catalog read at the next connect no longer lists the EU host.
    lab.fake.forgottenClusters.add(EU_CLUSTER);
    lab.fake.dropSockets();
    await until(
      () => lab.fake.callsTo("GET", /^\/u2c\/catalog$/).length === 2 && lab.fake.liveSockets === 1,
      "reconnected",
    );
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "again" });
    await until(() => lab.fake.botMessages(DM).some((m) => m.markdown.includes("second from")), "answer");
    const stray = lab.fake.userMessage({ email: BOB, roomId: "room-other-eu", text: "hello?" });
    await until(() => lab.fake.acked(stray.frameId), "the stray acked");
    expect(c.dropLedger.count("webex", "unknown_cluster")).toBe(1);
    expect(
      c.audit.find("inbound", "dropped").find((r) => r.fields.reason === "unknown_cluster")?.fields,
    ).toMatchObject({
      host: "conv-k.wbx2.com",
      user: BOB,
    });
    expect(lab.fake.callsTo("GET", /^\/v1\/messages\//).map((call) => call.status)).toEqual([200, 200]);
  });

  it("a card press is gated by its room's type: a press from an unlisted space is denied, its room named", async () => {
    lab.fake.addRoom("space-other", "group");
    const c = await channel({ webex: { allowGroupRooms: true, allowedRoomIds: ["space-listed"] } });
    // Any message in that space will do as the pressed card's message: the press carries its room.
    const { messageId, frameId } = lab.fake.userMessage({ email: ALICE, roomId: "space-other", text: "x" });
    await until(() => lab.fake.acked(frameId), "the message handled");
    lab.fake.pressCard({
      email: ALICE,
      messageId,
      inputs: { "parley.kind": "approval", "parley.request": "r1", "parley.nonce": "n", "parley.choice": 0 },
    });
    await until(() => c.audit.find("webex.space", "denied").length === 2, "the press refused");
    expect(c.audit.find("webex.space", "denied")[1]?.fields).toMatchObject({
      room: "space-other",
      reason: "room_not_listed",
    });
    expect(lab.fake.callsTo("GET", /^\/v1\/rooms\//)).toHaveLength(1);
    expect(c.audit.find("webex.approval", "refused")).toEqual([]);
  });

  it("the bot's own messages are dropped before any call (actor e-mail)", async () => {
    await channel({ turns: [[text("one answer"), done]] });
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "hi" });
    await until(() => lab.fake.botMessages(DM).some((m) => m.markdown.includes("one answer")), "answer");
    // Every bot post also came back as an activity; none was hydrated.
    const hydrated = lab.fake.callsTo("GET", /^\/v1\/messages\//);
    expect(hydrated).toHaveLength(1);
  });

  it("a listed space is a shared audience: /sessions and /yolo are refused there, audited", async () => {
    lab.fake.addRoom("space-listed", "group");
    const c = await channel({ webex: { allowGroupRooms: true, allowedRoomIds: ["space-listed"] } });
    lab.fake.userMessage({ email: ALICE, roomId: "space-listed", text: "parley /sessions" });
    lab.fake.userMessage({ email: ALICE, roomId: "space-listed", text: "parley /yolo on" });
    await until(
      () => lab.fake.botMessages("space-listed").some((m) => m.markdown.includes("only shown in a direct")),
      "the listing refusal",
    );
    await until(() => c.audit.find("webex.sessions", "refused").length === 1, "the audit row");
    expect(c.audit.find("webex.sessions", "refused")[0]?.fields).toMatchObject({ reason: "shared_audience" });
    // Alice is the owner (the sole allowed address), yet a space is no place to arm auto-approve.
    await until(() => c.audit.find("auto_approve", "refused").length === 1, "the /yolo refusal");
    expect(c.audit.find("auto_approve", "refused")[0]?.fields).toMatchObject({ reason: "not_direct" });
    await until(
      () =>
        lab.fake
          .botMessages("space-listed")
          .some((m) => m.markdown.includes("only be switched on in a direct")),
      "the /yolo refusal shown",
    );
    expect(c.providers).toHaveLength(0);
  });
});
