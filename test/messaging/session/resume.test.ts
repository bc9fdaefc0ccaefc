import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PICK_REFUSAL_TEXT } from "../../../src/messaging/channel/picker.js";
import { MemoryAuditSink } from "../../../src/messaging/security/audit.js";
import { REDACTION_MARKER } from "../../../src/messaging/security/index.js";
import type { ChannelLink } from "../../../src/messaging/session/keys.js";
import type { RoutingDecision, SessionChoice } from "../../../src/messaging/session/resume.js";
import { displayTitle, offerableSessions, SessionBinder } from "../../../src/messaging/session/resume.js";
import type {
  ExpectationWrite,
  ResumeExpectations,
} from "../../../src/messaging/session/resume-expectations.js";
import type { SessionRow } from "../../../src/messaging/session/session-store.js";
import { emptyRow, MemorySessionStore } from "../../../src/messaging/session/session-store.js";
import type { ParleyStore } from "../../../src/messaging/store/port.js";
import { openStore } from "../../../src/store/index.js";

/**
 * The store's Discord resume records, with the faults a disk can cause: `fault(n)` is asked before
 * the n-th write (1-based) and may fail it (the store then reports a write that did not land and
 * publishes nothing), or observe the moment just before it.
 */
class FaultyRecords implements ResumeExpectations {
  writes = 0;
  fault: (n: number) => boolean = () => false;
  constructor(private readonly inner: ResumeExpectations) {}
  get channel() {
    return this.inner.channel;
  }
  status() {
    return this.inner.status();
  }
  ready() {
    return this.inner.ready();
  }
  get(conversation: string) {
    return this.inner.get(conversation);
  }
  entries() {
    return this.inner.entries();
  }
  repairHint() {
    return this.inner.repairHint();
  }
  private async write(op: () => Promise<ExpectationWrite>): Promise<ExpectationWrite> {
    this.writes += 1;
    if (this.fault(this.writes)) return { ok: false, reason: "write_failed", problem: "EIO: simulated" };
    return op();
  }
  record(conversation: string, target: { key: string; title: string }) {
    return this.write(() => this.inner.record(conversation, target));
  }
  retire(conversation: string, expectedVersion: number) {
    return this.write(() => this.inner.retire(conversation, expectedVersion));
  }
  adopt(conversation: string, expectedVersion: number, target: { key: string; title: string }) {
    return this.write(() => this.inner.adopt(conversation, expectedVersion, target));
  }
}

const L: ChannelLink = { channelType: "discord", conversationId: "dm1" };
const L2: ChannelLink = { channelType: "discord", conversationId: "dm2" };
const NATIVE = "discord:default:direct:u1";
const W1 = "webchat:default:direct:aaa111";
const W2 = "webchat:default:direct:bbb222";
const W3 = "webchat:default:direct:ccc333";
const TG = "telegram:default:direct:42";
const COPY = { sessions: "`!sessions`", new: "`!new`", unlink: "`!unlink`" };
const AWS_KEY = "AKIAIOSFODNN7EXAMPLE";

function row(key: string, extra: Partial<SessionRow> = {}): SessionRow {
  return { ...emptyRow(key), ...extra };
}

function baseRows(): SessionRow[] {
  return [
    row(W1, { title: "Plan the trip", titleKind: "manual", lastActiveMs: 200 }),
    row(W2, { lastActiveMs: 300 }),
    row(W3, { title: `deploy with ${AWS_KEY}`, titleKind: "auto", lastActiveMs: 100 }),
    row(TG, { title: "someone's telegram DM", lastActiveMs: 999 }),
    // The chat's own session mirrors its own location every turn: never a resume owner.
    row(NATIVE, { mirrorLink: { ...L }, originLink: { ...L }, lastActiveMs: 50 }),
  ];
}

/** A store whose commit can be made to fail, like a FileSessionStore on a full disk. */
class FlakyStore extends MemorySessionStore {
  failCommits = false;
  protected override async commit(): Promise<void> {
    if (this.failCommits) throw new Error("ENOSPC: simulated");
  }
}

