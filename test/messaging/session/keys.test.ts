import { describe, expect, it } from "vitest";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import {
  bindOriginMirror,
  buildDmSessionKey,
  type ChannelLink,
  type LinkStore,
  rebindConversationLocation,
  releaseConversationLocation,
  sameLocation,
  shouldRotateGeneration,
  splitDmSessionKey,
} from "../../../src/messaging/session/keys.js";

class OwnershipConflict extends Error {}

interface Snapshot {
  mirror: Map<string, ChannelLink>;
  optOut: Set<string>;
}

/**
 * A real in-memory LinkStore with the batch semantics the handlers are written against: mutations
 * outside a batch persist at once; a batch persists ONCE on exit, including when its block throws.
 * `persisted` is what a restart would read back.
 */
class MemoryLinkStore implements LinkStore {
  private readonly mirror = new Map<string, ChannelLink>();
  private readonly optOut = new Set<string>();
  /** Locations held by an inbound-committed owner (a resumed session); a rival claim is refused. */
  readonly committed = new Map<string, ChannelLink>();
  persisted: Snapshot = { mirror: new Map(), optOut: new Set() };
  writes = 0;
  private depth = 0;

  async batch<T>(fn: () => Promise<T>): Promise<T> {
    this.depth += 1;
    try {
      return await fn();
    } finally {
      this.depth -= 1;
      if (this.depth === 0) this.flush();
    }
  }

  getMirrorLink(key: string): ChannelLink | null {
    return this.mirror.get(key) ?? null;
  }

  setMirrorLink(key: string, link: ChannelLink): void {
    for (const [owner, held] of this.committed) {
      if (owner !== key && sameLocation(held, link)) throw new OwnershipConflict(`location held by ${owner}`);
    }
    this.mirror.set(key, { ...link });
    this.mutated();
  }

  clearMirrorLink(key: string): boolean {
    const had = this.mirror.delete(key);
    if (had) this.mutated();
    return had;
  }

  clearMirrorLinksAt(location: ChannelLink): string[] {
    const swept = [...this.mirror].filter(([, link]) => sameLocation(link, location)).map(([key]) => key);
    for (const key of swept) this.mirror.delete(key);
    if (swept.length > 0) this.mutated();
    return swept;
  }

  mirrorOptOut(key: string): boolean {
    return this.optOut.has(key);
  }

  setMirrorOptOut(key: string, optedOut: boolean): void {
    if (optedOut) this.optOut.add(key);
    else this.optOut.delete(key);
    this.mutated();
  }

  private mutated(): void {
    if (this.depth === 0) this.flush();
  }

  private flush(): void {
    this.writes += 1;
    this.persisted = { mirror: new Map(this.mirror), optOut: new Set(this.optOut) };
  }
}

function lines(logger: MemoryLogger): string[] {
  return logger.entries.map((e) => `${e.level} ${e.message}`);
}

const KEY = "telegram:main:direct:42:gen2";
const HERE: ChannelLink = { channelType: "telegram", conversationId: "42" };

describe("/link: rebindConversationLocation", () => {
  it("claims the location, withdraws the opt-out, in ONE write, and replies with the channel's unlink spelling", async () => {
    const store = new MemoryLinkStore();
    store.setMirrorOptOut(KEY, true);
    const writesBefore = store.writes;

    const text = await rebindConversationLocation(store, {
      key: KEY,
      location: HERE,
      unlinkCommand: "/unlink",
    });

    expect(text).toBe(
      "✅ Linked. Replies from the dashboard for this conversation will also show up here. Send /unlink to stop.",
    );
    expect(store.writes - writesBefore).toBe(1);
    expect(store.persisted.mirror.get(KEY)).toEqual(HERE);
    expect(store.persisted.optOut.has(KEY)).toBe(false);
  });

  it("claims BEFORE withdrawing the opt-out: a refused claim leaves the persisted opt-out in place", async () => {
    const store = new MemoryLinkStore();
    store.setMirrorOptOut(KEY, true);
    store.committed.set("discord:main:direct:7", HERE);

    await expect(
      rebindConversationLocation(store, { key: KEY, location: HERE, unlinkCommand: "/unlink" }),
    ).rejects.toBeInstanceOf(OwnershipConflict);

    expect(store.persisted.optOut.has(KEY)).toBe(true);
    expect(store.persisted.mirror.has(KEY)).toBe(false);
  });

  it("(why the order matters) a batch persists what ran before a throw", async () => {
    const store = new MemoryLinkStore();
    store.setMirrorOptOut(KEY, true);
    await expect(
      store.batch(async () => {
        store.setMirrorOptOut(KEY, false);
        throw new OwnershipConflict("refused after the withdrawal");
      }),
    ).rejects.toBeInstanceOf(OwnershipConflict);
    // Had the withdrawal gone first, mirroring would now be silently back on.
    expect(store.persisted.optOut.has(KEY)).toBe(false);
  });
});

