import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import type { ChannelLink } from "../../../src/messaging/session/keys.js";
import {
  buildDmSessionKey,
  rebindConversationLocation,
  releaseConversationLocation,
} from "../../../src/messaging/session/keys.js";
import {
  conversationOf,
  MemorySessionStore,
  MirrorOwnershipError,
} from "../../../src/messaging/session/session-store.js";
import type { TurnStore } from "../../../src/messaging/turn/pipeline.js";

const here: ChannelLink = { channelType: "telegram", conversationId: "c1" };
const alice = buildDmSessionKey("telegram", "agent", "111");
const aliceGen1 = buildDmSessionKey("telegram", "agent", "111", { gen: 1 });
const bob = buildDmSessionKey("telegram", "agent", "222");

/** Counts the commits a batch makes: the in-memory store's stand-in for a disk write. */
class CountingStore extends MemorySessionStore {
  commits = 0;
  changes = 0;
  protected override changed(): void {
    this.changes += 1;
  }
  protected override async commit(): Promise<void> {
    this.commits += 1;
  }
}

describe("MemorySessionStore", () => {
  it("structurally satisfies the pipeline's TurnStore", () => {
    const store: TurnStore = new MemorySessionStore();
    store.setOriginLink(alice, here);
    expect(store.isMuted(alice, "origin")).toBe(false);
  });

  it("refuses a rival conversation's mirror claim BEFORE mutating anything", () => {
    const store = new MemorySessionStore();
    store.setMirrorLink(alice, here);
    store.setMirrorLink(bob, { channelType: "telegram", conversationId: "bob-chat" });
    const before = store.get(bob);
    expect(() => store.setMirrorLink(bob, here)).toThrow(MirrorOwnershipError);
    expect(store.get(bob)).toEqual(before);
    expect(store.getMirrorLink(alice)).toEqual(here);
  });

  it("a new generation of the same conversation takes its location over instead of being refused", () => {
    const store = new MemorySessionStore();
    store.setMirrorLink(alice, here);
    store.setMirrorLink(aliceGen1, here);
    expect(store.getMirrorLink(aliceGen1)).toEqual(here);
    expect(store.getMirrorLink(alice)).toBeNull();
  });

  it("keeps /unlink's opt-out across /new: it belongs to the conversation, not the generation", () => {
    const store = new MemorySessionStore();
    store.setMirrorOptOut(alice, true);
    expect(conversationOf(aliceGen1)).toBe(alice);
    expect(store.mirrorOptOut(aliceGen1)).toBe(true);
    expect(store.mirrorOptOut(bob)).toBe(false);
  });

  it("a refused /link leaves the earlier opt-out in place (the claim goes first)", async () => {
    const store = new CountingStore();
    store.setMirrorLink(alice, here);
    store.setMirrorOptOut(bob, true);
    await expect(
      rebindConversationLocation(store, { key: bob, location: here, unlinkCommand: "/unlink" }),
    ).rejects.toThrow(MirrorOwnershipError);
    expect(store.mirrorOptOut(bob)).toBe(true);
    expect(store.getMirrorLink(bob)).toBeNull();
  });

  it("commits a batch ONCE on exit, including when its block throws", async () => {
    const store = new CountingStore();
    await expect(
      store.batch(async () => {
        store.setMirrorOptOut(alice, true);
        store.setCwd(alice, "/tmp");
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(store.commits).toBe(1);
    expect(store.mirrorOptOut(alice)).toBe(true);
    await store.batch(async () => {
      await store.batch(async () => store.setGeneration(alice, 2));
      store.setGeneration(alice, 3);
    });
    expect(store.commits).toBe(2);
  });

  it("/unlink sweeps every binding at the location by value", async () => {
    const store = new MemorySessionStore();
    store.setMirrorLink(alice, here);
    const logger = new MemoryLogger();
    const { text, swept } = await releaseConversationLocation(store, {
      key: aliceGen1,
      location: { ...here },
      channel: "telegram",
      logger,
    });
    expect(swept).toEqual([alice]);
    expect(text).toBe("✅ Unlinked.");
    expect(store.getMirrorLink(alice)).toBeNull();
    expect(store.mirrorOptOut(aliceGen1)).toBe(true);
  });

  it("a generated title never replaces any title on the record; a manual one always writes", () => {
    const store = new MemorySessionStore();
    expect(store.setTitle(alice, "Trip planning", "auto")).toBe(true);
    expect(store.setTitle(alice, "Other", "auto")).toBe(false);
    expect(store.setTitle(alice, "My trip", "manual")).toBe(true);
    expect(store.setTitle(alice, "Generated", "auto")).toBe(false);
    expect(store.titleOf(alice)).toEqual({ title: "My trip", kind: "manual" });
    expect(() => store.setTitle(bob, "  ", "manual")).toThrow(RangeError);
  });

  it("answers mute per leg, flags, cwd, policy and activity", () => {
    const store = new MemorySessionStore();
    store.setMuted(alice, "mirror", true);
    expect(store.isMuted(alice, "mirror")).toBe(true);
    expect(store.isMuted(alice, "origin")).toBe(false);
    store.setFlag(alice, "incognito", true);
    expect(store.flag(alice, "incognito")).toBe(true);
    store.setFlag(alice, "incognito", false);
    expect(store.get(alice)?.flags).toEqual({});
    store.setApprovalPolicy(alice, "auto");
    expect(store.approvalPolicyOf(alice)).toBe("auto");
    store.setApprovalPolicy(alice, "");
    expect(store.approvalPolicyOf(alice)).toBe("");
    store.touch(alice, 1234);
    expect(store.lastActiveOf(alice)).toBe(1234);
    expect(store.lastActiveOf(bob)).toBe(0);
  });

  it("keeps every key as given: no shim maps a bare Slack thread_ts onto a namespaced row", () => {
    // parley never stored bare-ts keys (issue 17), so a bare ts is just another key, never aliased.
    const store = new MemorySessionStore();
    store.setCwd("1700000000.123456", "/work");
    expect(store.cwdOf("slack:1700000000.123456")).toBeUndefined();
    expect(store.cwdOf("1700000000.123456")).toBe("/work");
    expect(store.keys()).toEqual(["1700000000.123456"]);
  });

  it("rejects a generation the key grammar cannot read back", () => {
    const store = new MemorySessionStore();
    for (const bad of [-1, 1.5, Number.NaN])
      expect(() => store.setGeneration(alice, bad)).toThrow(RangeError);
    expect(store.generationOf(alice)).toBe(0);
  });

  it("refuses writes after close instead of dropping them", async () => {
    const store = new MemorySessionStore();
    await store.close();
    expect(() => store.setCwd(alice, "/x")).toThrow(/closed/);
  });

  it("returns copies: a caller mutating a read cannot reach the store", () => {
    const store = new MemorySessionStore();
    store.setOriginLink(alice, here);
    const link = store.getOriginLink(alice);
    if (link) link.conversationId = "elsewhere";
    expect(store.getOriginLink(alice)).toEqual(here);
  });

  it("holds at most one owner per location under any sequence of claims (property)", () => {
    const keys = [alice, aliceGen1, bob, "discord:agent:direct:9", "dashboard:chat-1-1"];
    const locations: ChannelLink[] = [here, { channelType: "discord", conversationId: "d" }];
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(...keys), fc.constantFrom(...locations), fc.boolean()), {
          maxLength: 30,
        }),
        (ops) => {
          const store = new MemorySessionStore();
          for (const [key, loc, clear] of ops) {
            if (clear) store.clearMirrorLinksAt(loc);
            else {
              try {
                store.setMirrorLink(key, loc);
              } catch (error) {
                expect(error).toBeInstanceOf(MirrorOwnershipError);
              }
            }
          }
          for (const loc of locations) {
            const owners = store
              .keys()
              .filter((k) => {
                const m = store.getMirrorLink(k);
                return m !== null && m.conversationId === loc.conversationId;
              })
              .map(conversationOf);
            expect(new Set(owners).size).toBeLessThanOrEqual(1);
            expect(owners.length).toBeLessThanOrEqual(1);
          }
        },
      ),
    );
  });
});
