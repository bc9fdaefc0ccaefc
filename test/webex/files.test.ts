/**
 * Files users share on Webex: HEAD first (name, type, size, scan state), 410 and 428 refused, 423
 * retried a bounded number of times and then the sender told to send it again (Webex names no event
 * for a scan's end), and the token sent only to the API origin.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SCANNING_TEXT } from "../../src/webex/intake.js";
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

async function channel() {
  const c = await startWebexChannel(fake, { turns: [[text("read it"), done]] });
  started.push(c);
  return c;
}

const NOTES = new TextEncoder().encode("meeting notes: ship on friday\n");
const promptText = (c: WebexUnderTest) => JSON.stringify(c.providers[0]?.prompts ?? []);

describe("webex files", () => {
  for (const [state, words] of [
    ["infected", "infected"],
    ["unscannable", "could not scan"],
  ] as const) {
    it(`an ${state} file is refused, visibly and audited, and no turn runs`, async () => {
      const c = await channel();
      const url = fake.addFile({ name: "notes.txt", type: "text/plain", bytes: NOTES, state });
      fake.userMessage({ email: ALICE, roomId: DM, text: "see attached", files: [url] });
      await until(() => fake.botMessages(DM).some((m) => m.markdown.includes(words)), "the refusal");
      expect(c.providers).toHaveLength(0);
      expect(c.audit.find("inbound", "dropped").map((r) => r.fields.reason)).toContain("file_refused");
      expect(c.dropLedger.count("webex", "file_refused")).toBe(1);
      // Never downloaded, and never asked for with allow=unscannable.
      expect(fake.callsTo("GET", /^\/v1\/contents\//)).toEqual([]);
    });
  }

  it("a clean file reaches the agent with the name Webex gives it", async () => {
    const c = await channel();
    const url = fake.addFile({ name: "notes.txt", type: "text/plain", bytes: NOTES, state: "clean" });
    fake.userMessage({ email: ALICE, roomId: DM, text: "see attached", files: [url] });
    await until(() => fake.botMessages(DM).some((m) => m.markdown.includes("read it")), "the answer");
    expect(promptText(c)).toContain("ship on friday");
    expect(promptText(c)).toContain("notes.txt");
  });

  it("a file still being scanned is retried a bounded number of times, then the sender is told to resend", async () => {
    const c = await channel();
    const url = fake.addFile({
      name: "notes.txt",
      type: "text/plain",
      bytes: NOTES,
      state: "scanning",
      scanningFor: 99,
    });
    const sent = fake.userMessage({ email: ALICE, roomId: DM, text: "see attached", files: [url] });
    await until(() => fake.botMessages(DM).some((m) => m.markdown.includes(SCANNING_TEXT)), "the notice");
    expect(fake.acked(sent.frameId)).toBe(true);
    expect(fake.callsTo("HEAD", /^\/v1\/contents\//)).toHaveLength(4);
    expect(c.providers).toHaveLength(0);
    expect(c.dropLedger.count("webex", "file_scanning")).toBe(1);
    // Sent again once the scan is over: read and answered.
    const file = fake.files.get(url.split("/").pop() ?? "");
    if (file) file.state = "clean";
    fake.userMessage({ email: ALICE, roomId: DM, text: "again", files: [url] });
    await until(() => fake.botMessages(DM).some((m) => m.markdown.includes("read it")), "the answer");
    expect(promptText(c)).toContain("ship on friday");
  });

  it("a file URL off the API origin is refused without a request (the token would go with it)", async () => {
    const c = await channel();
    fake.userMessage({
      email: ALICE,
      roomId: DM,
      text: "see attached",
      files: ["https://files.evil.example/x"],
    });
    await until(
      () => fake.botMessages(DM).some((m) => m.markdown.includes("not on Webex's file server")),
      "refusal",
    );
    expect(c.providers).toHaveLength(0);
    expect(fake.calls.every((call) => call.authorized)).toBe(true);
  });
});
