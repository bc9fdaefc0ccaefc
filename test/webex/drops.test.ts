/**
 * No Webex frame is dropped in silence: each one that does not become a message is acked (so Webex
 * does not send it again) and counted with its reason, audited (ctx.drops).
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ALICE, DM, done, text, until, webexLab } from "./harness.js";

const lab = webexLab();

/** A conversation.activity frame as a test writes it, on the US conversation host. */
function activityFrame(activity: Record<string, unknown>) {
  const conversation = randomUUID();
  return {
    id: randomUUID(),
    data: {
      eventType: "conversation.activity",
      activity: {
        actor: { id: "p", objectType: "person", entryUUID: "p", emailAddress: ALICE },
        target: {
          id: conversation,
          objectType: "conversation",
          url: `https://conv-a.wbx2.com/conversation/api/v1/conversations/${conversation}`,
        },
        ...activity,
      },
    },
  };
}

describe("webex drops", () => {
  it("unknown shapes, a missing id, a duplicate, an own echo, a stranger: each acked and counted", async () => {
    const c = await lab.channel({ turns: [[text("one answer"), done]] });
    const count = (reason: string) => c.dropLedger.count("webex", reason);
    // The socket's own frame after authorizing.
    await until(() => count("control") === 1, "buffer_state counted");

    lab.fake.sendRaw("not json at all");
    const unknownEvent = { id: randomUUID(), data: { eventType: "example.unknown_event" } };
    lab.fake.sendRaw(unknownEvent);
    const noId = activityFrame({ verb: "post", object: { objectType: "comment" } });
    lab.fake.sendRaw(noId);
    const ignored = activityFrame({
      id: randomUUID(),
      verb: "acknowledge",
      object: { objectType: "activity" },
    });
    lab.fake.sendRaw(ignored);
    const orphanPress = activityFrame({
      id: randomUUID(),
      verb: "cardAction",
      object: { objectType: "submit" },
    });
    lab.fake.sendRaw(orphanPress);
    await until(
      () => [unknownEvent, noId, ignored, orphanPress].every((f) => lab.fake.acked(f.id)),
      "every odd frame acked",
    );
    expect(count("unparseable")).toBe(1);
    expect(count("unknown_shape")).toBe(2);
    expect(count("missing_id")).toBe(1);
    expect(count("ignored_verb")).toBe(1);

    const sent = lab.fake.userMessage({ email: ALICE, roomId: DM, text: "hi" });
    await until(() => lab.fake.botMessages(DM).some((m) => m.markdown.includes("one answer")), "answer");
    lab.fake.redeliver(sent.frameId);
    await until(() => count("duplicate") === 1, "the redelivery counted");
    // Every answer the bot posted came back as its own activity.
    await until(() => count("own_echo") >= 1, "the echo counted");
    const stranger = lab.fake.userMessage({
      email: "mallory@example.com",
      roomId: "room-mallory",
      text: "hi",
    });
    await until(() => lab.fake.acked(stranger.frameId), "the stranger acked");
    expect(count("stranger")).toBe(1);
    expect(lab.fake.callsTo("GET", /^\/v1\/messages\//)).toHaveLength(2);
    expect(c.providers[0]?.prompts).toHaveLength(1);
    const shapes = c.audit.find("inbound", "dropped").map((r) => r.fields.shape);
    expect(shapes).toEqual(
      expect.arrayContaining(["example.unknown_event", "cardAction:no parent", "acknowledge"]),
    );
  });
});
