import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Timers } from "../../../src/messaging/base/clock.js";
import { MemoryAuditSink } from "../../../src/messaging/security/audit.js";
import {
  autoTitleStep,
  buildTitlePrompt,
  cleanTitle,
  maybeAutoTitle,
  recordManualTitle,
  TITLE_INPUT_CHARS,
  TITLE_MAX_CHARS,
  TitleClaims,
  type TitleGenerator,
} from "../../../src/messaging/session/auto-title.js";
import type { SessionStore } from "../../../src/messaging/session/session-store.js";
import { MemorySessionStore } from "../../../src/messaging/session/session-store.js";
import type { TurnResult } from "../../../src/messaging/turn/pipeline.js";
import { openStore } from "../../../src/store/index.js";

const key = "telegram:agent:direct:111";

class ManualTimers implements Timers {
  private seq = 0;
  readonly due = new Map<number, () => void>();
  setTimeout(fn: () => void): unknown {
    this.seq += 1;
    this.due.set(this.seq, fn);
    return this.seq;
  }
  clearTimeout(handle: unknown): void {
    this.due.delete(handle as number);
  }
  fireAll(): void {
    const all = [...this.due.values()];
    this.due.clear();
    for (const fn of all) fn();
  }
}

const tick = () => new Promise((r) => setImmediate(r));

function turn(partial: Partial<TurnResult> = {}): TurnResult {
  return {
    sessionKey: key,
    channelType: "telegram",
    prompt: "plan a trip to Lisbon",
    text: "Here is a plan.",
    stopReason: "end_turn",
    ok: true,
    elapsedMs: 1,
    contextUsagePct: undefined,
    ...partial,
  };
}

describe("TitleClaims", () => {
  it("check-and-mark: exactly one claimant until released", () => {
    const claims = new TitleClaims();
    expect(claims.tryClaim(key)).toBe(true);
    expect(claims.tryClaim(key)).toBe(false);
    claims.releaseClaim(key);
    expect(claims.tryClaim(key)).toBe(true);
  });

  it("a manual mark blocks claims and is not released by a failing naming turn", () => {
    const claims = new TitleClaims();
    claims.markManual(key);
    claims.releaseClaim(key);
    expect(claims.isManual(key)).toBe(true);
    expect(claims.tryClaim(key)).toBe(false);
  });

  it("is bounded, evicting the least recently marked", () => {
    const claims = new TitleClaims(2);
    claims.tryClaim("a");
    claims.tryClaim("b");
    claims.tryClaim("c");
    expect(claims.tryClaim("a")).toBe(true);
    expect(claims.tryClaim("c")).toBe(false);
  });
});

describe("cleanTitle", () => {
  it.each([
    ['"Lisbon trip plan"', "Lisbon trip plan"],
    ["Title: Lisbon trip\nsecond line", "Lisbon trip"],
    ["\n\n  **Budget review**  ", "Budget review"],
    ["Fix <script> tags.", "Fix script tags"],
    ["“Curly quoted”", "Curly quoted"],
    ["SKIP", ""],
    ["  ", ""],
  ])("%j -> %j", (raw, expected) => {
    expect(cleanTitle(raw)).toBe(expected);
  });

  it("caps at TITLE_MAX_CHARS code points", () => {
    const title = cleanTitle("🙂".repeat(200));
    expect(Array.from(title)).toHaveLength(TITLE_MAX_CHARS);
  });

  it("bounds each side of the prompt (the one clip: at most TITLE_INPUT_CHARS code points, ellipsis included)", () => {
    const prompt = buildTitlePrompt("u".repeat(1000), "a".repeat(1000));
    expect(prompt).toContain(`User: ${"u".repeat(TITLE_INPUT_CHARS - 1)}…\n`);
    expect(prompt).toContain(`Assistant: ${"a".repeat(TITLE_INPUT_CHARS - 1)}…`);
    expect(prompt).not.toContain("u".repeat(TITLE_INPUT_CHARS));
  });
});