/** Rows with the native self-mirror removed, so W1 can be bound at L by a plain setMirrorLink. */
function rowsWithoutNativeMirror(): SessionRow[] {
  return baseRows().map((r) => (r.sessionKey === NATIVE ? row(NATIVE) : r));
}

/** A store whose binding at L flips on every read of keys(): a resolution that keeps changing. */
class FlappingStore extends MemorySessionStore {
  flips = Number.POSITIVE_INFINITY;
  keysCalls = 0;
  override keys(): string[] {
    const keys = super.keys();
    this.keysCalls += 1;
    if (this.flips > 0) {
      this.flips -= 1;
      if (this.getMirrorLink(W1)) this.clearMirrorLink(W1);
      else this.setMirrorLink(W1, L);
    }
    return keys;
  }
}

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Let pending promise chains (mutex hand-offs, fs callbacks) run. No timers involved. */
async function settleIo(): Promise<void> {
  for (let i = 0; i < 50; i += 1) await new Promise<void>((r) => setImmediate(r));
}

let home: string;
let file: string;
let store: FlakyStore;
let audit: MemoryAuditSink;
let expectations: FaultyRecords;
let failExpectationWrites: boolean;
let binder: SessionBinder;
let parley: ParleyStore;

function makeBinder(s: MemorySessionStore = store, exp: ResumeExpectations = expectations): SessionBinder {
  return new SessionBinder({ channel: "discord", store: s, expectations: exp, copy: COPY, audit });
}

/** (Re)open the real store in `home` (an older install's trust file there is imported, or refused). */
async function openRecords(): Promise<void> {
  await parley?.close();
  parley = await openStore(home);
  expectations = new FaultyRecords(parley.resume.forChannel("discord"));
  expectations.fault = () => failExpectationWrites;
  binder = makeBinder();
}

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "parley-resume-"));
  file = join(home, "trust", "discord_resume_expectations.json");
  store = new FlakyStore({ rows: baseRows() });
  audit = new MemoryAuditSink();
  failExpectationWrites = false;
  await openRecords();
});
afterEach(async () => {
  await parley.close();
  await rm(home, { recursive: true, force: true });
});

const delivered = async () => true;
const undelivered = async () => false;

function choice(key: string, title = "t"): SessionChoice {
  return { key, title, lastActiveMs: 0 };
}

function refusals(reason?: string) {
  return audit
    .find("session_resume.route", "refused")
    .filter((r) => reason === undefined || r.fields.reason === reason);
}

function settlements(outcome?: "allowed" | "refused" | "failed") {
  return audit.find("session_resume.settle", outcome);
}

function expectRefuse(d: RoutingDecision, reason: string): Extract<RoutingDecision, { kind: "refuse" }> {
  expect(d.kind).toBe("refuse");
  if (d.kind !== "refuse") throw new Error("unreachable");
  expect(d.reason).toBe(reason);
  return d;
}

// ── eligibility ───────────────────────────────────────────────────────────────────────────────

describe("offerableSessions", () => {
  it("offers only the dashboard namespace, most recent first, titles display-safe", () => {
    const choices = offerableSessions(store, { namespaces: ["webchat"], limit: 10 });
    expect(choices.map((c) => c.key)).toEqual([W2, W1, W3]);
    expect(choices[0]).toEqual({ key: W2, title: "Untitled chat (…bbb222)", lastActiveMs: 300 });
    expect(choices[1]?.title).toBe("Plan the trip");
    expect(choices[2]?.title).not.toContain(AWS_KEY);
    expect(choices[2]?.title).toContain(REDACTION_MARKER);
  });

  it("honours limit and exclude", () => {
    expect(offerableSessions(store, { limit: 1 }).map((c) => c.key)).toEqual([W2]);
    expect(offerableSessions(store, { exclude: [W2] }).map((c) => c.key)).toEqual([W1, W3]);
  });

  it("a title is one clipped line", () => {
    const long = `line one\nline two ${"x".repeat(200)}`;
    const shown = displayTitle(long, W1);
    expect(shown).not.toContain("\n");
    expect([...shown].length).toBeLessThanOrEqual(80);
    expect(shown.endsWith("…")).toBe(true);
    expect(displayTitle("   ", W1)).toBe("Untitled chat (…aaa111)");
  });
});

