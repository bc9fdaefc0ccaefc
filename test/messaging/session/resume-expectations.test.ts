import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import {
  decodeExpectations,
  ResumeExpectationStore,
  resumeExpectationsRelPath,
} from "../../../src/messaging/session/resume-expectations.js";

let home: string;
let file: string;
let trust: string;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "parley-resume-exp-"));
  trust = join(home, "trust");
  file = join(trust, "discord_resume_expectations.json");
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

const W1 = { key: "webchat:default:direct:aaa", title: "Plan the trip" };
const W2 = { key: "webchat:default:direct:bbb", title: "Taxes" };

async function plant(content: string | Uint8Array): Promise<Buffer> {
  await mkdir(trust, { recursive: true });
  await writeFile(file, content);
  return readFile(file);
}

describe("ResumeExpectationStore: location and modes", () => {
  it("lives at <dataHome>/trust/<channel>_resume_expectations.json", () => {
    const store = new ResumeExpectationStore(home, "discord");
    expect(store.path).toBe(file);
    expect(store.relPath).toBe("trust/discord_resume_expectations.json");
    expect(resumeExpectationsRelPath("teams")).toBe("trust/teams_resume_expectations.json");
  });

  it("refuses a channel name that could leave trust/", () => {
    expect(() => new ResumeExpectationStore(home, "../etc")).toThrow(RangeError);
    expect(() => new ResumeExpectationStore(home, "Discord")).toThrow(RangeError);
  });

  it("writes an owner-only directory (0700) and file (0600)", async () => {
    const store = new ResumeExpectationStore(home, "discord");
    expect((await store.record("c1", W1)).ok).toBe(true);
    expect((await stat(trust)).mode & 0o777).toBe(0o700);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it("tightens an existing, wider trust/ directory and replaces a wider file", async () => {
    await mkdir(trust, { recursive: true, mode: 0o755 });
    await writeFile(file, "{}\n", { mode: 0o644 });
    const store = new ResumeExpectationStore(home, "discord");
    expect((await store.record("c1", W1)).ok).toBe(true);
    expect((await stat(trust)).mode & 0o777).toBe(0o700);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });
});

describe("ResumeExpectationStore: loading", () => {
  it("an absent file is empty, and loading creates nothing", async () => {
    const store = new ResumeExpectationStore(home, "discord");
    expect(await store.load()).toEqual({ state: "ready" });
    expect(store.get("c1")).toBeUndefined();
    await expect(stat(trust)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("round-trips rows through the documented shape", async () => {
    const first = new ResumeExpectationStore(home, "discord");
    await first.record("c1", W1);
    await first.record("c2", W2);
    await first.retire("c2", 1);
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({
      c1: { key: W1.key, title: W1.title, version: 1, retired: false },
      c2: { key: W2.key, title: W2.title, version: 2, retired: true },
    });
    const second = new ResumeExpectationStore(home, "discord");
    await second.load();
    expect(second.get("c1")).toEqual({ ...W1, version: 1, retired: false });
    expect(second.get("c2")).toEqual({ ...W2, version: 2, retired: true });
  });

  it("a row without `retired` (an older file) loads as active", async () => {
    await plant(JSON.stringify({ c1: { key: W1.key, title: W1.title, version: 4 } }));
    const store = new ResumeExpectationStore(home, "discord");
    expect(await store.load()).toEqual({ state: "ready" });
    expect(store.get("c1")).toEqual({ ...W1, version: 4, retired: false });
  });

  it("get() before load throws instead of answering 'no record'", () => {
    const store = new ResumeExpectationStore(home, "discord");
    expect(() => store.get("c1")).toThrow(/unloaded/);
  });

  const corrupt: [string, string | Uint8Array, RegExp][] = [
    ["bad JSON", '{"c1": {"key": "webchat:x", ', /not valid JSON/],
    ["an empty file", "", /not valid JSON/],
    ["a top-level array", "[]", /top level/],
    [
      "a non-integer version",
      JSON.stringify({ c1: { key: "webchat:x", title: "t", version: 1.5, retired: false } }),
      /version/,
    ],
    [
      "a string version",
      JSON.stringify({ c1: { key: "webchat:x", title: "t", version: "2", retired: false } }),
      /version/,
    ],
    [
      "a non-boolean retired",
      JSON.stringify({ c1: { key: "webchat:x", title: "t", version: 1, retired: "yes" } }),
      /retired/,
    ],
    ["a row that is not an object", JSON.stringify({ c1: 3 }), /not an object/],
    ["a missing key", JSON.stringify({ c1: { title: "t", version: 1 } }), /key/],
    ["non-UTF-8 bytes", new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x7b, 0x7d, 0x7d]), /UTF-8/],
  ];

  for (const [name, content, problem] of corrupt) {
    it(`${name}: unreadable, every write refused, the file untouched byte-for-byte`, async () => {
      const before = await plant(content);
      const logger = new MemoryLogger();
      const store = new ResumeExpectationStore(home, "discord", { logger });
      const status = await store.load();
      expect(status.state).toBe("unreadable");
      expect(status.state === "unreadable" && status.problem).toMatch(problem);
      expect(() => store.get("c1")).toThrow(/unreadable/);
      expect(await store.record("c1", W1)).toMatchObject({ ok: false, reason: "unreadable" });
      expect(await store.retire("c1", 1)).toMatchObject({ ok: false, reason: "unreadable" });
      expect(await store.adopt("c1", 1, W2)).toMatchObject({ ok: false, reason: "unreadable" });
      expect(await readFile(file)).toEqual(before);
      // Nothing quarantined or written beside it.
      expect(await readdir(trust)).toEqual(["discord_resume_expectations.json"]);
      expect(logger.entries.some((e) => e.level === "error")).toBe(true);
    });
  }

  it("a parse failure does not quote the file's content (the problem text reaches chat)", async () => {
    await plant('{"c1": {"key": "webchat:x", "title": "sk-secretvalue", ');
    const store = new ResumeExpectationStore(home, "discord");
    const status = await store.load();
    expect(status.state === "unreadable" && status.problem).not.toMatch(/secretvalue/);
  });

  it("an I/O error other than ENOENT is unreadable, not empty", async () => {
    await mkdir(file, { recursive: true }); // EISDIR on read
    const store = new ResumeExpectationStore(home, "discord");
    const status = await store.load();
    expect(status).toMatchObject({ state: "unreadable" });
    expect(await store.record("c1", W1)).toMatchObject({ ok: false, reason: "unreadable" });
  });

  it("a write lazily loads an unloaded store and refuses if the file is unreadable", async () => {
    const before = await plant("not json");
    const store = new ResumeExpectationStore(home, "discord");
    expect(await store.record("c1", W1)).toMatchObject({ ok: false, reason: "unreadable" });
    expect(await readFile(file)).toEqual(before);
  });

  it("decodeExpectations rejects a negative version", () => {
    const bytes = new TextEncoder().encode(JSON.stringify({ c: { key: "k", title: "", version: -1 } }));
    expect(() => decodeExpectations(bytes)).toThrow(/version/);
  });
});

describe("ResumeExpectationStore: versioned writes", () => {
  it("record bumps the version past any row and marks it active", async () => {
    const store = new ResumeExpectationStore(home, "discord");
    expect(await store.record("c1", W1)).toEqual({ ok: true, row: { ...W1, version: 1, retired: false } });
    await store.retire("c1", 1);
    expect(await store.record("c1", W2)).toEqual({ ok: true, row: { ...W2, version: 3, retired: false } });
  });

  it("retire is a compare-and-set that keeps the evidence and marks it retired", async () => {
    const store = new ResumeExpectationStore(home, "discord");
    await store.record("c1", W1);
    expect(await store.retire("c1", 1)).toEqual({ ok: true, row: { ...W1, version: 2, retired: true } });
    // The same settlement again (a second notice quoting version 1) changes nothing and says so.
    const again = await store.retire("c1", 1);
    expect(again).toEqual({
      ok: false,
      reason: "version_mismatch",
      current: { ...W1, version: 2, retired: true },
    });
  });

  it("a newer record wins over a stale settlement (retire and adopt)", async () => {
    const store = new ResumeExpectationStore(home, "discord");
    await store.record("c1", W1); // v1: the notice quotes this
    await store.record("c1", W2); // v2: a pick while the notice was in flight
    const bytes = await readFile(file);
    expect(await store.retire("c1", 1)).toMatchObject({ ok: false, reason: "version_mismatch" });
    expect(await store.adopt("c1", 1, { key: "webchat:x", title: "X" })).toMatchObject({
      ok: false,
      reason: "version_mismatch",
    });
    expect(store.get("c1")).toEqual({ ...W2, version: 2, retired: false });
    expect(await readFile(file)).toEqual(bytes);
  });

  it("adopt replaces the expected session under compare-and-set", async () => {
    const store = new ResumeExpectationStore(home, "discord");
    await store.record("c1", W1);
    await store.retire("c1", 1);
    expect(await store.adopt("c1", 2, W2)).toEqual({ ok: true, row: { ...W2, version: 3, retired: false } });
  });

  it("settling a conversation with no row is a mismatch, not a creation", async () => {
    const store = new ResumeExpectationStore(home, "discord");
    expect(await store.retire("nobody", 0)).toEqual({
      ok: false,
      reason: "version_mismatch",
      current: undefined,
    });
    expect(await store.adopt("nobody", 0, W1)).toMatchObject({ ok: false, reason: "version_mismatch" });
    await expect(stat(file)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("memory publishes only after a durable write: a failed swap changes nothing", async () => {
    let failing = false;
    const store = new ResumeExpectationStore(home, "discord", {
      rename: async (from, to) => {
        if (failing) throw new Error("EIO: simulated");
        await rename(from, to);
      },
    });
    await store.record("c1", W1);
    const bytes = await readFile(file);
    failing = true;
    expect(await store.record("c1", W2)).toMatchObject({ ok: false, reason: "write_failed" });
    expect(await store.retire("c1", 1)).toMatchObject({ ok: false, reason: "write_failed" });
    expect(store.get("c1")).toEqual({ ...W1, version: 1, retired: false });
    expect(await readFile(file)).toEqual(bytes);
    expect(await readdir(trust)).toEqual(["discord_resume_expectations.json"]); // no temp left behind
    failing = false;
    expect(await store.retire("c1", 1)).toMatchObject({ ok: true, row: { version: 2, retired: true } });
  });

  it("concurrent read-modify-writes serialize: no version is lost or reused", async () => {
    const store = new ResumeExpectationStore(home, "discord");
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => store.record("c1", { key: `webchat:k${i}`, title: `t${i}` })),
    );
    const versions = results.map((r) => (r.ok ? r.row.version : -1)).sort((a, b) => a - b);
    expect(versions).toEqual([1, 2, 3, 4, 5, 6]);
    const onDisk = JSON.parse(await readFile(file, "utf8"));
    expect(onDisk.c1).toEqual(store.get("c1"));
    expect(onDisk.c1.version).toBe(6);
  });
});
