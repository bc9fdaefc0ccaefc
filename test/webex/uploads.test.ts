/**
 * The agent's images on Webex: a reference inside the agent's folder goes out as a file, one per
 * message, after the whole answer (its markup cut); one outside is refused visibly with its markup
 * kept; a space gets no uploads at all.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeWebex } from "../fakes/webex/server.js";
import type { WebexUnderTest } from "./harness.js";
import { ALICE, DM, done, startWebexChannel, text, until } from "./harness.js";

const PNG = Uint8Array.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00,
  0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89,
]);

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

function folders() {
  const cwd = mkdtempSync(join(tmpdir(), "parley-webex-cwd-"));
  writeFileSync(join(cwd, "one.png"), PNG);
  writeFileSync(join(cwd, "two.png"), PNG);
  const outside = mkdtempSync(join(tmpdir(), "parley-webex-out-"));
  mkdirSync(join(outside, "x"));
  writeFileSync(join(outside, "x", "leak.png"), PNG);
  return { cwd, outside };
}

describe("webex uploads", () => {
  it("two images inside the folder go out one per message after the answer; one outside stays text", async () => {
    const { cwd, outside } = folders();
    const reply = `Charts:\n\n![first](./one.png)\n\n![second](./two.png)\n\nAnd ![other](${outside}/x/leak.png).`;
    const c = await startWebexChannel(fake, { turns: [[text(reply), done]], provider: { cwd } });
    started.push(c);
    fake.userMessage({ email: ALICE, roomId: DM, text: "charts please" });
    await until(
      () => fake.botMessages(DM).filter((m) => (m.uploads?.length ?? 0) > 0).length === 2,
      "two uploads",
    );
    const messages = fake.botMessages(DM);
    const answer = messages.findIndex((m) => m.markdown.includes("Charts:"));
    const files = messages.flatMap((m, i) => ((m.uploads?.length ?? 0) > 0 ? [i] : []));
    expect(files.every((i) => i > answer)).toBe(true);
    expect(messages[files[0] ?? 0]?.uploads?.[0]?.bytes).toEqual(PNG);
    expect(messages[files[0] ?? 0]?.markdown).toBe("first");
    const all = messages.map((m) => m.markdown).join("\n");
    expect(all).not.toContain("![first](./one.png)");
    expect(all).toContain(`![other](${outside}/x/leak.png)`);
    expect(all).toContain("image not sent");
    expect(c.audit.find("webex_renderer.upload_files", "refused")).toHaveLength(1);
  });

  it("a space gets no uploads: the reference stays text", async () => {
    const { cwd } = folders();
    fake.addRoom("space-1", "group");
    const c = await startWebexChannel(fake, {
      webex: { allowGroupRooms: true, allowedRoomIds: ["space-1"] },
      turns: [[text("See ![first](./one.png)"), done]],
      provider: { cwd },
    });
    started.push(c);
    fake.userMessage({ email: ALICE, roomId: "space-1", text: "parley chart" });
    await until(
      () => fake.botMessages("space-1").some((m) => m.markdown.includes("./one.png")),
      "the answer",
    );
    expect(fake.botMessages("space-1").every((m) => (m.uploads?.length ?? 0) === 0)).toBe(true);
  });
});