// ── the four states that run ──────────────────────────────────────────────────────────────────

describe("SessionBinder.route: states that run", () => {
  it("no owner / no record → the chat's own session (its self-mirror is not an owner)", async () => {
    expect(await binder.route(L, NATIVE)).toEqual({ kind: "route", sessionKey: NATIVE, resumed: false });
  });

  it("no owner / retired record → native", async () => {
    await expectations.record("dm1", { key: W1, title: "Plan the trip" });
    await expectations.retire("dm1", 1);
    expect(await binder.route(L, NATIVE)).toEqual({ kind: "route", sessionKey: NATIVE, resumed: false });
  });

  it("one owner / no record (bootstrap: a binding made elsewhere) → the owner", async () => {
    store.clearMirrorLink(NATIVE);
    store.setMirrorLink(W1, L);
    expect(await binder.route(L, NATIVE)).toEqual({ kind: "route", sessionKey: W1, resumed: true });
  });

  it("one owner matching the active record → the owner", async () => {
    expect((await binder.pick(L, choice(W1, "Plan the trip"), "u1")).ok).toBe(true);
    expect(await binder.route(L, NATIVE)).toEqual({ kind: "route", sessionKey: W1, resumed: true });
    // Another chat is unaffected.
    expect(await binder.route(L2, "discord:default:direct:u2")).toMatchObject({ resumed: false });
    expect(refusals()).toHaveLength(0);
  });
});

// ── the four states that refuse ───────────────────────────────────────────────────────────────

