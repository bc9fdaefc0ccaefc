/** The scheduled-prompt rows and the channel server's inbox, over the real SQLite store, across a reopen. */
import { describe, expect, it } from "vitest";
import type { ScheduledJob } from "../../src/messaging/store/port.js";
import { open, useTempHome } from "./helpers.js";

const home = useTempHome();

const job = (over: Partial<ScheduledJob> = {}): ScheduledJob => ({
  id: "j1",
  channel: "telegram",
  conversationKey: "telegram:42",
  sessionKey: "telegram:default:direct:42",
  userId: "42",
  deliverTo: { kind: "link", link: { channelType: "telegram", conversationId: "42" } },
  address: { route: "42", chatType: "direct", chatId: "42" },
  prompt: "check the build",
  schedule: { kind: "every", everyMs: 3_600_000 },
  nextRunMs: 1_000,
  createdMs: 10,
  runs: 0,
  running: null,
  ...over,
});

describe("jobs", () => {
  it("saves, replaces, lists and removes whole rows, and keeps them across a reopen", async () => {
    const store = await open(home.dir);
    await store.jobs.save(job());
    await store.jobs.save(
      job({ id: "j2", schedule: { kind: "at", atMs: 5_000 }, deliverTo: { kind: "target", name: "phone" } }),
    );
    await store.jobs.save(job({ runs: 1, running: 1, nextRunMs: 3_601_000 }));
    await store.close();

    const again = await open(home.dir);
    const listed = await again.jobs.list();
    expect(listed).toEqual([
      job({ runs: 1, running: 1, nextRunMs: 3_601_000 }),
      job({ id: "j2", schedule: { kind: "at", atMs: 5_000 }, deliverTo: { kind: "target", name: "phone" } }),
    ]);
    expect(await again.jobs.remove("j1")).toBe(true);
    expect(await again.jobs.remove("j1")).toBe(false);
    expect((await again.jobs.list()).map((j) => j.id)).toEqual(["j2"]);
    await expect(again.jobs.save(job({ schedule: { kind: "every", everyMs: 0 } }))).rejects.toThrow(
      RangeError,
    );
    await again.close();
  });
});

describe("inbox", () => {
  const entry = {
    conversationKey: "telegram:42",
    channel: "telegram",
    address: { route: "42" },
    direction: "in" as const,
    userId: "42",
    attachments: ["a.png"],
    platformMessageId: "7",
    turnId: null,
  };

  it("appends, reads one conversation's recent entries up to an id, and marks handled once", async () => {
    const store = await open(home.dir);
    const a = await store.inbox.add({ ...entry, text: "one", atMs: 1 });
    const b = await store.inbox.add({ ...entry, text: "two", atMs: 2 });
    await store.inbox.add({ ...entry, conversationKey: "telegram:7", text: "elsewhere", atMs: 3 });
    const c = await store.inbox.add({ ...entry, direction: "out", userId: "", text: "three", atMs: 4 });
    expect((await store.inbox.recent("telegram:42", 10)).map((e) => e.text)).toEqual(["one", "two", "three"]);
    expect((await store.inbox.recent("telegram:42", 2)).map((e) => e.text)).toEqual(["two", "three"]);
    expect((await store.inbox.recent("telegram:42", 10, b)).map((e) => e.id)).toEqual([a, b]);
    expect(await store.inbox.get(c)).toMatchObject({ direction: "out", text: "three", handled: false });
    expect(await store.inbox.markHandled(a)).toBe(true);
    expect(await store.inbox.markHandled(a)).toBe(false);
    await store.close();
    const again = await open(home.dir);
    expect(await again.inbox.get(a)).toMatchObject({
      handled: true,
      attachments: ["a.png"],
      address: { route: "42" },
    });
    expect(await again.inbox.get(999)).toBeUndefined();
    expect(await again.inbox.get(-1)).toBeUndefined();
    await again.close();
  });
});
