/**
 * The watch against the fake: the cursor passes every observed row (dropped ones too) once it is
 * journaled; a burst past imsg's poll batch arrives whole on one subscription, each row answered
 * once; a replay is answered once; bad and very long lines from imsg are survived; a dead imsg is restarted and the
 * watch resumes from the cursor, so nothing that arrived meanwhile is lost.
 */
import { describe, expect, it } from "vitest";
import { IMESSAGE_CURSOR } from "../../src/imessage/watch.js";
import { waitFor } from "../fakes/imsg/control.js";
import { caughtUp, done, GUEST, imsgLab, OWNER, promptsOf, STRANGER, text } from "./channel-harness.js";

const lab = imsgLab();
const answers = (n: number) => () => Array.from({ length: n }, (_, i) => [text(`answer ${i}`), done]);
const count = (haystack: string[], needle: RegExp) => haystack.join("\n").match(needle)?.length ?? 0;

describe("the watch", () => {
  it("the cursor passes dropped rows too, durably, once each row is settled", async () => {
    const folder = lab.folder();
    const c = await lab.channel({ turns: answers(1) });
    await folder.incoming(STRANGER, "who is this");
    const { rowid } = await folder.incoming(OWNER, "hi", { group: true });
    await caughtUp(c, folder);
    expect(c.running.feed.cursor).toBe(rowid);
    expect(await c.parley.cursors.get(IMESSAGE_CURSOR)).toBe(rowid);
  });

  it("a burst past imsg's batch of 100 arrives over later polls on the one subscription, each row once", async () => {
    const folder = lab.folder();
    const c = await lab.channel({ turns: answers(130), queueMode: "queue" });
    // 120 rows: imsg reads 100 per poll (MessageWatcher's batchLimit), the rest on the next poll.
    const texts = Array.from({ length: 120 }, (_, i) => `msg-${i}-end`);
    await folder.command({ op: "burst", from: GUEST, texts });
    await waitFor(() => promptsOf(c).join("\n").includes("msg-119-end"), "the last message", 20_000);
    // parley's own answers are rows of chat.db too: the watch has caught up only once the last is sent.
    await waitFor(async () => (await c.parley.intake.unfinished()).length === 0, "every answer sent", 20_000);
    await caughtUp(c, folder);
    const prompts = promptsOf(c);
    for (const t of texts) expect(count(prompts, new RegExp(`\\b${t}\\b`, "g")), t).toBe(1);
    // Nothing was lost, so nothing was resubscribed: one subscription, asked with real params only.
    const subscribes = folder
      .requests()
      .filter((r) => r.method === "watch.subscribe" && r.answered === undefined);
    expect(subscribes.map((r) => r.params)).toEqual([{ attachments: false }]);
    expect(c.running.feed.cursor).toBe(folder.lastRowid());
  });

  it("a bufferLimit left in an old config still loads, is warned about, and sends no buffer_limit", async () => {
    const folder = lab.folder();
    const c = await lab.channel({ section: { bufferLimit: 16 }, turns: answers(1) });
    expect(c.logger.entries.some((e) => e.message.includes("bufferLimit has no effect"))).toBe(true);
    const subscribes = folder
      .requests()
      .filter((r) => r.method === "watch.subscribe" && r.answered === undefined);
    expect(subscribes.map((r) => r.params)).toEqual([{ attachments: false }]);
  });

  it("a replayed row is answered once", async () => {
    const folder = lab.folder();
    const c = await lab.channel({ turns: answers(3) });
    const { rowid } = await folder.incoming(OWNER, "only once");
    await waitFor(() => folder.sent(OWNER).length === 1, "the answer");
    await folder.command({ op: "replay", rowids: [rowid] });
    await caughtUp(c, folder);
    await new Promise((r) => setTimeout(r, 300));
    expect(folder.sent(OWNER)).toHaveLength(1);
    expect(promptsOf(c)).toEqual(["only once"]);
  });

  it("lines that are not JSON, and lines far above 64 KiB, are survived", async () => {
    const folder = lab.folder();
    await lab.channel({ turns: answers(2) });
    await folder.command({ op: "garbage", hugeBytes: 200 * 1024 });
    const long = `start ${"l".repeat(80 * 1024)} end`;
    await folder.incoming(OWNER, long);
    await waitFor(() => folder.sent(OWNER).length === 1, "the long message answered");
    await folder.incoming(OWNER, "and after");
    await waitFor(() => folder.sent(OWNER).length === 2, "the next one answered");
  });

  it("counts every frame not handed on: bad lines, an unknown notification, a replay", async () => {
    const folder = lab.folder();
    const c = await lab.channel({ turns: answers(2) });
    // "this is not json", "[1,2,3]", and two `noise` notifications imsg never sends.
    await folder.command({ op: "garbage", hugeBytes: 0 });
    const { rowid } = await folder.incoming(OWNER, "only once");
    await waitFor(() => folder.sent(OWNER).length === 1, "the answer");
    await folder.command({ op: "replay", rowids: [rowid] });
    await caughtUp(c, folder);
    await waitFor(() => c.drops.count("imessage", "duplicate") === 1, "the replay counted");
    expect(c.drops.count("imessage", "unparseable")).toBe(1);
    expect(c.drops.count("imessage", "unknown_shape")).toBe(3);
    expect(folder.sent(OWNER)).toHaveLength(1);
    const warned = c.logger.entries.filter((e) => e.message.includes("shape parley does not know"));
    expect(warned.map((e) => e.fields.shape).sort()).toEqual(["array line", "notification noise"]);
  });

  it("a watch that imsg ends with an error notification is resubscribed from the cursor", async () => {
    const folder = lab.folder();
    const c = await lab.channel({ turns: answers(2) });
    await folder.incoming(OWNER, "before");
    await waitFor(() => folder.sent(OWNER).length === 1, "the first answer");
    await caughtUp(c, folder);
    const cursor = c.running.feed.cursor;
    expect(cursor).toBeDefined();
    await folder.command({ op: "watchError", message: "database is locked" });
    await waitFor(
      () => folder.requests().some((r) => r.method === "watch.subscribe" && r.params?.since_rowid === cursor),
      "the resubscription at the cursor",
    );
    await waitFor(
      () =>
        folder.requests().filter((r) => r.method === "watch.subscribe" && r.answered !== undefined).length >=
        2,
      "resubscribed",
    );
    await folder.incoming(OWNER, "after");
    await waitFor(() => folder.sent(OWNER).length === 2, "the answer after the error");
    expect(c.logger.entries.some((e) => e.message.includes("database is locked"))).toBe(true);
  });

  it("a dead imsg is restarted with backoff and the watch resumes from the cursor: nothing is lost", async () => {
    const folder = lab.folder();
    const c = await lab.channel({ turns: answers(3) });
    await folder.incoming(OWNER, "before");
    await waitFor(() => folder.sent(OWNER).length === 1, "the first answer");
    await caughtUp(c, folder);
    await folder.command({ op: "die" });
    await waitFor(() => !folder.running(), "the fake gone");
    const cursor = c.running.feed.cursor;
    folder.appendRow(OWNER, "while you were out");
    await waitFor(() => folder.starts() === 2, "the restart");
    await waitFor(() => folder.sent(OWNER).length === 2, "the missed message answered");
    const resubscribe = folder
      .requests()
      .filter((r) => r.method === "watch.subscribe" && r.answered === undefined);
    expect(resubscribe.map((r) => r.params.since_rowid)).toEqual([undefined, cursor]);
    expect(promptsOf(c)).toEqual(["before", "while you were out"]);
  });
});
