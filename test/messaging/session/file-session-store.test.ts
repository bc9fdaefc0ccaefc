import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Timers } from "../../../src/messaging/base/clock.js";
import { ParleyError } from "../../../src/messaging/base/errors.js";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import {
  atomicWriteFile,
  dataHomeFrom,
  FileSessionStore,
  SESSION_STORE_FILE,
} from "../../../src/messaging/session/file-session-store.js";

/** Timers that fire only when told to, so the debounce is observable without real time. */
class ManualTimers implements Timers {
  private seq = 0;
  readonly due = new Map<number, { fn: () => void; ms: number }>();
  setTimeout(fn: () => void, ms: number): unknown {
    this.seq += 1;
    this.due.set(this.seq, { fn, ms });
    return this.seq;
  }
  clearTimeout(handle: unknown): void {
    this.due.delete(handle as number);
  }
  fireAll(): void {
    const all = [...this.due.values()];
    this.due.clear();
    for (const t of all) t.fn();
  }
}

const key = "telegram:agent:direct:111";
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "parley-store-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function readStore(): Promise<{ version: number; sessions: Record<string, Record<string, unknown>> }> {
  return JSON.parse(await readFile(join(dir, SESSION_STORE_FILE), "utf8"));
}

describe("FileSessionStore restart", () => {
  it("generation, privacy flag, manual title, links and policy survive close and reopen", async () => {
    const first = await FileSessionStore.openIn(dir);
    first.setGeneration(key, 3);
    first.setFlag(key, "incognito", true);
    first.setTitle(key, "My name for it", "manual");
    first.setOriginLink(key, { channelType: "telegram", conversationId: "111", threadId: "7" });
    first.setMirrorLink(key, { channelType: "telegram", conversationId: "111" });
    first.setMirrorOptOut("discord:agent:direct:5", true);
    first.setMuted(key, "origin", true);
    first.setApprovalPolicy(key, "auto");
    first.setCwd(key, "/work");
    first.touch(key, 42);
    await first.close();

    const second = await FileSessionStore.openIn(dir);
    expect(second.generationOf(key)).toBe(3);
    expect(second.flag(key, "incognito")).toBe(true);
    expect(second.titleOf(key)).toEqual({ title: "My name for it", kind: "manual" });
    // The manual-wins guard is decided on the record, so it holds in the new process too.
    expect(second.setTitle(key, "Generated", "auto")).toBe(false);
    expect(second.getOriginLink(key)).toEqual({
      channelType: "telegram",
      conversationId: "111",
      threadId: "7",
    });
    expect(second.getMirrorLink(key)).toEqual({ channelType: "telegram", conversationId: "111" });
    expect(second.mirrorOptOut("discord:agent:direct:5")).toBe(true);
    expect(second.isMuted(key, "origin")).toBe(true);
    expect(second.approvalPolicyOf(key)).toBe("auto");
    expect(second.cwdOf(key)).toBe("/work");
    expect(second.lastActiveOf(key)).toBe(42);
    await second.close();
  });

  it("a missing file is an empty store, and nothing is created until a write", async () => {
    const store = await FileSessionStore.openIn(join(dir, "home"));
    expect(store.keys()).toEqual([]);
    await store.close();
    await expect(stat(join(dir, "home"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("reports a corrupt file with the path and the repair hint, and never resets it", async () => {
    const path = join(dir, SESSION_STORE_FILE);
    await writeFile(path, '{"version":1,"sessions":{"k":{"generation":');
    const store = new FileSessionStore(dir);
    const error = await store.open().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ParleyError);
    expect((error as ParleyError).code).toBe("STORE_CORRUPT");
    expect((error as Error).message).toContain(path);
    expect((error as Error).message).toContain("move it aside to start fresh");
    // The broken file is untouched, and the store refuses to act as if it were empty.
    expect(await readFile(path, "utf8")).toBe('{"version":1,"sessions":{"k":{"generation":');
    expect(() => store.keys()).toThrow(/before open/);
    expect(() => store.setCwd(key, "/x")).toThrow();
  });

  it.each([
    ["an empty file", ""],
    ["a wrong shape", '{"version":1,"sessions":[]}'],
    ["a bad field", '{"version":1,"sessions":{"k":{"generation":-1}}}'],
    ["a bad link", '{"version":1,"sessions":{"k":{"originLink":{"channelType":1}}}}'],
    ["a newer version", '{"version":99,"sessions":{}}'],
  ])("treats %s as corruption, not as a fresh start", async (_label, text) => {
    await writeFile(join(dir, SESSION_STORE_FILE), text);
    await expect(FileSessionStore.openIn(dir)).rejects.toMatchObject({ code: "STORE_CORRUPT" });
  });

  it("reports an unreadable path the same way", async () => {
    await mkdir(join(dir, SESSION_STORE_FILE));
    await expect(FileSessionStore.openIn(dir)).rejects.toMatchObject({
      code: "STORE_CORRUPT",
      message: expect.stringContaining("cannot be read"),
    });
  });

  it("ignores a half-written temp file left by a write killed before its rename", async () => {
    const store = await FileSessionStore.openIn(dir);
    store.setGeneration(key, 2);
    await store.close();
    await writeFile(join(dir, `${SESSION_STORE_FILE}.999.1.tmp`), '{"version":1,"sessions":{"x":');
    const reopened = await FileSessionStore.openIn(dir);
    expect(reopened.generationOf(key)).toBe(2);
    expect(reopened.keys()).toEqual([key]);
    await reopened.close();
  });
});

describe("FileSessionStore writes", () => {
  it("coalesces unbatched writes into one debounced flush", async () => {
    const timers = new ManualTimers();
    let renames = 0;
    const store = await FileSessionStore.openIn(dir, {
      timers,
      debounceMs: 100,
      rename: async (from, to) => {
        renames += 1;
        await rename(from, to);
      },
    });
    store.setCwd(key, "/a");
    store.setGeneration(key, 1);
    store.setFlag(key, "temporary", true);
    expect(timers.due.size).toBe(1);
    expect([...timers.due.values()][0]?.ms).toBe(100);
    expect(renames).toBe(0);
    timers.fireAll();
    await store.flush();
    expect(renames).toBe(1);
    expect((await readStore()).sessions[key]).toMatchObject({
      cwd: "/a",
      generation: 1,
      flags: { temporary: true },
    });
    await store.close();
    expect(renames).toBe(1);
  });

  it("a batch writes once on exit, even when its block throws", async () => {
    const timers = new ManualTimers();
    let renames = 0;
    const store = await FileSessionStore.openIn(dir, {
      timers,
      rename: async (from, to) => {
        renames += 1;
        await rename(from, to);
      },
    });
    await expect(
      store.batch(async () => {
        store.setMirrorOptOut(key, true);
        store.setCwd(key, "/b");
        throw new Error("refused");
      }),
    ).rejects.toThrow("refused");
    expect(renames).toBe(1);
    expect(timers.due.size).toBe(0);
    expect((await readStore()).sessions[key]).toMatchObject({ mirrorOptOut: true, cwd: "/b" });
    await store.close();
  });

  it("flush() and close() await a write that is still pending", async () => {
    const store = await FileSessionStore.openIn(dir, { timers: new ManualTimers() });
    store.setGeneration(key, 5);
    await store.flush();
    expect((await readStore()).sessions[key]).toMatchObject({ generation: 5 });
    store.setGeneration(key, 6);
    await store.close();
    expect((await readStore()).sessions[key]).toMatchObject({ generation: 6 });
  });

  it("a failed swap leaves the previous file whole, removes the temp file, and retries later", async () => {
    let fail = false;
    const logger = new MemoryLogger();
    const timers = new ManualTimers();
    const store = await FileSessionStore.openIn(dir, {
      timers,
      logger,
      rename: async (from, to) => {
        if (fail) throw Object.assign(new Error("simulated crash"), { code: "EIO" });
        await rename(from, to);
      },
    });
    store.setGeneration(key, 1);
    await store.flush();
    fail = true;
    store.setGeneration(key, 2);
    await expect(store.flush()).rejects.toThrow("simulated crash");
    expect((await readStore()).sessions[key]).toMatchObject({ generation: 1 });
    expect((await readdir(dir)).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    // A timer-driven failure is logged, never swallowed, and the change stays pending.
    store.setCwd(key, "/c");
    expect(timers.due.size).toBe(1);
    timers.fireAll();
    await expect(store.flush()).rejects.toThrow("simulated crash");
    expect(logger.entries.some((e) => e.level === "error" && e.message.includes("write failed"))).toBe(true);
    fail = false;
    await store.close();
    expect((await readStore()).sessions[key]).toMatchObject({ generation: 2, cwd: "/c" });
  });

  it("writes the file with owner-only permissions", async () => {
    const store = await FileSessionStore.openIn(dir);
    store.setTitle(key, "private words", "manual");
    await store.close();
    if (process.platform !== "win32") {
      expect((await stat(join(dir, SESSION_STORE_FILE))).mode & 0o777).toBe(0o600);
    }
  });
});

describe("atomicWriteFile", () => {
  it("the target holds the old content until the fully written temp file is swapped in", async () => {
    const path = join(dir, "f.json");
    await writeFile(path, "old");
    const seen: { target: string; temp: string }[] = [];
    await atomicWriteFile(path, dir, "new content", {
      rename: async (from, to) => {
        seen.push({ target: await readFile(to, "utf8"), temp: await readFile(from, "utf8") });
        await rename(from, to);
      },
    });
    expect(seen).toEqual([{ target: "old", temp: "new content" }]);
    expect(await readFile(path, "utf8")).toBe("new content");
    expect(await readdir(dir)).toEqual(["f.json"]);
  });

  it("propagates a failure and cleans its temp file up", async () => {
    const path = join(dir, "f.json");
    await writeFile(path, "old");
    await expect(
      atomicWriteFile(path, dir, "new", {
        rename: async () => {
          throw new Error("disk gone");
        },
      }),
    ).rejects.toThrow("disk gone");
    expect(await readFile(path, "utf8")).toBe("old");
    expect(await readdir(dir)).toEqual(["f.json"]);
  });
});

describe("dataHomeFrom", () => {
  it("prefers PARLEY_HOME and falls back to ~/.parley", () => {
    expect(dataHomeFrom("/srv/parley", "/home/u")).toBe("/srv/parley");
    expect(dataHomeFrom(undefined, "/home/u")).toBe(join("/home/u", ".parley"));
    expect(dataHomeFrom("  ", "/home/u")).toBe(join("/home/u", ".parley"));
  });
});