describe("SessionBinder.route: states that refuse", () => {
  it("active record without owner (a binding destroyed behind our back) → lost-link notice, then native", async () => {
    await binder.pick(L, choice(W1, "Plan the trip"), "u1");
    store.clearMirrorLink(W1); // a recycle / prune / dashboard unlink
    const notices: string[] = [];
    const d = await binder.routeAndDeliver(L, NATIVE, async (n) => {
      notices.push(n);
      return true;
    });
    const r = expectRefuse(d, "lost_link");
    expect(r.settle).toEqual({ kind: "retire", conversation: "dm1", version: 1 });
    expect(notices).toEqual([r.notice]);
    expect(r.notice).toContain("“Plan the trip”");
    expect(r.notice).toContain("NOT sent");
    expect(r.notice).toContain("`!sessions`");
    expect(expectations.get("dm1")).toEqual({ key: W1, title: "Plan the trip", version: 2, retired: true });
    expect(await binder.routeAndDeliver(L, NATIVE, delivered)).toEqual({
      kind: "route",
      sessionKey: NATIVE,
      resumed: false,
    });
    expect(refusals("lost_link")).toHaveLength(1);
    expect(settlements("allowed")).toHaveLength(1);
  });

  it("in a shared room (sharedAudience) notices and releases describe the session, never name it", async () => {
    const shared = new SessionBinder({
      channel: "discord",
      store,
      expectations,
      copy: COPY,
      audit,
      sharedAudience: () => true,
    });
    await shared.pick(L, choice(W1, "Plan the trip"), "u1");
    store.clearMirrorLink(W1);
    store.setMirrorLink(W2, L);
    const moved = expectRefuse(await shared.routeAndDeliver(L, NATIVE, delivered), "owner_changed");
    expect(moved.notice).toContain(
      "was continuing a web chat session, but it is now attached to a different one.",
    );
    expect(moved.notice).not.toContain("“");
    const released = await shared.release(L);
    expect(released).toMatchObject({ ok: true, detached: true });
    expect(released.text).toMatch(/^✅ Detached from a web chat session\./);
    await shared.pick(L, choice(W1, "Plan the trip"), "u1");
    store.clearMirrorLink(W1);
    const lost = expectRefuse(await shared.routeAndDeliver(L, NATIVE, delivered), "lost_link");
    expect(lost.notice).toMatch(/^⚠️ This chat was continuing a web chat session, but that link is gone/);
  });

  it("an owner different from the active record → announce, adopt after delivery", async () => {
    await binder.pick(L, choice(W1, "Plan the trip"), "u1");
    store.clearMirrorLink(W1);
    store.setMirrorLink(W2, L); // the binding moved elsewhere
    const d = await binder.routeAndDeliver(L, NATIVE, delivered);
    const r = expectRefuse(d, "owner_changed");
    expect(r.notice).toContain("“Plan the trip”");
    expect(r.notice).toContain("“Untitled chat (…bbb222)”");
    expect(r.settle).toMatchObject({ kind: "adopt", version: 1, key: W2 });
    expect(expectations.get("dm1")).toMatchObject({ key: W2, version: 2, retired: false });
    expect(await binder.route(L, NATIVE)).toEqual({ kind: "route", sessionKey: W2, resumed: true });
  });

  it("an owner beside a retired record → announce the new attachment, adopt after delivery", async () => {
    await binder.pick(L, choice(W1, "Plan the trip"), "u1");
    await binder.release(L);
    store.setMirrorLink(W2, L);
    const r = expectRefuse(await binder.routeAndDeliver(L, NATIVE, delivered), "owner_beside_retired");
    expect(r.notice).toContain("just attached");
    expect(r.notice).toContain("`!unlink`");
    expect(expectations.get("dm1")).toMatchObject({ key: W2, version: 3, retired: false });
    expect(await binder.route(L, NATIVE)).toMatchObject({ sessionKey: W2, resumed: true });
  });

  it("multiple owners → a notice naming the way out, and nothing settles", async () => {
    const s = new MemorySessionStore({
      rows: [
        ...baseRows().filter((r) => r.sessionKey !== W1 && r.sessionKey !== W2),
        row(W1, { mirrorLink: { ...L } }),
        row(W2, { mirrorLink: { ...L } }),
      ],
    });
    const b = makeBinder(s);
    const r = expectRefuse(await b.routeAndDeliver(L, NATIVE, delivered), "multiple_owners");
    expect(r.settle).toBeUndefined();
    expect(r.notice).toContain("2 sessions");
    expect(r.notice).toContain("`!unlink`");
    expect(r.notice).toContain("`!sessions`");
    expectRefuse(await b.routeAndDeliver(L, NATIVE, delivered), "multiple_owners");
    expect(settlements()).toHaveLength(0);
  });

  it("a resolution that keeps changing → retried a bounded number of times, then refused", async () => {
    const s = new FlappingStore({ rows: rowsWithoutNativeMirror() });
    const b = new SessionBinder({
      channel: "discord",
      store: s,
      expectations,
      copy: COPY,
      audit,
      maxResolveAttempts: 3,
    });
    const r = expectRefuse(await b.routeAndDeliver(L, NATIVE, delivered), "unstable");
    expect(r.settle).toBeUndefined();
    expect(r.notice).toContain("send it again");
    expect(s.keysCalls).toBe(6); // two reads per attempt, three attempts
    expect(refusals("unstable")).toHaveLength(1);
  });

  it("a resolution that changes once is re-read and then decided", async () => {
    const s = new FlappingStore({ rows: rowsWithoutNativeMirror() });
    s.flips = 1; // binds W1 on the first read, then holds still
    const b = makeBinder(s);
    expect(await b.route(L, NATIVE)).toEqual({ kind: "route", sessionKey: W1, resumed: true });
    expect(refusals()).toHaveLength(0);
  });
});

// ── settlement ────────────────────────────────────────────────────────────────────────────────

