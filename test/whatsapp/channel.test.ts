/**
 * The WhatsApp channel end to end against the fake: who is answered, who is not, and what they see.
 */
import { describe, expect, it } from "vitest";
import { permissionRequest } from "../helpers/events.js";
import {
  connected,
  done,
  fakeWhatsAppLab,
  GUEST,
  GUEST_JID,
  STRANGER_JID,
  selfChat,
  text,
} from "./harness.js";

const lab = fakeWhatsAppLab();

describe("the operator's self-chat", () => {
  it("answers the operator in their self-chat, with a tick on their message", async () => {
    const c = await lab.channel({ turns: () => [[text("Hello **operator**"), done]] });
    await connected(c, lab.fake);
    const asked = selfChat(lab.fake, "hi");
    await lab.fake.waitFor(
      () => lab.fake.visible().some((v) => v.includes("Hello *operator*")),
      5000,
      "answer",
    );
    await lab.fake.waitFor(() => lab.fake.reactionOn(asked.key.id ?? "") === "✅", 5000, "the tick");
    expect(lab.fake.reactions().map((r) => r.emoji)).toEqual(["⏳", "✅"]);
    expect(lab.fake.messages.every((m) => m.mentions === 0)).toBe(true);
  });
});
