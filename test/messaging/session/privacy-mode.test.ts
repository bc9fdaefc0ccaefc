import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../../src/messaging/security/audit.js";
import {
  MODE_INCOGNITO,
  MODE_TEMPORARY,
  NOTICE_INCOGNITO,
  NOTICE_TEMPORARY,
  PRIVACY_MODES,
  PrivacyModes,
  STRICTNESS,
  strictest,
  stripModifiers,
  stripToken,
} from "../../../src/messaging/session/privacy-mode.js";
import { MemorySessionStore } from "../../../src/messaging/session/session-store.js";

const tg = "telegram:agent:direct:111";

describe("strictest", () => {
  it("ranks every mode, so none can sort last and fail toward permissive", () => {
    expect(Object.keys(STRICTNESS).sort()).toEqual([...PRIVACY_MODES].sort());
  });

  it("temporary outranks incognito; unknown names and blanks are ignored", () => {
    expect(strictest(MODE_INCOGNITO, MODE_TEMPORARY)).toBe(MODE_TEMPORARY);
    expect(strictest(MODE_TEMPORARY, MODE_INCOGNITO)).toBe(MODE_TEMPORARY);
    expect(strictest(MODE_INCOGNITO, "bogus")).toBe(MODE_INCOGNITO);
    expect(strictest(null, undefined, "")).toBeNull();
  });

  it("is order-independent and returns one of its inputs (property)", () => {
    const mode = fc.constantFrom(MODE_TEMPORARY, MODE_INCOGNITO, "other", null);
    fc.assert(
      fc.property(fc.array(mode, { maxLength: 6 }), (modes) => {
        const result = strictest(...modes);
        expect(strictest(...[...modes].reverse())).toBe(result);
        if (result !== null) expect(modes).toContain(result);
        if (modes.includes(MODE_TEMPORARY)) expect(result).toBe(MODE_TEMPORARY);
      }),
    );
  });
});

describe("token strippers", () => {
  it("strips a standalone /mode or !mode anywhere, case-insensitively", () => {
    expect(stripToken("/temporary what is 2+2", MODE_TEMPORARY)).toEqual({
      text: "what is 2+2",
      found: true,
    });
    expect(stripToken("hi !INCOGNITO there", MODE_INCOGNITO)).toEqual({ text: "hi there", found: true });
  });

  it("leaves prose and paths alone", () => {
    for (const text of ["a/temporary path", "temporary fix", "/temporaryfile", "x!incognito"]) {
      expect(stripToken(text, MODE_TEMPORARY).found).toBe(false);
      expect(stripToken(text, MODE_INCOGNITO).found).toBe(false);
    }
  });

  it("reports every mode a message asked for", () => {
    expect(stripModifiers("/incognito /temporary")).toEqual({
      text: "",
      modes: [MODE_TEMPORARY, MODE_INCOGNITO],
    });
  });

  it("stripping twice changes nothing more (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("hello", "/temporary", "!incognito", "x", "\n"), { maxLength: 8 }),
        (words) => {
          const once = stripModifiers(words.join(" "));
          expect(stripModifiers(once.text)).toEqual({ text: once.text, modes: [] });
        },
      ),
    );
  });
});

