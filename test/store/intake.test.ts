import { describe, expect, it } from "vitest";
import type { InboundMessage, TranscriptAppend } from "../../src/messaging/store/port.js";
import { open, useTempHome } from "./helpers.js";

const home = useTempHome();

function msg(id: string | null, text = "hello", channel = "telegram"): InboundMessage {
  return {
    channel,
    platformMessageId: id,
    conversationKey: `${channel}:chat-1`,
    payload: { text },
    receivedAtMs: 500,
  };
}

describe("intake journal: accept and dedupe", () => {
  it("accepts a message once; a redelivery of the same id is a duplicate that says whether the content changed", async () => {
    const store = await open(home.dir);
    const first = await store.intake.accept(msg("42"));
    expect(first).toEqual({ kind: "accepted", id: expect.any(Number) });
    const id = first.kind === "accepted" ? first.id : -1;
    expect(await store.intake.accept(msg("42"))).toEqual({
      kind: "duplicate",
      id,
      state: "accepted",
      samePayload: true,
    });
    expect(await store.intake.accept(msg("42", "edited"))).toEqual({
      kind: "duplicate",
      id,
      state: "accepted",
      samePayload: false,
    });
    // The same platform id on another channel is another message.
    expect((await store.intake.accept(msg("42", "hello", "discord"))).kind).toBe("accepted");
    expect(await store.intake.countUnfinished()).toBe(2);
    await store.close();
  });

  it("a message without a platform id is accepted every time, never deduped", async () => {
    const store = await open(home.dir);
    const a = await store.intake.accept(msg(null));
    const b = await store.intake.accept(msg(null));
    expect(a.kind).toBe("accepted");
    expect(b.kind).toBe("accepted");
    expect(a.kind === "accepted" && b.kind === "accepted" && a.id !== b.id).toBe(true);
    await store.close();
  });

  it("forget gives a finished message's platform id back, so its redelivery is accepted again", async () => {
    const store = await open(home.dir);
    const first = await store.intake.accept(msg("wc-1"));
    const id = first.kind === "accepted" ? first.id : -1;
    // Unfinished: the row is still the message's only copy and keeps its id.
    expect(await store.intake.forget(id)).toBe(false);
    expect((await store.intake.accept(msg("wc-1"))).kind).toBe("duplicate");
    await store.intake.complete(id, "failed");
    expect(await store.intake.forget(id)).toBe(true);
    expect(await store.intake.forget(id)).toBe(false);
    const again = await store.intake.accept(msg("wc-1"));
    expect(again.kind).toBe("accepted");
    expect(again.kind === "accepted" && again.id !== id).toBe(true);
    // The redelivery is deduped as usual from then on.
    expect((await store.intake.accept(msg("wc-1"))).kind).toBe("duplicate");
    await store.close();
  });

  it("racing redeliveries of one id yield exactly one accepted", async () => {
    const store = await open(home.dir);
    const results = await Promise.all(Array.from({ length: 20 }, () => store.intake.accept(msg("7"))));
    expect(results.filter((r) => r.kind === "accepted")).toHaveLength(1);
    expect(results.filter((r) => r.kind === "duplicate")).toHaveLength(19);
    await store.close();
  });

  it("refuses malformed input with a clear error instead of writing an unroutable row", async () => {
    const store = await open(home.dir);
    await expect(store.intake.accept(msg(""))).rejects.toThrow(/platform message id/);
    await expect(store.intake.accept({ ...msg("1"), channel: "" })).rejects.toThrow(/channel/);
    await expect(store.intake.accept({ ...msg("1"), receivedAtMs: Number.NaN })).rejects.toThrow(
      /receivedAtMs/,
    );
    expect(await store.intake.countUnfinished()).toBe(0);
    await store.close();
  });
});

describe("intake journal: an answered turn's one step", () => {
  const answer = (text: string): TranscriptAppend => ({
    sessionKey: "telegram:agent:direct:1",
    turnId: "intake:1@500",
    entryKey: "intake:1@500:agent",
    atMs: 900,
    entry: { kind: "agent", text },
  });

  it("completes every message answered and writes the answer's line together, once", async () => {
    const store = await open(home.dir);
    const ids: number[] = [];
    for (const id of ["a1", "a2"]) {
      const r = await store.intake.accept(msg(id));
      if (r.kind !== "accepted") throw new Error("not accepted");
      ids.push(r.id);
    }
    expect(await store.intake.completeAnswered(ids, answer("the answer"))).toBe(2);
    expect(await store.intake.countUnfinished()).toBe(0);
    for (const id of ids)
      expect(await store.intake.claim(id)).toEqual({ kind: "finished", outcome: "answered" });
    // Again (the turn's ordinary completion, a second run): nothing finished, no second line.
    expect(await store.intake.completeAnswered(ids, answer("the answer"))).toBe(0);
    const lines = await store.transcripts.recent("telegram:agent:direct:1", 10);
    expect(lines.map((l) => l.entry)).toEqual([{ kind: "agent", text: "the answer" }]);
    await store.close();
  });

  it("is one transaction: a line the database refuses leaves the messages unfinished", async () => {
    const store = await open(home.dir);
    const r = await store.intake.accept(msg("b1"));
    if (r.kind !== "accepted") throw new Error("not accepted");
    // A session key the schema refuses (NOT NULL): the line's insert fails inside the transaction.
    const refused = { ...answer("lost"), sessionKey: null as unknown as string };
    await expect(store.intake.completeAnswered([r.id], refused)).rejects.toThrow();
    expect(await store.intake.countUnfinished()).toBe(1);
    expect((await store.intake.unfinished())[0]?.payload).toEqual({ text: "hello" });
    await store.close();
  });
});