describe("SessionBinder.routeAndDeliver: settlement follows a confirmed delivery", () => {
  async function lostLink(): Promise<void> {
    await binder.pick(L, choice(W1, "Plan the trip"), "u1");
    store.clearMirrorLink(W1);
  }

  it("an undelivered notice settles nothing and is owed again", async () => {
    await lostLink();
    expectRefuse(await binder.routeAndDeliver(L, NATIVE, undelivered), "lost_link");
    expect(expectations.get("dm1")).toMatchObject({ version: 1, retired: false });
    expectRefuse(
      await binder.routeAndDeliver(L, NATIVE, async () => {
        throw new Error("403 from the platform");
      }),
      "lost_link",
    );
    expect(expectations.get("dm1")).toMatchObject({ version: 1, retired: false });
    expect(audit.find("session_resume.notice", "failed")).toHaveLength(2);
    expect(settlements()).toHaveLength(0);
    expectRefuse(await binder.routeAndDeliver(L, NATIVE, delivered), "lost_link");
    expect(expectations.get("dm1")).toMatchObject({ version: 2, retired: true });
  });

  it("route() alone never settles", async () => {
    await lostLink();
    expectRefuse(await binder.route(L, NATIVE), "lost_link");
    expectRefuse(await binder.route(L, NATIVE), "lost_link");
    expect(expectations.get("dm1")).toMatchObject({ version: 1, retired: false });
  });

  it("a newer pick made while the notice was in flight wins over the stale settlement", async () => {
    await lostLink();
    const d = await binder.routeAndDeliver(L, NATIVE, async () => {
      // The user picks another session before the notice's settlement runs.
      expect((await binder.pick(L, choice(W2, "Taxes"), "u1")).ok).toBe(true);
      return true;
    });
    expectRefuse(d, "lost_link");
    expect(expectations.get("dm1")).toEqual({ key: W2, title: "Taxes", version: 2, retired: false });
    expect(settlements("refused")[0]?.fields.reason).toBe("version_mismatch");
    expect(await binder.route(L, NATIVE)).toEqual({ kind: "route", sessionKey: W2, resumed: true });
  });

  it("a settlement that cannot be written is audited and owed again", async () => {
    await lostLink();
    failExpectationWrites = true;
    expectRefuse(await binder.routeAndDeliver(L, NATIVE, delivered), "lost_link");
    expect(settlements("failed")).toHaveLength(1);
    failExpectationWrites = false;
    expectRefuse(await binder.routeAndDeliver(L, NATIVE, delivered), "lost_link");
    expect(await binder.route(L, NATIVE)).toMatchObject({ sessionKey: NATIVE, resumed: false });
  });

  it("two concurrent messages: ordered notices, each refused, a single settlement", async () => {
    await lostLink();
    const sent: string[] = [];
    const first = deferred<boolean>();
    const second = deferred<boolean>();
    const p1 = binder.routeAndDeliver(L, NATIVE, (n) => {
      sent.push(`1:${n}`);
      return first.promise;
    });
    const p2 = binder.routeAndDeliver(L, NATIVE, (n) => {
      sent.push(`2:${n}`);
      return second.promise;
    });
    await settleIo();
    expect(sent).toHaveLength(1); // the second waits for the first's route + send + settlement
    first.resolve(true);
    await settleIo();
    expect(sent).toHaveLength(2);
    expect(sent[0]?.startsWith("1:")).toBe(true);
    expect(sent[1]?.startsWith("2:")).toBe(true);
    // The first delivered notice did NOT settle while a message was queued behind it.
    expect(expectations.get("dm1")).toMatchObject({ version: 1, retired: false });
    second.resolve(true);
    const [d1, d2] = await Promise.all([p1, p2]);
    expectRefuse(d1, "lost_link");
    expectRefuse(d2, "lost_link");
    expect(expectations.get("dm1")).toMatchObject({ version: 2, retired: true });
    expect(settlements("allowed")).toHaveLength(1);
    expect(settlements()).toHaveLength(1);
    expect(await binder.route(L, NATIVE)).toMatchObject({ sessionKey: NATIVE });
  });

  it("queued: an undelivered repeat of a delivered notice still settles once at the end", async () => {
    await lostLink();
    const first = deferred<boolean>();
    const p1 = binder.routeAndDeliver(L, NATIVE, () => first.promise);
    const p2 = binder.routeAndDeliver(L, NATIVE, undelivered);
    await settleIo();
    first.resolve(true);
    await Promise.all([p1, p2]);
    expect(expectations.get("dm1")).toMatchObject({ version: 2, retired: true });
    expect(settlements()).toHaveLength(1);
  });

  it("queued: nothing delivered, nothing settled", async () => {
    await lostLink();
    const first = deferred<boolean>();
    const p1 = binder.routeAndDeliver(L, NATIVE, () => first.promise);
    const p2 = binder.routeAndDeliver(L, NATIVE, undelivered);
    await settleIo();
    first.resolve(false);
    await Promise.all([p1, p2]);
    expect(expectations.get("dm1")).toMatchObject({ version: 1, retired: false });
    expect(settlements()).toHaveLength(0);
  });

  it("a decision is per conversation: another chat is not held behind a pending notice", async () => {
    await lostLink();
    const first = deferred<boolean>();
    const p1 = binder.routeAndDeliver(L, NATIVE, () => first.promise);
    await settleIo();
    const other = await binder.routeAndDeliver(L2, "discord:default:direct:u2", delivered);
    expect(other).toMatchObject({ kind: "route", resumed: false });
    first.resolve(true);
    await p1;
  });
});

