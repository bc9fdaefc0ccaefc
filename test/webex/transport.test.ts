/** The transport's own gate: the second own-message drop (hydrated person id) and positive room types. */
import { describe, expect, it } from "vitest";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import type { WebexEnvelope, WebexRest } from "../../src/webex/transport.js";
import { WebexTransport } from "../../src/webex/transport.js";
import { testDrops } from "../helpers/drops.js";

const rest = {} as WebexRest;

function transport(audit = new MemoryAuditSink()) {
  return new WebexTransport({
    drops: testDrops(audit, "webex"),
    audit,
    rest,
    self: () => ({ id: "bot-person-id", emails: ["parley@webex.bot"] }),
    allowedEmails: new Set(["alice@example.com"]),
    allowGroupRooms: true,
    allowedRoomIds: new Set(["space-1"]),
  });
}

const base: WebexEnvelope = {
  messageId: "m1",
  roomId: "room-1",
  roomType: "direct",
  personId: "alice-id",
  email: "Alice@Example.com",
  text: "hi",
  files: [],
  mentioned: false,
};

describe("webex transport", () => {
  it("drops the bot's own message by its hydrated person id, whatever e-mail it carries", async () => {
    expect(await transport().receive({ ...base, personId: "bot-person-id" })).toEqual({
      status: "dropped",
      reason: "bot_authored",
    });
  });

  it("compares e-mails lowercased", async () => {
    expect((await transport().receive(base)).status).toBe("dispatched");
  });

  it("a room type it does not know is treated as a space, never as direct", async () => {
    const audit = new MemoryAuditSink();
    const out = await transport(audit).receive({ ...base, roomType: "" });
    expect(out.status).toBe("denied");
    expect(audit.find("webex.space", "denied")[0]?.fields).toMatchObject({ room: "room-1" });
  });
});