describe("intake journal: claim, complete, resume", () => {
  it("counts claims, completes once, and reports a finished message's outcome", async () => {
    const store = await open(home.dir);
    const r = await store.intake.accept(msg("1"));
    if (r.kind !== "accepted") throw new Error("not accepted");
    expect(await store.intake.claim(r.id)).toEqual({ kind: "claimed", attempt: 1 });
    expect(await store.intake.claim(r.id)).toEqual({ kind: "claimed", attempt: 2 });
    expect(await store.intake.complete(r.id, "answered")).toBe(true);
    expect(await store.intake.complete(r.id, "failed")).toBe(false);
    expect(await store.intake.claim(r.id)).toEqual({ kind: "finished", outcome: "answered" });
    expect(await store.intake.claim(9999)).toEqual({ kind: "unknown" });
    expect(await store.intake.accept(msg("1"))).toMatchObject({ kind: "duplicate", state: "done" });
    await store.close();
  });

  it("after a restart, unfinished() lists accepted and claimed messages oldest first, with payload and age", async () => {
    let now = 10_000;
    const first = await open(home.dir, { now: () => now });
    const a = await first.intake.accept(msg("1", "first"));
    now = 11_000;
    const b = await first.intake.accept(msg("2", "second"));
    const c = await first.intake.accept(msg("3", "third"));
    if (a.kind !== "accepted" || b.kind !== "accepted" || c.kind !== "accepted")
      throw new Error("not accepted");
    await first.intake.claim(a.id);
    await first.intake.complete(c.id, "answered");
    await first.close();

    now = 71_000;
    const second = await open(home.dir, { now: () => now });
    const unfinished = await second.intake.unfinished();
    expect(unfinished).toEqual([
      {
        id: a.id,
        channel: "telegram",
        platformMessageId: "1",
        conversationKey: "telegram:chat-1",
        payload: { text: "first" },
        receivedAtMs: 500,
        acceptedAtMs: 10_000,
        state: "claimed",
        attempts: 1,
        ageMs: 61_000,
      },
      expect.objectContaining({
        id: b.id,
        state: "accepted",
        attempts: 0,
        ageMs: 60_000,
        payload: { text: "second" },
      }),
    ]);
    await second.close();
  });

  it("prune drops only done rows completed before the cutoff; a redelivery after that is accepted again", async () => {
    let now = 1_000;
    const store = await open(home.dir, { now: () => now });
    const done = await store.intake.accept(msg("1"));
    const open1 = await store.intake.accept(msg("2"));
    if (done.kind !== "accepted" || open1.kind !== "accepted") throw new Error("not accepted");
    await store.intake.complete(done.id, "answered");
    now = 5_000;
    expect(await store.intake.prune(1_000)).toBe(0);
    expect(await store.intake.prune(2_000)).toBe(1);
    expect(await store.intake.countUnfinished()).toBe(1);
    // The dedupe window is the retention of done rows: past it, the id is new again.
    expect((await store.intake.accept(msg("1"))).kind).toBe("accepted");
    // An unfinished row is never pruned, however old.
    expect(await store.intake.prune(Number.MAX_SAFE_INTEGER)).toBe(0);
    expect((await store.intake.accept(msg("2"))).kind).toBe("duplicate");
    await store.close();
  });

  it("ids are never reused after the newest row is pruned (they name turns in the delivery ledger)", async () => {
    const store = await open(home.dir);
    const a = await store.intake.accept(msg("1"));
    if (a.kind !== "accepted") throw new Error("not accepted");
    await store.intake.complete(a.id, "answered");
    await store.intake.prune(Number.MAX_SAFE_INTEGER);
    const b = await store.intake.accept(msg("2"));
    expect(b.kind === "accepted" && b.id > a.id).toBe(true);
    await store.close();
  });
});