describe("/unlink: releaseConversationLocation", () => {
  it("records the opt-out, clears its own binding and sweeps every binding at the location by value", async () => {
    const store = new MemoryLinkStore();
    const logger = new MemoryLogger();
    store.setMirrorLink(KEY, HERE);
    store.setMirrorLink("telegram:main:direct:42:gen1", HERE); // stranded under a rotated generation
    store.setMirrorLink("dashboard:chat-3", { ...HERE }); // another session mirroring here, same value
    store.setMirrorLink("dashboard:chat-9", { channelType: "telegram", conversationId: "42", threadId: "5" });
    const writesBefore = store.writes;

    const { text, swept } = await releaseConversationLocation(store, {
      key: KEY,
      location: HERE,
      channel: "telegram",
      logger,
    });

    expect(text).toBe("✅ Unlinked (3 bindings).");
    expect(swept.sort()).toEqual(["dashboard:chat-3", "telegram:main:direct:42:gen1"]);
    expect(store.writes - writesBefore).toBe(1);
    expect(store.persisted.optOut.has(KEY)).toBe(true);
    expect([...store.persisted.mirror.keys()]).toEqual(["dashboard:chat-9"]); // a different Topic survives
    expect(lines(logger)).toEqual(["info telegram: unlink swept 2 mirror binding(s)"]);
  });

  it("says ✅ Unlinked. for exactly its own binding", async () => {
    const store = new MemoryLinkStore();
    store.setMirrorLink(KEY, HERE);
    const result = await releaseConversationLocation(store, {
      key: KEY,
      location: HERE,
      channel: "telegram",
    });
    expect(result).toEqual({ text: "✅ Unlinked.", swept: [] });
  });

  it("says when nothing was linked, and still records the opt-out", async () => {
    const store = new MemoryLinkStore();
    const result = await releaseConversationLocation(store, {
      key: KEY,
      location: HERE,
      channel: "telegram",
    });
    expect(result).toEqual({ text: "This conversation wasn't linked.", swept: [] });
    expect(store.persisted.optOut.has(KEY)).toBe(true);
  });
});

describe("bindOriginMirror: the per-turn self-healing bind", () => {
  it("binds an unbound conversation, and an /unlink keeps it off until /link", async () => {
    const store = new MemoryLinkStore();
    const logger = new MemoryLogger();
    expect(await bindOriginMirror(store, { key: KEY, location: HERE, logger })).toBe(true);

    await releaseConversationLocation(store, { key: KEY, location: HERE, channel: "telegram" });
    expect(await bindOriginMirror(store, { key: KEY, location: HERE, logger })).toBe(false);
    expect(store.getMirrorLink(KEY)).toBeNull();

    await rebindConversationLocation(store, { key: KEY, location: HERE, unlinkCommand: "/unlink" });
    expect(store.getMirrorLink(KEY)).toEqual(HERE);
  });

  it("leaves a binding aimed elsewhere alone", async () => {
    const store = new MemoryLinkStore();
    const elsewhere: ChannelLink = { channelType: "discord", conversationId: "c1" };
    store.setMirrorLink(KEY, elsewhere);
    expect(await bindOriginMirror(store, { key: KEY, location: HERE, logger: new MemoryLogger() })).toBe(
      false,
    );
    expect(store.getMirrorLink(KEY)).toEqual(elsewhere);
  });

  it("never binds a unified bucket, which names no single conversation", async () => {
    const store = new MemoryLinkStore();
    expect(
      await bindOriginMirror(store, { key: "unified:main", location: HERE, logger: new MemoryLogger() }),
    ).toBe(false);
    expect(store.getMirrorLink("unified:main")).toBeNull();
  });

  it("logs and declines a refused claim instead of throwing into the turn", async () => {
    const store = new MemoryLinkStore();
    const logger = new MemoryLogger();
    store.committed.set("discord:main:direct:7", HERE);
    expect(await bindOriginMirror(store, { key: KEY, location: HERE, logger })).toBe(false);
    expect(lines(logger)).toEqual(["debug telegram: origin mirror bind skipped"]);
  });
});