describe("PrivacyModes", () => {
  it("marks the session BEFORE any await: visible while the notice is still in flight", async () => {
    const audit = new MemoryAuditSink();
    const modes = new PrivacyModes({ audit });
    let release: () => void = () => {};
    const notified = new Promise<void>((r) => {
      release = r;
    });
    const pending = modes.applyMode(MODE_INCOGNITO, tg, {
      source: "telegram",
      caller: "u1",
      notify: () => notified,
    });
    expect(modes.isRestricted(tg)).toBe(true);
    release();
    expect(await pending).toBe(true);
    expect(await modes.applyMode(MODE_INCOGNITO, tg, { source: "telegram" })).toBe(false);
    expect(audit.find("telegram.incognito_mode", "granted")).toHaveLength(1);
    expect(audit.records[0]?.fields).toMatchObject({ session: tg, caller: "u1", channel: "telegram" });
  });

  it("answers by key alone: no namespace is special", async () => {
    const modes = new PrivacyModes({ audit: new MemoryAuditSink() });
    const keys = [tg, "slack:1700000000.1", "discord:agent:direct:5", "dashboard:chat-1-2", "whatever"];
    for (const key of keys) await modes.applyMode(MODE_TEMPORARY, key, { source: "x" });
    for (const key of keys) expect(modes.isRestricted(key)).toBe(true);
    expect(modes.isRestricted("telegram:agent:direct:222")).toBe(false);
  });

  it("survives a restart through the durable flag (the mode name is the flag name)", async () => {
    const store = new MemorySessionStore();
    await new PrivacyModes({ audit: new MemoryAuditSink(), store }).applyMode(MODE_TEMPORARY, tg, {
      source: "tg",
    });
    expect(store.flag(tg, MODE_TEMPORARY)).toBe(true);
    const fresh = new PrivacyModes({ audit: new MemoryAuditSink(), store });
    expect(fresh.hydrate(tg)).toBe(MODE_TEMPORARY);
    expect(fresh.isTemporary(tg)).toBe(true);
    expect(fresh.isIncognito(tg)).toBe(false);
  });

  it("an evicted tracker entry falls back to the durable flag instead of reopening writes", async () => {
    const store = new MemorySessionStore();
    const modes = new PrivacyModes({ audit: new MemoryAuditSink(), store, maxEntries: 2 });
    for (const key of ["a", "b", "c"]) await modes.applyMode(MODE_INCOGNITO, key, { source: "t" });
    expect(modes.isRestricted("a")).toBe(true);
    const memoryOnly = new PrivacyModes({ audit: new MemoryAuditSink(), maxEntries: 2 });
    for (const key of ["a", "b", "c"]) await memoryOnly.applyMode(MODE_INCOGNITO, key, { source: "t" });
    expect(memoryOnly.isRestricted("a")).toBe(false);
    expect(memoryOnly.isRestricted("c")).toBe(true);
  });

  it("a persist failure is logged, not raised: the mode still holds", async () => {
    const logger = new MemoryLogger();
    const store = {
      flag: () => false,
      setFlag: () => {
        throw new Error("disk full");
      },
    };
    const modes = new PrivacyModes({ audit: new MemoryAuditSink(), store, logger });
    expect(await modes.applyMode(MODE_TEMPORARY, tg, { source: "tg" })).toBe(true);
    expect(modes.isTemporary(tg)).toBe(true);
    expect(logger.entries.some((e) => e.level === "error")).toBe(true);
  });

  it("an unreadable durable flag fails toward restricted", () => {
    const logger = new MemoryLogger();
    const store = {
      flag: () => {
        throw new Error("unreadable");
      },
      setFlag: () => {},
    };
    const modes = new PrivacyModes({ audit: new MemoryAuditSink(), store, logger });
    expect(modes.isRestricted(tg)).toBe(true);
    expect(logger.entries.some((e) => e.level === "warn")).toBe(true);
  });

  it("stripAndApply: a modifier-only message starts no turn; notices come from one place", async () => {
    const modes = new PrivacyModes({ audit: new MemoryAuditSink() });
    const notices: string[] = [];
    const applied: string[] = [];
    const opts = {
      source: "tg",
      notify: (n: string) => void notices.push(n),
      onApplied: (m: string) => void applied.push(m),
    };
    expect(await modes.stripAndApply("/temporary", tg, opts)).toEqual({
      text: "",
      onlyModifier: true,
      modes: [MODE_TEMPORARY],
    });
    expect(await modes.stripAndApply("!incognito summarise this", "k2", opts)).toEqual({
      text: "summarise this",
      onlyModifier: false,
      modes: [MODE_INCOGNITO],
    });
    expect(await modes.stripAndApply("plain text", "k3", opts)).toEqual({
      text: "plain text",
      onlyModifier: false,
      modes: [],
    });
    expect(notices).toEqual([NOTICE_TEMPORARY, NOTICE_INCOGNITO]);
    expect(applied).toEqual([MODE_TEMPORARY, MODE_INCOGNITO]);
    expect(modes.modeOf(tg)).toBe(MODE_TEMPORARY);
  });

  it("a failing notice or hook is logged and does not undo the mode", async () => {
    const logger = new MemoryLogger();
    const modes = new PrivacyModes({ audit: new MemoryAuditSink(), logger });
    const applied = await modes.applyMode(MODE_INCOGNITO, tg, {
      source: "tg",
      notify: () => Promise.reject(new Error("send failed")),
      onApplied: () => {
        throw new Error("hook failed");
      },
    });
    expect(applied).toBe(true);
    expect(modes.isIncognito(tg)).toBe(true);
    expect(logger.entries.filter((e) => e.level === "warn")).toHaveLength(2);
  });
});
