import { describe, expect, it } from "vitest";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import type { ChannelLink } from "../../src/messaging/session/keys.js";
import { SessionBinder } from "../../src/messaging/session/resume.js";
import { open, useTempHome } from "./helpers.js";

const home = useTempHome();
const L: ChannelLink = { channelType: "discord", conversationId: "dm1" };
const NATIVE = "discord:default:direct:u1";
const W1 = "webchat:default:direct:aaa111";
const COPY = { sessions: "`!sessions`", new: "`!new`", unlink: "`!unlink`" };

describe("resume records in the store", () => {
  it("versioned writes with compare-and-set, one instance per channel, kept across a restart", async () => {
    const store = await open(home.dir);
    const discord = store.resume.forChannel("discord");
    expect(store.resume.forChannel("discord")).toBe(discord);
    expect(() => discord.get("dm1")).toThrow(/unloaded/);
    expect(await discord.ready()).toEqual({ state: "ready" });
    expect(await discord.record("dm1", { key: W1, title: "Plan" })).toEqual({
      ok: true,
      row: { key: W1, title: "Plan", version: 1, retired: false },
    });
    expect(await discord.retire("dm1", 7)).toEqual({
      ok: false,
      reason: "version_mismatch",
      current: { key: W1, title: "Plan", version: 1, retired: false },
    });
    expect(await discord.retire("dm1", 1)).toMatchObject({ ok: true, row: { version: 2, retired: true } });
    expect(await discord.adopt("dm2", 0, { key: W1, title: "x" })).toMatchObject({
      reason: "version_mismatch",
    });
    expect(await store.resume.forChannel("telegram").ready()).toEqual({ state: "ready" });
    expect(store.resume.forChannel("telegram").entries()).toEqual([]);
    expect(() => store.resume.forChannel("../etc")).toThrow(RangeError);
    await store.close();

    const reopened = await open(home.dir);
    const again = reopened.resume.forChannel("discord");
    await again.ready();
    expect(again.entries()).toEqual([["dm1", { key: W1, title: "Plan", version: 2, retired: true }]]);
    await reopened.close();
  });

  it("serves the session binder: a pick made before a restart still routes after it", async () => {
    const audit = new MemoryAuditSink();
    const first = await open(home.dir);
    first.sessions.setTitle(W1, "Plan the trip", "manual");
    first.sessions.touch(W1, 200);
    const binder = new SessionBinder({
      channel: "discord",
      store: first.sessions,
      expectations: first.resume.forChannel("discord"),
      copy: COPY,
      audit,
    });
    expect((await binder.pick(L, { key: W1, title: "Plan the trip", lastActiveMs: 200 }, "u1")).ok).toBe(
      true,
    );
    await first.close();

    const second = await open(home.dir);
    const after = new SessionBinder({
      channel: "discord",
      store: second.sessions,
      expectations: second.resume.forChannel("discord"),
      copy: COPY,
      audit,
    });
    expect(await after.route(L, NATIVE)).toEqual({ kind: "route", sessionKey: W1, resumed: true });
    // The binding destroyed behind the record's back is detected, not silently routed native.
    second.sessions.clearMirrorLink(W1);
    expect(await after.route(L, NATIVE)).toMatchObject({ kind: "refuse", reason: "lost_link" });
    await second.close();
  });
});
