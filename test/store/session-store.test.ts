import Database from "better-sqlite3";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ChannelLink } from "../../src/messaging/session/keys.js";
import { buildDmSessionKey } from "../../src/messaging/session/keys.js";
import type { SessionStore } from "../../src/messaging/session/session-store.js";
import { MemorySessionStore, MirrorOwnershipError } from "../../src/messaging/session/session-store.js";
import { StoreCorruptError } from "../../src/messaging/store/errors.js";
import { storePath } from "../../src/store/index.js";
import { ManualClock } from "../helpers/manual-clock.js";
import { itOnSqliteFile, open, useTempHome } from "./helpers.js";

const home = useTempHome();

const alice = buildDmSessionKey("telegram", "agent", "111");
const aliceGen1 = buildDmSessionKey("telegram", "agent", "111", { gen: 1 });
const bob = buildDmSessionKey("discord", "agent", "222");
const here: ChannelLink = { channelType: "webchat", conversationId: "tab-1", threadId: "t" };

/** What another connection sees in the file right now (the store's own memory is not evidence). */
function titlesOnDisk(dir: string): Record<string, string | null> {
  const db = new Database(storePath(dir), { readonly: true });
  try {
    const rows = db.prepare("select session_key, title from session").all() as {
      session_key: string;
      title: string | null;
    }[];
    return Object.fromEntries(rows.map((r) => [r.session_key, r.title]));
  } finally {
    db.close();
  }
}

type Op = (s: SessionStore) => void;

const keys = fc.constantFrom(alice, aliceGen1, bob, "webchat:dash-1");
const links = fc.constantFrom<ChannelLink>(
  { channelType: "webchat", conversationId: "tab-1" },
  { channelType: "telegram", conversationId: "c9", threadId: "7" },
);
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.tuple(keys, links).map(
    ([k, l]): Op =>
      (s) =>
        s.setOriginLink(k, l),
  ),
  fc.tuple(keys, links).map(
    ([k, l]): Op =>
      (s) => {
        try {
          s.setMirrorLink(k, l);
        } catch (error) {
          if (!(error instanceof MirrorOwnershipError)) throw error;
        }
      },
  ),
  keys.map(
    (k): Op =>
      (s) =>
        s.clearMirrorLink(k),
  ),
  links.map(
    (l): Op =>
      (s) =>
        s.clearMirrorLinksAt(l),
  ),
  fc.tuple(keys, fc.boolean()).map(
    ([k, b]): Op =>
      (s) =>
        s.setMirrorOptOut(k, b),
  ),
  fc.tuple(keys, fc.constantFrom("origin", "mirror" as const), fc.boolean()).map(
    ([k, leg, b]): Op =>
      (s) =>
        s.setMuted(k, leg, b),
  ),
  fc.tuple(keys, fc.nat(5)).map(
    ([k, g]): Op =>
      (s) =>
        s.setGeneration(k, g),
  ),
  fc.tuple(keys, fc.string({ minLength: 1, maxLength: 8 }), fc.constantFrom("auto", "manual" as const)).map(
    ([k, t, kind]): Op =>
      (s) => {
        if (t.trim() !== "") s.setTitle(k, t, kind);
      },
  ),
  fc.tuple(keys, fc.option(fc.constantFrom("/srv/a", "/srv/b"), { nil: undefined })).map(
    ([k, cwd]): Op =>
      (s) =>
        s.setCwd(k, cwd),
  ),
  fc.tuple(keys, fc.constantFrom("", "auto", "ask")).map(
    ([k, p]): Op =>
      (s) =>
        s.setApprovalPolicy(k, p),
  ),
  fc.tuple(keys, fc.constantFrom("private", "quiet"), fc.boolean()).map(
    ([k, f, b]): Op =>
      (s) =>
        s.setFlag(k, f, b),
  ),
  fc.tuple(keys, fc.integer({ min: 0, max: 2 ** 40 })).map(
    ([k, ms]): Op =>
      (s) =>
        s.touch(k, ms),
  ),
  keys.map(
    (k): Op =>
      (s) =>
        s.deleteSession(k),
  ),
);

function snapshot(s: SessionStore) {
  return Object.fromEntries(
    s
      .keys()
      .sort()
      .map((k) => [k, s.get(k)]),
  );
}

describe("SQL session store", () => {
  it("every mutation survives close and reopen exactly as the in-memory model holds it", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 30 }), fc.nat(3), async (ops, flushEvery) => {
        const dir = `${home.dir}/p-${Math.random().toString(36).slice(2)}`;
        const model = new MemorySessionStore();
        const store = await open(dir);
        for (const [i, apply] of ops.entries()) {
          apply(model);
          apply(store.sessions);
          if (flushEvery > 0 && i % flushEvery === 0) await store.sessions.flush();
        }
        await store.close();
        const reopened = await open(dir);
        expect(snapshot(reopened.sessions)).toEqual(snapshot(model));
        await reopened.close();
      }),
      { numRuns: 30 },
    );
  });

  it("a sibling generation taking the mirror location over is persisted on both rows", async () => {
    const store = await open(home.dir);
    store.sessions.setMirrorLink(alice, here);
    await store.sessions.flush();
    store.sessions.setMirrorLink(aliceGen1, here);
    await store.close();
    const reopened = await open(home.dir);
    expect(reopened.sessions.getMirrorLink(alice)).toBeNull();
    expect(reopened.sessions.getMirrorLink(aliceGen1)).toEqual(here);
    await reopened.close();
  });

  itOnSqliteFile(
    "coalesces unbatched changes until the timer fires; a batch writes at once on exit, even when it throws",
    async () => {
      const clock = new ManualClock();
      const store = await open(home.dir, { timers: clock });
      store.sessions.setTitle(alice, "one", "manual");
      store.sessions.setTitle(bob, "two", "manual");
      expect(titlesOnDisk(home.dir)).toEqual({});
      await clock.advance(0);
      await store.sessions.flush();
      expect(titlesOnDisk(home.dir)).toEqual({ [alice]: "one", [bob]: "two" });

      await expect(
        store.sessions.batch(async () => {
          store.sessions.setTitle(alice, "renamed", "manual");
          throw new Error("refused after the rename");
        }),
      ).rejects.toThrow("refused after the rename");
      expect(titlesOnDisk(home.dir)[alice]).toBe("renamed");
      await store.close();
    },
  );

  itOnSqliteFile(
    "a row that does not decode refuses the open with the path and a repair hint, and is left as it is",
    async () => {
      const store = await open(home.dir);
      store.sessions.setTitle(alice, "kept", "manual");
      await store.close();
      const raw = new Database(storePath(home.dir));
      raw.prepare("update session set flags = ? where session_key = ?").run("{not json", alice);
      raw.close();
      const error = await open(home.dir).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreCorruptError);
      expect((error as Error).message).toContain(storePath(home.dir));
      expect((error as Error).message).toContain("flags are not JSON");
      expect((error as Error).message).toMatch(/Nothing was reset.*\.recover/);
      const check = new Database(storePath(home.dir), { readonly: true });
      expect(check.prepare("select flags from session").get()).toEqual({ flags: "{not json" });
      check.close();
    },
  );

  it("refuses a write after close", async () => {
    const store = await open(home.dir);
    await store.close();
    expect(() => store.sessions.setTitle(alice, "late", "manual")).toThrow(/closed/);
  });
});
