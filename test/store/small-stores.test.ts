import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import type { AuditRecord } from "../../src/messaging/security/audit.js";
import { StoreAuditSink } from "../../src/messaging/store/audit-sink.js";
import type { AuditStore } from "../../src/messaging/store/port.js";
import { applyRetention, DEFAULT_RETENTION } from "../../src/messaging/store/retention.js";
import { storePath } from "../../src/store/index.js";
import { SqliteEngine } from "../../src/store/sqlite/engine.js";
import { itOnSqliteFile, open, useTempHome } from "./helpers.js";

const home = useTempHome();
const DAY = 86_400_000;

describe("cursors", () => {
  it("advance only: an older value never regresses the stored one, across a restart", async () => {
    const store = await open(home.dir);
    expect(await store.cursors.get("telegram.getUpdates")).toBeUndefined();
    expect(await store.cursors.advance("telegram.getUpdates", 10)).toBe(10);
    expect(await store.cursors.advance("telegram.getUpdates", 7)).toBe(10);
    const raced = await Promise.all(
      [12, 11, 15, 14].map((v) => store.cursors.advance("telegram.getUpdates", v)),
    );
    expect(Math.max(...raced)).toBe(15);
    await store.close();
    const reopened = await open(home.dir);
    expect(await reopened.cursors.get("telegram.getUpdates")).toBe(15);
    await expect(reopened.cursors.advance("x", -1)).rejects.toThrow(RangeError);
    await reopened.close();
  });

  itOnSqliteFile(
    "a durable write runs with synchronous=FULL and leaves the connection at NORMAL after",
    async () => {
      const engine = await SqliteEngine.open(storePath(home.dir));
      const level = async (db = engine.db) =>
        (await sql<{ synchronous: number }>`pragma synchronous`.execute(db)).rows[0]?.synchronous;
      expect(await level()).toBe(1);
      expect(await engine.durably((db) => level(db))).toBe(2);
      expect(await level()).toBe(1);
      await expect(engine.durably(async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
      expect(await level()).toBe(1);
      await engine.close();
    },
  );
});

describe("channel routes", () => {
  it("a conversation's route is kept per channel, replaced in place, listed newest first, forgotten on demand", async () => {
    let t = 1_000;
    const store = await open(home.dir, { now: () => t });
    expect(await store.routes.get("teams", "a:1")).toBeUndefined();
    await store.routes.put({
      channel: "teams",
      conversation: "a:1",
      address: { serviceUrl: "https://x/" },
      owner: "ann@x.example",
    });
    t = 2_000;
    await store.routes.put({
      channel: "teams",
      conversation: "a:2",
      address: { serviceUrl: "https://y/" },
      owner: "bob@x.example",
    });
    await store.routes.put({ channel: "other", conversation: "a:1", address: null, owner: "zed" });
    t = 3_000;
    await store.routes.put({
      channel: "teams",
      conversation: "a:1",
      address: { serviceUrl: "https://z/" },
      owner: "ann@x.example",
    });
    await store.close();
    const reopened = await open(home.dir);
    expect(await reopened.routes.get("teams", "a:1")).toEqual({
      channel: "teams",
      conversation: "a:1",
      address: { serviceUrl: "https://z/" },
      owner: "ann@x.example",
      updatedAtMs: 3_000,
    });
    expect((await reopened.routes.list("teams")).map((r) => r.conversation)).toEqual(["a:1", "a:2"]);
    expect(await reopened.routes.forget("teams", "a:1")).toBe(true);
    expect(await reopened.routes.forget("teams", "a:1")).toBe(false);
    expect((await reopened.routes.list("teams")).map((r) => r.conversation)).toEqual(["a:2"]);
    expect(await reopened.routes.get("other", "a:1")).toMatchObject({ owner: "zed", address: null });
    await reopened.close();
  });
});

describe("agent sessions", () => {
  it("remembers which agent session a parley session was bound to, per agent", async () => {
    const store = await open(home.dir);
    await store.agentSessions.set("webchat:a", { agent: "claude-code", agentSessionId: "sess-1" });
    await store.agentSessions.set("webchat:a", { agent: "claude-code", agentSessionId: "sess-2" });
    await store.close();
    const reopened = await open(home.dir);
    expect(await reopened.agentSessions.get("webchat:a")).toEqual({
      agent: "claude-code",
      agentSessionId: "sess-2",
    });
    expect(await reopened.agentSessions.clear("webchat:a")).toBe(true);
    expect(await reopened.agentSessions.clear("webchat:a")).toBe(false);
    expect(await reopened.agentSessions.get("webchat:a")).toBeUndefined();
    await reopened.close();
  });
});

describe("audit rows", () => {
  it("the sink writes one batch per tick, in order, and flush() waits for it", async () => {
    const store = await open(home.dir);
    const appended: number[] = [];
    const counting: Pick<AuditStore, "append"> = {
      append: (records) => {
        appended.push(records.length);
        return store.audit.append(records);
      },
    };
    const sink = new StoreAuditSink(
      counting,
      (e) => {
        throw e;
      },
      () => new Date("2026-01-02T03:04:05Z"),
    );
    sink.log("approval", "denied", { tool: "shell", secretish: "x".repeat(300) });
    sink.log("inbound", "dropped", { reason: "stranger" });
    await sink.flush();
    sink.log("yolo", "granted");
    await sink.flush();
    expect(appended).toEqual([2, 1]);
    const rows = await store.audit.recent(10);
    expect(rows.map((r) => [r.operation, r.outcome])).toEqual([
      ["approval", "denied"],
      ["inbound", "dropped"],
      ["yolo", "granted"],
    ]);
    expect(rows[0]?.ts).toBe("2026-01-02T03:04:05.000Z");
    expect(String(rows[0]?.fields.secretish).length).toBeLessThan(300);
    await store.close();
  });

  it("a failed write is reported, not swallowed, and later records still go through", async () => {
    const errors: unknown[] = [];
    let fail = true;
    const written: AuditRecord[] = [];
    const sink = new StoreAuditSink(
      {
        append: async (records) => {
          if (fail) throw new Error("disk full");
          written.push(...records);
        },
      },
      (e) => errors.push(e),
    );
    sink.log("a", "denied");
    await sink.flush();
    fail = false;
    sink.log("b", "allowed");
    await sink.flush();
    expect(errors.map(String)).toEqual(["Error: disk full"]);
    expect(written.map((r) => r.operation)).toEqual(["b"]);
  });
});

describe("inbound drop counts", () => {
  it("counts add up per channel and reason, keep the later time, and survive a restart", async () => {
    const store = await open(home.dir);
    expect(await store.inboundDrops.totals()).toEqual([]);
    await store.inboundDrops.add([
      { channel: "webex", reason: "missing_id", count: 2, lastAtMs: 100 },
      { channel: "telegram", reason: "stranger", count: 5, lastAtMs: 50 },
    ]);
    await store.inboundDrops.add([{ channel: "webex", reason: "missing_id", count: 3, lastAtMs: 300 }]);
    await store.close();
    const reopened = await open(home.dir);
    expect(await reopened.inboundDrops.totals()).toEqual([
      { channel: "telegram", reason: "stranger", count: 5, lastAtMs: 50 },
      { channel: "webex", reason: "missing_id", count: 5, lastAtMs: 300 },
    ]);
    await reopened.close();
  });
});

describe("retention", () => {
  it("prunes each kind past its window and leaves unfinished work alone", async () => {
    let now = 0;
    const store = await open(home.dir, { now: () => now });
    const old = await store.intake.accept({
      channel: "t",
      platformMessageId: "1",
      conversationKey: "c",
      payload: 1,
      receivedAtMs: 0,
    });
    const pending = await store.intake.accept({
      channel: "t",
      platformMessageId: "2",
      conversationKey: "c",
      payload: 2,
      receivedAtMs: 0,
    });
    if (old.kind !== "accepted" || pending.kind !== "accepted") throw new Error("not accepted");
    await store.intake.complete(old.id, "answered");
    await store.deliveries.markLanded({ turnId: "intake:1", partIndex: 0 }, "m", "d");
    await store.transcripts.append({ sessionKey: "s", atMs: 0, entry: { kind: "agent", text: "old" } });
    await store.transcripts.append({
      sessionKey: "s",
      atMs: 29 * DAY,
      entry: { kind: "agent", text: "recent" },
    });
    const inboxEntry = {
      conversationKey: "t:c",
      channel: "t",
      address: "c",
      direction: "in" as const,
      userId: "u",
      attachments: [],
      platformMessageId: null,
      turnId: null,
    };
    await store.inbox.add({ ...inboxEntry, text: "old words", atMs: 0 });
    await store.inbox.add({ ...inboxEntry, text: "recent words", atMs: 29 * DAY });

    now = 31 * DAY;
    expect(await applyRetention(store, DEFAULT_RETENTION, now)).toEqual({
      intake: 1,
      deliveries: 1,
      transcripts: 1,
      inbox: 1,
    });
    expect((await store.inbox.recent("t:c", 5)).map((e) => e.text)).toEqual(["recent words"]);
    expect(await store.intake.countUnfinished()).toBe(1);
    expect((await store.transcripts.recent("s", 5)).map((l) => l.entry)).toEqual([
      { kind: "agent", text: "recent" },
    ]);
    expect(
      await applyRetention(store, { ...DEFAULT_RETENTION, transcriptsRetainDays: null }, 400 * DAY),
    ).toMatchObject({ transcripts: 0 });
    await expect(applyRetention(store, { ...DEFAULT_RETENTION, intakeRetainDays: -1 }, now)).rejects.toThrow(
      RangeError,
    );
    await store.close();
  });
});
