/**
 * Who Webex admits: deny by default, every refusal audited, spaces opt-in twice, a non-US org's
 * messages still found, own messages dropped.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeWebex } from "../fakes/webex/server.js";
import type { WebexUnderTest } from "./harness.js";
import { ALICE, DM, done, startWebexChannel, text, until } from "./harness.js";

let fake: FakeWebex;
const started: WebexUnderTest[] = [];

beforeEach(async () => {
  fake = await new FakeWebex({ lifetimeMs: 30_000 }).start();
  fake.addRoom(DM, "direct");
});
afterEach(async () => {
  for (const c of started.splice(0)) await c.stop();
  await fake.close();
});

async function channel(o: Parameters<typeof startWebexChannel>[1] = {}) {
  const c = await startWebexChannel(fake, o);
  started.push(c);
  return c;
}

describe("webex gate", () => {
  it("a stranger, a space not listed, a listed space with the switch off: no reply, an audit row each", async () => {
    fake.addRoom("space-listed", "group");
    fake.addRoom("space-other", "group");
    const c = await channel({
      webex: { allowGroupRooms: false, allowedRoomIds: ["space-listed"] },
      turns: [[text("should not happen"), done]],
    });
    const stranger = fake.userMessage({ email: "mallory@example.com", roomId: "room-mallory", text: "hi" });
    const listedOff = fake.userMessage({ email: ALICE, roomId: "space-listed", text: "parley hi" });
    await until(() => fake.acked(stranger.frameId) && fake.acked(listedOff.frameId), "both acked");
    const d = await channel({ webex: { allowGroupRooms: true, allowedRoomIds: ["space-listed"] } });
    await c.stop();
    const unlisted = fake.userMessage({ email: ALICE, roomId: "space-other", text: "parley hi" });
    await until(() => fake.acked(unlisted.frameId), "acked");
    expect(fake.botMessages()).toEqual([]);
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
    fake.addRoom("space-listed", "group");
    const c = await channel({
      webex: { allowGroupRooms: true, allowedRoomIds: ["space-listed"] },
      turns: [[text("hello space"), done]],
    });
    fake.userMessage({ email: ALICE, roomId: "space-listed", text: "parley what is up" });
    await until(
      () => fake.botMessages("space-listed").some((m) => m.markdown.includes("hello space")),
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
    fake.userMessage({ email: ALICE, roomId: DM, text: "hi", cluster: "urn:TEAM:eu-central-1_k" });
    await until(() => fake.botMessages(DM).some((m) => m.markdown.includes("hallo Frankfurt")), "answer");
    const hydrated = fake.callsTo("GET", /^\/v1\/messages\//);
    expect(hydrated.every((call) => call.status === 200)).toBe(true);
  });

  it("the bot's own messages are dropped before any call (actor e-mail)", async () => {
    await channel({ turns: [[text("one answer"), done]] });
    fake.userMessage({ email: ALICE, roomId: DM, text: "hi" });
    await until(() => fake.botMessages(DM).some((m) => m.markdown.includes("one answer")), "answer");
    // Every bot post also came back as an activity; none was hydrated.
    const hydrated = fake.callsTo("GET", /^\/v1\/messages\//);
    expect(hydrated).toHaveLength(1);
  });
});