// ── unreadable store ──────────────────────────────────────────────────────────────────────────

describe("an older install's unreadable expectation file refuses every conversation", () => {
  const corrupt: [string, string | Uint8Array][] = [
    ["bad JSON", "{not json"],
    ["non-integer version", JSON.stringify({ dm9: { key: W1, title: "t", version: 2.5, retired: false } })],
    ["non-boolean retired", JSON.stringify({ dm9: { key: W1, title: "t", version: 2, retired: 1 } })],
    ["non-UTF-8", new Uint8Array([0x7b, 0x7d, 0xc3, 0x28])],
  ];
  for (const [name, content] of corrupt) {
    it(`${name}: routes, picks and releases all refuse; the file is untouched`, async () => {
      await mkdir(join(home, "trust"), { recursive: true });
      await writeFile(file, content);
      const before = await readFile(file);
      await openRecords(); // the import cannot read it: it stays in place, and routing refuses
      for (const [loc, key] of [
        [L, NATIVE],
        [L2, "discord:default:direct:u2"],
        [{ channelType: "discord", conversationId: "g", threadId: "t1" }, "discord:default:thread:t1"],
      ] as const) {
        const r = expectRefuse(await binder.routeAndDeliver(loc, key, delivered), "store_unreadable");
        expect(r.settle).toBeUndefined();
        expect(r.notice).toContain("trust/discord_resume_expectations.json");
        expect(r.notice).toContain("stop the gateway");
        expect(r.notice).toContain("copy");
        expect(r.notice).toContain("Never truncate or delete it");
        expect(r.notice).toContain("{} is valid only when no conversation has resume history");
        expect(r.notice).not.toContain(home); // no absolute path in chat
      }
      const picked = await binder.pick(L, choice(W1), "u1");
      expect(picked.ok).toBe(false);
      expect(picked.text).toContain("stop the gateway");
      expect(store.getMirrorLink(W1)).toBeNull();
      const released = await binder.release(L);
      expect(released.ok).toBe(false);
      expect(store.getMirrorLink(NATIVE)).toEqual(L); // release changed nothing
      expect(await readFile(file)).toEqual(before);
      expect(await readdir(join(home, "trust"))).toEqual(["discord_resume_expectations.json"]);
      expect(refusals("store_unreadable")).toHaveLength(3);
    });
  }

  it("no records: routes run natively and nothing is recorded", async () => {
    expect(await binder.routeAndDeliver(L, NATIVE, delivered)).toMatchObject({ sessionKey: NATIVE });
    expect(expectations.entries()).toEqual([]);
    expect(expectations.writes).toBe(0);
  });
});

// ── pick ──────────────────────────────────────────────────────────────────────────────────────

