/**
 * Who Webex admits: deny by default, every refusal audited, spaces opt-in twice, a non-US org's
 * messages still found, own messages dropped.
 */
import { describe, expect, it } from "vitest";
import type { WebexOptions } from "./harness.js";
import { ALICE, DM, done, text, until, webexLab } from "./harness.js";

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

  it("a message from a non-US cluster is answered (its id is encoded with that cluster)", async () => {
    await channel({ turns: [[text("hallo Frankfurt"), done]] });
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "hi", cluster: "urn:TEAM:eu-central-1_k" });
    await until(() => lab.fake.botMessages(DM).some((m) => m.markdown.includes("hallo Frankfurt")), "answer");
    const hydrated = lab.fake.callsTo("GET", /^\/v1\/messages\//);
    expect(hydrated.every((call) => call.status === 200)).toBe(true);
  });

  it("an activity naming no cluster uses the one its connection named last", async () => {
    await channel({
      turns: [
        [text("first from Frankfurt"), done],
        [text("second from Frankfurt"), done],
      ],
    });
    const eu = "urn:TEAM:eu-central-1_k";
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "hi", cluster: eu });
    await until(() => lab.fake.botMessages(DM).some((m) => m.markdown.includes("first from")), "answer");
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "again", cluster: eu, namesCluster: false });
    await until(() => lab.fake.botMessages(DM).some((m) => m.markdown.includes("second from")), "answer");
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
