import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  JsonlAuditSink,
  MemoryAuditSink,
  sanitizeAuditFields,
} from "../../../src/messaging/security/audit.js";

describe("audit sinks", () => {
  it("memory sink records operation, outcome and bounded fields", () => {
    const sink = new MemoryAuditSink(() => new Date(0));
    sink.log("tool_permission", "denied", { reason: "x".repeat(500), skip: undefined });
    const [rec] = sink.records;
    expect(rec?.ts).toBe("1970-01-01T00:00:00.000Z");
    expect(String(rec?.fields.reason).length).toBeLessThanOrEqual(201);
    expect("skip" in (rec?.fields ?? {})).toBe(false);
  });

  it("JSONL sink appends one JSON line per record, in order", async () => {
    const dir = mkdtempSync(join(tmpdir(), "parley-audit-"));
    const path = join(dir, "nested", "audit.jsonl");
    const sink = new JsonlAuditSink(path);
    sink.log("inbound", "denied", { user: "u1" });
    sink.log("inbound", "allowed", { user: "u2" });
    await sink.flush();
    const lines = readFileSync(path, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.operation, l.outcome, l.fields.user])).toEqual([
      ["inbound", "denied", "u1"],
      ["inbound", "allowed", "u2"],
    ]);
  });

  it("reports a failed write instead of swallowing it", async () => {
    const errors: unknown[] = [];
    const dir = mkdtempSync(join(tmpdir(), "parley-audit-"));
    writeFileSync(join(dir, "file"), "x");
    // A path under a regular file cannot be created: ENOTDIR.
    const sink = new JsonlAuditSink(join(dir, "file", "audit.jsonl"), (e) => errors.push(e));
    sink.log("x", "denied");
    await sink.flush();
    expect(errors).toHaveLength(1);
  });

  it("sanitize drops undefined only", () => {
    expect(sanitizeAuditFields({ a: 1, b: null, c: undefined, d: false })).toEqual({
      a: 1,
      b: null,
      d: false,
    });
  });
});
