/** The audit log cannot be grown without bound by strangers: rotation by size, refusals aggregated. */
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { JsonlAuditSink, MemoryAuditSink } from "../../../src/messaging/security/audit.js";
import { DenialWindowAuditSink } from "../../../src/messaging/security/audit-window.js";
import { ManualClock } from "../../helpers/manual-clock.js";

describe("refusals aggregated per sender and window", () => {
  it("the first is written at once, the rest as one row with a count when the window closes", async () => {
    const inner = new MemoryAuditSink();
    const clock = new ManualClock();
    const sink = new DenialWindowAuditSink(inner, clock, 60_000);
    for (let i = 0; i < 5; i++) sink.log("inbound", "denied", { channel: "telegram", user: "666" });
    sink.log("inbound", "denied", { channel: "telegram", user: "777" });
    sink.log("tool_permission", "approved", { session: "s" });
    sink.log("tool_permission", "approved", { session: "s" });
    expect(inner.records.map((r) => [r.operation, r.outcome, r.fields.user ?? r.fields.session])).toEqual([
      ["inbound", "denied", "666"],
      ["inbound", "denied", "777"],
      ["tool_permission", "approved", "s"],
      ["tool_permission", "approved", "s"],
    ]);
    await clock.advance(60_000);
    expect(inner.records.slice(4).map((r) => r.fields)).toEqual([
      { channel: "telegram", user: "666", repeated: 4, window_s: 60 },
    ]);
    // A new window starts fresh: the next refusal is written at once again.
    sink.log("inbound", "denied", { channel: "telegram", user: "666" });
    expect(inner.records).toHaveLength(6);
    sink.close();
    expect(inner.records).toHaveLength(6);
  });
});

describe("what folds into one row", () => {
  it("refusals that differ in any field are rows of their own: a Direct Line refusal is not counted under Web Chat", async () => {
    const inner = new MemoryAuditSink();
    const clock = new ManualClock();
    const sink = new DenialWindowAuditSink(inner, clock, 60_000);
    const refusal = (activityChannel: string) => ({
      channel: "teams",
      reason: "channel_not_msteams",
      user: "29:mallory",
      activity_channel: activityChannel,
    });
    sink.log("inbound", "denied", refusal("webchat"));
    sink.log("inbound", "denied", refusal("directline"));
    sink.log("inbound", "denied", refusal("directline"));
    // The same fields in another order are the same refusal.
    const { activity_channel, ...rest } = refusal("directline");
    sink.log("inbound", "denied", { activity_channel, ...rest });
    expect(inner.records.map((r) => r.fields.activity_channel)).toEqual(["webchat", "directline"]);
    await clock.advance(60_000);
    expect(inner.records.slice(2).map((r) => [r.fields.activity_channel, r.fields.repeated])).toEqual([
      ["directline", 2],
    ]);
  });

  it("the same fields under another outcome are another row", () => {
    const inner = new MemoryAuditSink();
    const sink = new DenialWindowAuditSink(inner, new ManualClock(), 60_000);
    sink.log("inbound", "denied", { channel: "webchat", reason: "x" });
    sink.log("inbound", "dropped", { channel: "webchat", reason: "x" });
    expect(inner.records.map((r) => r.outcome)).toEqual(["denied", "dropped"]);
    sink.close();
  });
});

describe("the JSONL audit file rotates by size", () => {
  it("keeps at most `keep` rotated files, each within the bound, and loses no row of the live window", async () => {
    const dir = mkdtempSync(join(tmpdir(), "parley-audit-"));
    const path = join(dir, "audit.jsonl");
    const sink = new JsonlAuditSink(
      path,
      (e) => {
        throw e;
      },
      () => new Date(0),
      { maxBytes: 1000, keep: 2 },
    );
    for (let i = 0; i < 100; i++) sink.log("inbound", "denied", { user: `u${i}` });
    await sink.flush();
    expect(readdirSync(dir).sort()).toEqual(["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2"]);
    for (const f of readdirSync(dir)) expect(statSync(join(dir, f)).size).toBeLessThanOrEqual(1000);
    const live = readFileSync(path, "utf8").trim().split("\n");
    expect(JSON.parse(live.at(-1) ?? "{}").fields.user).toBe("u99");
    expect((statSync(path).mode & 0o777).toString(8)).toBe("600");
  });
});