describe("maybeAutoTitle", () => {
  function setup(generate: TitleGenerator, store: SessionStore = new MemorySessionStore()) {
    const claims = new TitleClaims();
    const audit = new MemoryAuditSink();
    const renamed: string[] = [];
    claims.tryClaim(key);
    const args = {
      sessionKey: key,
      userText: "plan a trip",
      assistantText: "ok",
      source: "telegram",
      generate,
      store,
      audit,
      claims,
      setChannelTitle: (t: string) => void renamed.push(t),
    };
    return { claims, audit, renamed, store, args };
  }

  it("applies a cleaned title to the record and the platform", async () => {
    const { args, store, renamed, audit } = setup(async () => '"Lisbon trip"');
    expect(await maybeAutoTitle(args)).toBe("Lisbon trip");
    expect(store.titleOf(key)).toEqual({ title: "Lisbon trip", kind: "auto" });
    expect(renamed).toEqual(["Lisbon trip"]);
    expect(audit.find("telegram.auto_title", "allowed")).toHaveLength(1);
  });

  it("SKIP releases the claim so the next exchange retries", async () => {
    const { args, claims, store } = setup(async () => "SKIP");
    expect(await maybeAutoTitle(args)).toBe("");
    expect(store.titleOf(key)).toBeNull();
    expect(claims.tryClaim(key)).toBe(true);
  });

  it("a turn that never answers times out, aborts the generator and releases the claim", async () => {
    const timers = new ManualTimers();
    let signal: AbortSignal | undefined;
    const { args, claims, audit } = setup((_p, o) => {
      signal = o.signal;
      return new Promise<string>(() => {});
    });
    const pending = maybeAutoTitle({ ...args, timers, timeoutMs: 30_000 });
    await tick();
    timers.fireAll();
    expect(await pending).toBe("");
    expect(signal?.aborted).toBe(true);
    expect(claims.tryClaim(key)).toBe(true);
    expect(audit.find("telegram.auto_title", "failed")).toHaveLength(1);
  });

  it("a rename that lands while the turn streams wins, and the platform is left alone", async () => {
    let finish: (t: string) => void = () => {};
    const { args, claims, store, renamed, audit } = setup(
      () =>
        new Promise<string>((r) => {
          finish = r;
        }),
    );
    const pending = maybeAutoTitle(args);
    recordManualTitle(store, key, "Mine", claims);
    finish("Generated");
    expect(await pending).toBe("");
    expect(store.titleOf(key)).toEqual({ title: "Mine", kind: "manual" });
    expect(renamed).toEqual([]);
    expect(audit.find("telegram.auto_title", "refused")).toHaveLength(1);
  });

  it("a manual title from before a restart wins even though the new process's tracker is empty", async () => {
    const dir = await mkdtemp(join(tmpdir(), "parley-title-"));
    try {
      const before = await openStore(dir);
      recordManualTitle(before.sessions, key, "Named before restart", new TitleClaims());
      await before.close();
      const after = await openStore(dir);
      const { args, renamed } = setup(async () => "Generated", after.sessions);
      expect(await maybeAutoTitle(args)).toBe("");
      expect(after.sessions.titleOf(key)).toEqual({ title: "Named before restart", kind: "manual" });
      expect(renamed).toEqual([]);
      await after.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("autoTitleStep", () => {
  it("two turns on one key spend ONE naming turn, fired without blocking the step", async () => {
    let calls = 0;
    const store = new MemorySessionStore();
    const step = autoTitleStep({
      source: "telegram",
      generate: async () => {
        calls += 1;
        return "Trip";
      },
      store,
      audit: new MemoryAuditSink(),
      claims: new TitleClaims(),
      isRestricted: () => false,
    });
    expect(step.run(turn())).toBeUndefined();
    step.run(turn());
    await tick();
    expect(calls).toBe(1);
    expect(store.titleOf(key)?.title).toBe("Trip");
  });

  it("after a restart, an auto-titled conversation spends no naming turn and audits no refusal", async () => {
    const dir = await mkdtemp(join(tmpdir(), "parley-title-"));
    try {
      let calls = 0;
      const generate: TitleGenerator = async () => {
        calls += 1;
        return `Trip ${calls}`;
      };
      const before = await openStore(dir);
      const options = { source: "telegram", generate, isRestricted: () => false };
      autoTitleStep({
        ...options,
        store: before.sessions,
        audit: new MemoryAuditSink(),
        claims: new TitleClaims(),
      }).run(turn());
      await tick();
      expect(before.sessions.titleOf(key)).toEqual({ title: "Trip 1", kind: "auto" });
      await before.close();

      const after = await openStore(dir);
      const audit = new MemoryAuditSink();
      autoTitleStep({ ...options, store: after.sessions, audit, claims: new TitleClaims() }).run(turn());
      await tick();
      expect(calls).toBe(1);
      expect(after.sessions.titleOf(key)).toEqual({ title: "Trip 1", kind: "auto" });
      expect(audit.find("telegram.auto_title", "refused")).toHaveLength(0);
      await after.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a naming turn that loses to another process's auto title is dropped, not refused as manual", async () => {
    const store = new MemorySessionStore();
    const audit = new MemoryAuditSink();
    const claims = new TitleClaims();
    claims.tryClaim(key);
    const generate: TitleGenerator = async () => {
      // Another process named the conversation while this turn streamed.
      store.setTitle(key, "Theirs", "auto");
      return "Ours";
    };
    const args = {
      sessionKey: key,
      userText: "u",
      assistantText: "a",
      source: "telegram",
      generate,
      store,
      audit,
      claims,
    };
    expect(await maybeAutoTitle(args)).toBe("");
    expect(store.titleOf(key)).toEqual({ title: "Theirs", kind: "auto" });
    expect(audit.find("telegram.auto_title", "refused")).toHaveLength(0);
    expect(audit.find("telegram.auto_title", "dropped")).toHaveLength(1);
  });

  it("skips a failed, empty or restricted turn without taking the claim", async () => {
    const claims = new TitleClaims();
    let calls = 0;
    const step = autoTitleStep({
      source: "telegram",
      generate: async () => {
        calls += 1;
        return "x";
      },
      store: new MemorySessionStore(),
      audit: new MemoryAuditSink(),
      claims,
      isRestricted: (k) => k === "restricted",
    });
    step.run(turn({ ok: false }));
    step.run(turn({ text: "  " }));
    step.run(turn({ sessionKey: "restricted" }));
    await tick();
    expect(calls).toBe(0);
    expect(claims.tryClaim(key)).toBe(true);
    expect(claims.tryClaim("restricted")).toBe(true);
  });
});
