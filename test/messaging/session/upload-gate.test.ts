import { describe, expect, it } from "vitest";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../../src/messaging/security/audit.js";
import { MODE_INCOGNITO, MODE_TEMPORARY, PrivacyModes } from "../../../src/messaging/session/privacy-mode.js";
import { MemorySessionStore } from "../../../src/messaging/session/session-store.js";
import { uploadsRestricted } from "../../../src/messaging/session/upload-gate.js";

const key = "discord:agent:direct:42";

describe("uploadsRestricted", () => {
  it("allows an ordinary session, and audits the decision with the channel", () => {
    const audit = new MemoryAuditSink();
    expect(uploadsRestricted(new MemorySessionStore(), key, "discord", { audit })).toBe(false);
    expect(audit.find("upload_gate", "allowed")[0]?.fields).toMatchObject({
      channel: "discord",
      session: key,
    });
  });

  it("denies a session the live tracker marks restricted, whatever its namespace", async () => {
    const audit = new MemoryAuditSink();
    const privacy = new PrivacyModes({ audit });
    const keys = [key, "telegram:agent:direct:1", "dashboard:chat-1-1", "slack:1700000000.1"];
    for (const k of keys) await privacy.applyMode(MODE_INCOGNITO, k, { source: "test" });
    for (const k of keys)
      expect(uploadsRestricted(new MemorySessionStore(), k, "discord", { audit, privacy })).toBe(true);
  });

  it("denies on the persisted flag alone (a restart before the tracker was hydrated)", () => {
    const store = new MemorySessionStore();
    store.setFlag(key, MODE_TEMPORARY, true);
    const audit = new MemoryAuditSink();
    expect(uploadsRestricted(store, key, "telegram", { audit })).toBe(true);
    expect(audit.find("upload_gate", "denied")[0]?.fields).toMatchObject({
      channel: "telegram",
      reason: "persisted_temporary",
    });
  });

  it("reads the transcript's recorded mode; an unrecognised or unreadable one DENIES", () => {
    const store = new MemorySessionStore();
    const audit = new MemoryAuditSink();
    const logger = new MemoryLogger();
    const gate = (transcriptMode: (k: string) => string | null) =>
      uploadsRestricted(store, key, "discord", { audit, transcriptMode, logger });
    expect(gate(() => null)).toBe(false);
    expect(gate(() => "normal")).toBe(false);
    expect(gate(() => MODE_INCOGNITO)).toBe(true);
    expect(gate(() => "garbled\u0000")).toBe(true);
    expect(
      gate(() => {
        throw new Error("EACCES");
      }),
    ).toBe(true);
    expect(audit.find("upload_gate", "denied").map((r) => r.fields.reason)).toEqual([
      "transcript_incognito",
      "transcript_mode_unknown",
      "mode_unreadable",
    ]);
    expect(logger.entries.some((e) => e.level === "warn")).toBe(true);
  });

  it("an unreadable store denies", () => {
    const store = {
      flag: () => {
        throw new Error("closed");
      },
    };
    expect(uploadsRestricted(store, key, "discord", { audit: new MemoryAuditSink() })).toBe(true);
  });
});
