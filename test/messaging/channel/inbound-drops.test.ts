import { describe, expect, it } from "vitest";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import { InboundDropLedger } from "../../../src/messaging/channel/inbound-drops.js";
import { MemoryAuditSink } from "../../../src/messaging/security/audit.js";
import { DenialWindowAuditSink } from "../../../src/messaging/security/audit-window.js";
import type { InboundDropStore, InboundDropTotal } from "../../../src/messaging/store/port.js";
import { ManualClock } from "../../helpers/manual-clock.js";

function memoryStore(): InboundDropStore & { batches: InboundDropTotal[][] } {
  const batches: InboundDropTotal[][] = [];
  return {
    batches,
    add: async (batch) => {
      batches.push(batch.map((row) => ({ ...row })));
    },
    totals: async () => [],
  };
}

describe("inbound drops", () => {
  it("counts per channel and reason, audits each with its outcome, and names the channel", () => {
    const audit = new MemoryAuditSink();
    const ledger = new InboundDropLedger({ audit, logger: new MemoryLogger(), now: () => 7 });
    const webex = ledger.forChannel("webex");
    webex.record({ reason: "missing_id", fields: { verb: "post" } });
    webex.record({ reason: "missing_id" });
    ledger.forChannel("telegram").record({ reason: "stranger", user: "42", conversation: "42" });
    expect(ledger.count("webex", "missing_id")).toBe(2);
    expect(ledger.count("telegram", "stranger")).toBe(1);
    expect(ledger.count("telegram", "missing_id")).toBe(0);
    expect(audit.records.map((r) => [r.operation, r.outcome, r.fields.channel, r.fields.reason])).toEqual([
      ["inbound", "dropped", "webex", "missing_id"],
      ["inbound", "dropped", "webex", "missing_id"],
      ["inbound", "denied", "telegram", "stranger"],
    ]);
    expect(audit.records[0]?.fields.verb).toBe("post");
    expect(audit.records[2]?.fields).toMatchObject({ user: "42", conversation: "42" });
  });

  it("an unknown shape is warned once per channel and shape, and counted every time", () => {
    const logger = new MemoryLogger();
    const ledger = new InboundDropLedger({ audit: new MemoryAuditSink(), logger });
    const slack = ledger.forChannel("slack");
    for (let i = 0; i < 3; i++) slack.record({ reason: "unknown_shape", shape: "app_home_opened" });
    slack.record({ reason: "unknown_shape", shape: "team_join" });
    ledger.forChannel("discord").record({ reason: "unknown_shape", shape: "team_join" });
    const warned = logger.entries.filter((r) => r.level === "warn").map((r) => [r.message, r.fields.shape]);
    expect(warned).toEqual([
      ["slack: an inbound frame of a shape parley does not know was dropped", "app_home_opened"],
      ["slack: an inbound frame of a shape parley does not know was dropped", "team_join"],
      ["discord: an inbound frame of a shape parley does not know was dropped", "team_join"],
    ]);
    expect(ledger.count("slack", "unknown_shape")).toBe(4);
  });

  it("the counts of one tick reach the store as one batch; a failed write is logged, not swallowed", async () => {
    const store = memoryStore();
    const logger = new MemoryLogger();
    const ledger = new InboundDropLedger({ audit: new MemoryAuditSink(), logger, store, now: () => 5 });
    const wecom = ledger.forChannel("wecom");
    for (let i = 0; i < 100; i++) wecom.record({ reason: "duplicate" });
    wecom.record({ reason: "stranger" });
    await ledger.flush();
    expect(store.batches).toEqual([
      [
        { channel: "wecom", reason: "duplicate", count: 100, lastAtMs: 5 },
        { channel: "wecom", reason: "stranger", count: 1, lastAtMs: 5 },
      ],
    ]);
    store.add = async () => {
      throw new Error("disk full");
    };
    wecom.record({ reason: "duplicate" });
    await ledger.flush();
    expect(
      logger.entries.some((r) => r.level === "error" && String(r.fields.error).includes("disk full")),
    ).toBe(true);
    expect(ledger.count("wecom", "duplicate")).toBe(101);
  });

  it("through the gateway's denial window, a flood of one drop is one row now and one count later", async () => {
    const clock = new ManualClock();
    const rows = new MemoryAuditSink();
    const window = new DenialWindowAuditSink(rows, clock, 60_000);
    const ledger = new InboundDropLedger({ audit: window, logger: new MemoryLogger() });
    const teams = ledger.forChannel("teams");
    for (let i = 0; i < 50; i++) teams.record({ reason: "bot_echo", conversation: "a" });
    expect(rows.records).toHaveLength(1);
    await clock.advance(60_000);
    expect(rows.records.map((r) => r.fields.repeated)).toEqual([undefined, 49]);
    expect(ledger.count("teams", "bot_echo")).toBe(50);
  });
});
