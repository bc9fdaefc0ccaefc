import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { contentDigest } from "../../src/messaging/store/digest.js";
import { storePath } from "../../src/store/index.js";
import { itOnSqliteFile, open, useTempHome } from "./helpers.js";

const home = useTempHome();

describe("delivery ledger", () => {
  it("records intent, then what landed; an edit keeps the landed id while it is in flight", async () => {
    let now = 100;
    const store = await open(home.dir, { now: () => now });
    const turn = "intake:7";
    await store.deliveries.markSending({ turnId: turn, partIndex: 0 }, contentDigest("Hello"));
    expect(await store.deliveries.parts(turn)).toEqual([
      {
        turnId: turn,
        partIndex: 0,
        state: "sending",
        platformMessageId: null,
        textDigest: contentDigest("Hello"),
        updatedAtMs: 100,
      },
    ]);
    now = 200;
    await store.deliveries.markLanded({ turnId: turn, partIndex: 0 }, "m-1", contentDigest("Hello"));
    await store.deliveries.markSending({ turnId: turn, partIndex: 1 }, contentDigest("World"));
    // A crash here: part 0 landed as m-1; part 1 may or may not exist (no id recorded).
    await store.deliveries.markSending({ turnId: turn, partIndex: 0 }, contentDigest("Hello, edited"));
    await store.close();

    const reopened = await open(home.dir);
    const parts = await reopened.deliveries.parts(turn);
    expect(parts.map((p) => [p.partIndex, p.state, p.platformMessageId, p.textDigest])).toEqual([
      [0, "sending", "m-1", contentDigest("Hello, edited")],
      [1, "sending", null, contentDigest("World")],
    ]);
    expect(await reopened.deliveries.parts("intake:8")).toEqual([]);
    await reopened.close();
  });

  it("prunes landed parts past the cutoff but keeps a part whose outcome is unknown", async () => {
    const now = 1_000;
    const store = await open(home.dir, { now: () => now });
    await store.deliveries.markLanded({ turnId: "t", partIndex: 0 }, "m-1", "d");
    await store.deliveries.markSending({ turnId: "t", partIndex: 1 }, "d");
    expect(await store.deliveries.prune(2_000)).toBe(1);
    expect((await store.deliveries.parts("t")).map((p) => p.partIndex)).toEqual([1]);
    await expect(store.deliveries.markLanded({ turnId: "t", partIndex: -1 }, "m", "d")).rejects.toThrow(
      /part index/,
    );
    await store.close();
  });
});

describe("transcripts", () => {
  it("keeps every kind of line and returns the last n oldest first, optionally by kind", async () => {
    const store = await open(home.dir);
    const key = "webchat:tab-1";
    await store.transcripts.append({
      sessionKey: key,
      atMs: 1,
      entry: { kind: "user", text: "hi", attachments: ["a.png"] },
    });
    await store.transcripts.append({
      sessionKey: key,
      atMs: 2,
      entry: { kind: "tool", title: "Read file", status: "completed" },
    });
    await store.transcripts.append({
      sessionKey: key,
      atMs: 3,
      entry: { kind: "approval", title: "Run tests", outcome: "approved" },
    });
    await store.transcripts.append({
      sessionKey: key,
      atMs: 4,
      turnId: "intake:1",
      entry: { kind: "agent", text: "done" },
    });
    await store.transcripts.append({
      sessionKey: "webchat:other",
      atMs: 5,
      entry: { kind: "agent", text: "elsewhere" },
    });

    expect((await store.transcripts.recent(key, 10)).map((l) => l.entry)).toEqual([
      { kind: "user", text: "hi", attachments: ["a.png"] },
      { kind: "tool", title: "Read file", status: "completed" },
      { kind: "approval", title: "Run tests", outcome: "approved" },
      { kind: "agent", text: "done" },
    ]);
    expect((await store.transcripts.recent(key, 2)).map((l) => l.atMs)).toEqual([3, 4]);
    const replay = await store.transcripts.recent(key, 5, ["user", "agent"]);
    expect(replay.map((l) => [l.entry.kind, l.turnId])).toEqual([
      ["user", null],
      ["agent", "intake:1"],
    ]);
    await expect(store.transcripts.recent(key, 0)).rejects.toThrow(RangeError);
    await store.close();
  });

  it("an entry key makes an append idempotent, so a resumed turn never doubles a line", async () => {
    const store = await open(home.dir);
    const line = {
      sessionKey: "s",
      atMs: 1,
      entryKey: "intake:1:user",
      entry: { kind: "agent" as const, text: "x" },
    };
    expect(await store.transcripts.append(line)).toBe(true);
    expect(await store.transcripts.append(line)).toBe(false);
    expect(await store.transcripts.recent("s", 10)).toHaveLength(1);
    await store.close();
  });

  it("purges one session, lines older than a cutoff, or everything", async () => {
    const store = await open(home.dir);
    for (const [key, at] of [
      ["a", 1],
      ["a", 5],
      ["b", 2],
      ["c", 9],
    ] as const) {
      await store.transcripts.append({
        sessionKey: key,
        atMs: at,
        entry: { kind: "agent", text: `${key}${at}` },
      });
    }
    expect(await store.transcripts.purge({ scope: "session", sessionKey: "b" })).toBe(1);
    expect(await store.transcripts.purge({ scope: "before", beforeMs: 5 })).toBe(1);
    expect((await store.transcripts.recent("a", 10)).map((l) => l.atMs)).toEqual([5]);
    expect(await store.transcripts.purge({ scope: "all" })).toBe(2);
    expect(await store.transcripts.recent("c", 10)).toEqual([]);
    await store.close();
  });

  itOnSqliteFile("purged text is gone from the database file and its WAL, not just unlinked", async () => {
    const store = await open(home.dir);
    const secret = "purge-me-7f3a9c-the-users-private-words";
    const kept = "kept-b81d20-still-here";
    await store.transcripts.append({
      sessionKey: "s",
      atMs: 1,
      entry: { kind: "user", text: secret, attachments: [] },
    });
    await store.transcripts.append({
      sessionKey: "t",
      atMs: 1,
      entry: { kind: "user", text: kept, attachments: [] },
    });
    await store.sessions.flush();
    expect(await store.transcripts.purge({ scope: "session", sessionKey: "s" })).toBe(1);
    const bytes = async (path: string) => readFile(path).catch(() => Buffer.alloc(0));
    const path = storePath(home.dir);
    // While the store is open (what a copy taken right now would hold) and after it closed.
    for (const phase of ["open", "closed"]) {
      if (phase === "closed") await store.close();
      const all = Buffer.concat([await bytes(path), await bytes(`${path}-wal`)]);
      expect(all.includes(Buffer.from(secret)), phase).toBe(false);
      if (phase === "open") expect(all.includes(Buffer.from(kept)), "the check can see text").toBe(true);
    }
  });
});