describe("SessionBinder.pick", () => {
  it("records before binding, moves the binding off the native session, then routes resumed", async () => {
    let boundWhenRecorded: unknown = "not yet";
    const spying = expectations;
    spying.fault = () => {
      boundWhenRecorded = store.getMirrorLink(W1);
      return false;
    };
    const b = makeBinder(store, spying);
    const reply = await b.pick(L, choice(W1, "Plan the trip"), "u1");
    expect(reply.ok).toBe(true);
    expect(reply.text).toContain("“Plan the trip”");
    expect(reply.text).toContain("`!unlink`");
    expect(boundWhenRecorded).toBeNull(); // the record hit disk while nothing was bound yet
    expect(spying.get("dm1")).toEqual({ key: W1, title: "Plan the trip", version: 1, retired: false });
    expect(store.getMirrorLink(W1)).toEqual(L);
    expect(store.getMirrorLink(NATIVE)).toBeNull();
    expect(await b.route(L, NATIVE)).toEqual({ kind: "route", sessionKey: W1, resumed: true });
    expect(audit.find("session_resume.pick", "granted")).toHaveLength(1);
  });

  it("a title carrying a credential is stored and shown redacted", async () => {
    const reply = await binder.pick(L, choice(W3, `deploy with ${AWS_KEY}`), "u1");
    expect(reply.text).not.toContain(AWS_KEY);
    expect(expectations.get("dm1")?.title).not.toContain(AWS_KEY);
  });

  it("refuses a session outside the offered namespaces, and the chat's own namespace", async () => {
    expect((await binder.pick(L, choice(TG), "u1")).ok).toBe(false);
    expect((await binder.pick(L, choice("discord:default:direct:u9"), "u1")).ok).toBe(false);
    expect(audit.find("session_resume.pick", "refused").map((r) => r.fields.reason)).toEqual([
      "not_offerable",
      "not_offerable",
    ]);
    expect(expectations.writes).toBe(0);
  });

  it("refuses a session deleted since the list was posted", async () => {
    store.deleteSession(W1);
    const reply = await binder.pick(L, choice(W1), "u1");
    expect(reply).toMatchObject({ ok: false });
    expect(reply.text).toContain("no longer exists");
    expect(store.get(W1)).toBeUndefined(); // no ghost row
  });

  it("refuses while another session holds the chat, recording nothing", async () => {
    await binder.pick(L, choice(W1, "Plan the trip"), "u1");
    const reply = await binder.pick(L, choice(W2), "u1");
    expect(reply.ok).toBe(false);
    expect(reply.text).toContain("already continuing “Plan the trip”");
    expect(reply.text).toContain("`!unlink`");
    expect(expectations.get("dm1")).toMatchObject({ key: W1, version: 1 });
  });

  it("re-picking the session already attached is allowed", async () => {
    await binder.pick(L, choice(W1, "Plan the trip"), "u1");
    expect((await binder.pick(L, choice(W1, "Plan the trip"), "u1")).ok).toBe(true);
    expect(expectations.get("dm1")).toMatchObject({ key: W1, version: 2, retired: false });
  });

  it("a record that cannot be written binds nothing", async () => {
    failExpectationWrites = true;
    const reply = await binder.pick(L, choice(W1), "u1");
    expect(reply.ok).toBe(false);
    expect(reply.text).toContain("Nothing changed");
    expect(store.getMirrorLink(W1)).toBeNull();
    expect(store.getMirrorLink(NATIVE)).toEqual(L);
  });

  it("a binding that cannot be saved: reply says so, binding undone, record retired, next message native", async () => {
    store.failCommits = true;
    const reply = await binder.pick(L, choice(W1, "Plan the trip"), "u1");
    expect(reply.ok).toBe(false);
    expect(reply.text).toContain("could not be saved");
    expect(store.getMirrorLink(W1)).toBeNull();
    expect(expectations.get("dm1")).toMatchObject({ key: W1, version: 2, retired: true });
    store.failCommits = false;
    expect(await binder.route(L, NATIVE)).toMatchObject({ sessionKey: NATIVE, resumed: false });
    expect(audit.find("session_resume.pick", "failed")[0]?.fields.reason).toBe("bind_failed");
  });

  it("binding and retirement both failing leaves an active record: one lost-link notice, never a silent resume", async () => {
    store.failCommits = true;
    const exp = expectations;
    exp.fault = (n) => n > 1; // the record lands, the retirement does not
    const b = makeBinder(store, exp);
    const reply = await b.pick(L, choice(W1, "Plan the trip"), "u1");
    expect(reply.text).toContain("lost link");
    expect(exp.get("dm1")).toMatchObject({ version: 1, retired: false });
    store.failCommits = false;
    expectRefuse(await b.route(L, NATIVE), "lost_link");
  });

  it("offer + choose resolves an index against the posted list, once, for its owner only", async () => {
    const { handle, choices, text } = binder.offer(L, "u1");
    expect(choices.map((c) => c.key)).toEqual([W2, W1, W3]);
    expect(text).toContain("2. Plan the trip");
    const wrongOwner = await binder.choose(handle, 1, L, "intruder");
    expect(wrongOwner).toEqual({ ok: false, text: PICK_REFUSAL_TEXT.wrong_owner });
    const wrongPlace = await binder.choose(handle, 1, L2, "u1");
    expect(wrongPlace).toEqual({ ok: false, text: PICK_REFUSAL_TEXT.wrong_scope });
    expect((await binder.choose(handle, 1, L, "u1")).ok).toBe(true);
    expect(await binder.route(L, NATIVE)).toMatchObject({ sessionKey: W1, resumed: true });
    expect(await binder.choose(handle, 0, L, "u1")).toEqual({ ok: false, text: PICK_REFUSAL_TEXT.consumed });
    expect(audit.find("session_resume.pick", "refused").map((r) => r.fields.reason)).toEqual([
      "picker_wrong_owner",
      "picker_wrong_scope",
      "picker_consumed",
    ]);
  });
});