describe("DM keys", () => {
  it("keeps a non-operator out of the unified bucket whatever the scope says", () => {
    expect(buildDmSessionKey("whatsapp", "main", "+1555", { dmScope: "unified" })).toBe(
      "whatsapp:main:direct:+1555",
    );
    expect(
      buildDmSessionKey("whatsapp", "main", "+1555", { dmScope: "unified", operator: false, gen: 2 }),
    ).toBe("whatsapp:main:direct:+1555:gen2");
    expect(
      buildDmSessionKey("whatsapp", "main", "+1555", { dmScope: "unified", operator: true, gen: 2 }),
    ).toBe("unified:main:gen2");
  });

  it("accepts per-peer as a spelling of the default scope", () => {
    expect(buildDmSessionKey("telegram", "main", "42", { dmScope: "per-peer", operator: true })).toBe(
      "telegram:main:direct:42",
    );
  });

  it("round-trips the unified generation shape", () => {
    expect(splitDmSessionKey("unified:main:gen4")).toEqual(["unified:main", 4]);
    expect(splitDmSessionKey("unified:main")).toEqual(["unified:main", 0]);
    expect(splitDmSessionKey("unified:main:x")).toBeNull();
    expect(splitDmSessionKey("unified::gen1")).toBeNull();
  });
});

describe("shouldRotateGeneration", () => {
  const MIN = 60_000;
  const HOUR = 60 * MIN;
  // 2026-03-10T12:00:00Z
  const NOON_UTC = Date.UTC(2026, 2, 10, 12);

  it("never rotates the first message in a bucket", () => {
    expect(
      shouldRotateGeneration(0, NOON_UTC, { idleMinutes: 1, dailyResetHour: 4, utcOffsetMinutes: 0 }),
    ).toBe(false);
  });

  it("rotates once the idle gap reaches the threshold, not before", () => {
    const policy = { idleMinutes: 30, utcOffsetMinutes: 0 };
    expect(shouldRotateGeneration(NOON_UTC - 30 * MIN + 1, NOON_UTC, policy)).toBe(false);
    expect(shouldRotateGeneration(NOON_UTC - 30 * MIN, NOON_UTC, policy)).toBe(true);
    expect(
      shouldRotateGeneration(NOON_UTC - 10 * HOUR, NOON_UTC, { idleMinutes: 0, utcOffsetMinutes: 0 }),
    ).toBe(false);
  });

  it("rotates when the local daily boundary falls in (lastActive, now]", () => {
    const policy = { dailyResetHour: 4, utcOffsetMinutes: 0 };
    expect(shouldRotateGeneration(Date.UTC(2026, 2, 10, 3, 59), Date.UTC(2026, 2, 10, 4), policy)).toBe(true);
    expect(shouldRotateGeneration(Date.UTC(2026, 2, 10, 4), Date.UTC(2026, 2, 10, 23), policy)).toBe(false);
    expect(shouldRotateGeneration(Date.UTC(2026, 2, 9, 23), Date.UTC(2026, 2, 10, 3), policy)).toBe(false);
    expect(shouldRotateGeneration(Date.UTC(2026, 2, 9, 23), Date.UTC(2026, 2, 10, 5), policy)).toBe(true);
  });

  it("reads the hour in LOCAL time through the injected offset", () => {
    // 04:00 at UTC+9 is 19:00Z the previous day.
    const tokyo = { dailyResetHour: 4, utcOffsetMinutes: 9 * 60 };
    expect(shouldRotateGeneration(Date.UTC(2026, 2, 9, 18), Date.UTC(2026, 2, 9, 19, 30), tokyo)).toBe(true);
    expect(shouldRotateGeneration(Date.UTC(2026, 2, 10, 3), Date.UTC(2026, 2, 10, 5), tokyo)).toBe(false);
    // 04:00 at UTC-5 is 09:00Z.
    const offsetFn = { dailyResetHour: 4, utcOffsetMinutes: () => -5 * 60 };
    expect(shouldRotateGeneration(Date.UTC(2026, 2, 10, 8), Date.UTC(2026, 2, 10, 9), offsetFn)).toBe(true);
  });

  it("treats an out-of-range hour as disabled", () => {
    for (const dailyResetHour of [-1, 24, 3.5]) {
      expect(
        shouldRotateGeneration(NOON_UTC - 47 * HOUR, NOON_UTC, { dailyResetHour, utcOffsetMinutes: 0 }),
      ).toBe(false);
    }
  });
});