// ── release ───────────────────────────────────────────────────────────────────────────────────

describe("SessionBinder.release", () => {
  it("clears every exact-location binding and retires the record; the next message runs natively", async () => {
    await binder.pick(L, choice(W1, "Plan the trip"), "u1");
    const reply = await binder.release(L);
    expect(reply.ok).toBe(true);
    expect(reply.text).toContain("Detached from “Plan the trip”");
    expect(store.getMirrorLink(W1)).toBeNull();
    expect(expectations.get("dm1")).toEqual({ key: W1, title: "Plan the trip", version: 2, retired: true });
    expect(await binder.routeAndDeliver(L, NATIVE, delivered)).toEqual({
      kind: "route",
      sessionKey: NATIVE,
      resumed: false,
    });
  });

  it("a chat that was not attached says so", async () => {
    const reply = await binder.release(L);
    expect(reply).toEqual({
      ok: true,
      detached: false,
      text: "This chat wasn't continuing another session.",
    });
  });

  it("a release that cannot be made durable reports failure and keeps the active record", async () => {
    await binder.pick(L, choice(W1, "Plan the trip"), "u1");
    store.failCommits = true;
    const reply = await binder.release(L);
    expect(reply.ok).toBe(false);
    expect(reply.text).toContain("could not be saved");
    expect(reply.text).toContain("`!unlink`");
    expect(expectations.get("dm1")).toMatchObject({ version: 1, retired: false });
    expect(audit.find("session_resume.release", "failed")[0]?.fields.reason).toBe("store_write_failed");
    // The active record keeps the loss reportable: the next message is refused, not silently native.
    store.failCommits = false;
    expectRefuse(await binder.route(L, NATIVE), "lost_link");
  });

  it("a retirement that fails after a durable clear costs one self-retiring notice", async () => {
    await binder.pick(L, choice(W1, "Plan the trip"), "u1");
    failExpectationWrites = true;
    const reply = await binder.release(L);
    expect(reply.ok).toBe(true);
    expect(reply.text).toContain("one more notice");
    failExpectationWrites = false;
    expectRefuse(await binder.routeAndDeliver(L, NATIVE, delivered), "lost_link");
    expect(await binder.route(L, NATIVE)).toMatchObject({ sessionKey: NATIVE, resumed: false });
  });

  it("release detaches a bootstrap binding that had no record", async () => {
    store.clearMirrorLink(NATIVE);
    store.setMirrorLink(W2, L);
    const reply = await binder.release(L);
    expect(reply.text).toContain("Detached from “Untitled chat (…bbb222)”");
    expect(expectations.entries()).toEqual([]);
    expect(await binder.route(L, NATIVE)).toMatchObject({ sessionKey: NATIVE });
  });
});
