/**
 * Owner alerts on their own (a manual clock, a recording notifier) and the channel-state table
 * they listen to: when an incident is raised, that it is raised once, told again when it is over,
 * audited, and silent when alerts are off.
 */
import { describe, expect, it } from "vitest";
import { alertText, OwnerAlerts } from "../../src/gateway/ops/alerts.js";
import type { StateChange } from "../../src/gateway/ops/channel-states.js";
import { ChannelStates } from "../../src/gateway/ops/channel-states.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import type { TurnResult } from "../../src/messaging/turn/pipeline.js";
import { ManualClock } from "../helpers/manual-clock.js";

const MIN = 60_000;

function harness(
  settings: Partial<{ enabled: boolean; channelDownMinutes: number; agentFailures: number }> = {},
) {
  const clock = new ManualClock();
  const sent: { text: string; except: string | undefined }[] = [];
  const audit = new MemoryAuditSink();
  const logger = new MemoryLogger();
  let reachable = 1;
  const alerts = new OwnerAlerts({
    settings: { enabled: true, channelDownMinutes: 5, agentFailures: 3, ...settings },
    clock,
    notify: async (text, except) => {
      sent.push({ text, except });
      return reachable;
    },
    audit,
    logger,
  });
  const change = (name: string, to: StateChange["to"], reason?: string): void =>
    alerts.channelChanged({ name, from: undefined, to, at: clock.now(), ...(reason ? { reason } : {}) });
  const turn = (stopReason: string, ok = stopReason === "end_turn"): void =>
    alerts.turnEnded({ stopReason, ok, channelType: "webchat" } as TurnResult);
  return {
    clock,
    sent,
    audit,
    logger,
    alerts,
    change,
    turn,
    unreachable: () => {
      reachable = 0;
    },
    /** Let the notifier's promise and the audit after it run. */
    flush: () => alerts.close(),
  };
}

describe("channel down", () => {
  it("is told after the configured minutes, once, on the other channels, and its return once", async () => {
    const h = harness();
    h.change("telegram", "disconnected", "Bot API error 502");
    await h.clock.advance(5 * MIN - 1);
    expect(h.sent).toEqual([]);
    await h.clock.advance(1);
    expect(h.sent).toEqual([
      { text: alertText.channelDown("telegram", 5, "Bot API error 502"), except: "telegram" },
    ]);
    // Trying again is not being back; more time down says nothing new.
    h.change("telegram", "connecting");
    h.change("telegram", "disconnected", "Bot API error 502");
    await h.clock.advance(60 * MIN);
    expect(h.sent).toHaveLength(1);
    h.change("telegram", "connected");
    h.change("telegram", "connected");
    expect(h.sent.map((s) => s.text)).toEqual([
      alertText.channelDown("telegram", 5, "Bot API error 502"),
      alertText.channelBack("telegram", 65 * MIN),
    ]);
    expect(h.sent[1]?.except).toBe("telegram");
    await h.flush();
    expect(h.audit.find("ops.alert").map((r) => [r.outcome, r.fields.phase, r.fields.channel])).toEqual([
      ["sent", "raised", "telegram"],
      ["sent", "recovered", "telegram"],
    ]);
  });

  it("a channel back within the minutes is never mentioned, and a later outage is a new incident", async () => {
    const h = harness({ channelDownMinutes: 2 });
    h.change("discord", "disconnected", "gateway closed (4000)");
    await h.clock.advance(2 * MIN - 1000);
    h.change("discord", "connected");
    await h.clock.advance(10 * MIN);
    expect(h.sent).toEqual([]);
    h.change("discord", "disconnected", "gateway closed (4000)");
    await h.clock.advance(2 * MIN);
    expect(h.sent.map((s) => s.text)).toEqual([alertText.channelDown("discord", 2, "gateway closed (4000)")]);
  });

  it("counts from when the channel went down, not from when it was heard of", async () => {
    const h = harness();
    const wentDown = h.clock.now();
    await h.clock.advance(3 * MIN);
    h.alerts.channelChanged({ name: "slack", from: undefined, to: "disconnected", at: wentDown });
    await h.clock.advance(2 * MIN - 1);
    expect(h.sent).toEqual([]);
    await h.clock.advance(1);
    expect(h.sent).toHaveLength(1);
  });

  it("a channel that stops (or moves to another gateway) while down raises nothing", async () => {
    const h = harness();
    h.change("whatsapp", "disconnected", "connection closed (428)");
    h.alerts.channelRemoved("whatsapp");
    await h.clock.advance(30 * MIN);
    expect(h.sent).toEqual([]);
    expect(h.clock.pending).toBe(0);
  });

  it("nobody to tell is audited as refused and logged as an error", async () => {
    const h = harness();
    h.unreachable();
    h.change("telegram", "disconnected", "token rejected");
    await h.clock.advance(5 * MIN);
    await h.flush();
    expect(h.audit.find("ops.alert").map((r) => [r.outcome, r.fields.reason, r.fields.delivered])).toEqual([
      ["refused", "no_owner_reachable", 0],
    ]);
    expect(h.logger.entries.some((e) => e.level === "error" && e.message.includes("no channel owner"))).toBe(
      true,
    );
  });
});

describe("agent failing", () => {
  it("is told at the configured failures in a row, once, and when a turn succeeds again, once", async () => {
    const h = harness();
    h.turn("error");
    h.turn("error");
    h.turn("end_turn");
    h.turn("error");
    h.turn("error");
    // A /stop is neither a failure nor a success.
    h.turn("cancelled", true);
    expect(h.sent).toEqual([]);
    h.turn("error");
    h.turn("error");
    h.turn("error");
    expect(h.sent.map((s) => s.text)).toEqual([alertText.agentFailing(3)]);
    expect(h.sent[0]?.except).toBeUndefined();
    h.turn("end_turn");
    h.turn("end_turn");
    expect(h.sent.map((s) => s.text)).toEqual([alertText.agentFailing(3), alertText.agentBack()]);
    await h.flush();
    expect(h.audit.find("ops.alert", "sent").map((r) => [r.fields.incident, r.fields.phase])).toEqual([
      ["agent_failing", "raised"],
      ["agent_failing", "recovered"],
    ]);
  });

  it("honours alerts.agentFailures", () => {
    const h = harness({ agentFailures: 1 });
    h.turn("error");
    expect(h.sent.map((s) => s.text)).toEqual([alertText.agentFailing(1)]);
  });
});

describe("unclean stop, and alerts off", () => {
  it("an unclean stop is told once, naming the pid", async () => {
    const h = harness();
    h.alerts.uncleanStop(4711);
    await h.flush();
    expect(h.sent.map((s) => s.text)).toEqual([alertText.uncleanStop(4711)]);
    expect(h.sent[0]?.text).toContain("pid 4711");
    expect(h.audit.find("ops.alert", "sent")[0]?.fields).toMatchObject({
      incident: "unclean_stop",
      pid: 4711,
    });
  });

  it("alerts.enabled false tells nobody anything", async () => {
    const h = harness({ enabled: false });
    h.change("telegram", "disconnected", "x");
    for (let i = 0; i < 5; i += 1) h.turn("error");
    h.alerts.uncleanStop(1);
    await h.clock.advance(60 * MIN);
    await h.flush();
    expect(h.sent).toEqual([]);
    expect(h.audit.records).toEqual([]);
  });
});

describe("the channel-state table", () => {
  function table() {
    const clock = new ManualClock();
    const logger = new MemoryLogger();
    const states = new ChannelStates(clock, logger);
    const changes: StateChange[] = [];
    states.onChange((c) => changes.push(c));
    return { clock, logger, states, changes };
  }

  it("a channel that never reports is connected once started; one that reports is what it says", () => {
    const t = table();
    t.states.forChannel("teams");
    const tg = t.states.forChannel("telegram");
    tg.connecting();
    expect(t.states.list()).toEqual([]);
    t.states.started("teams");
    t.states.started("telegram");
    expect(t.states.list().map((c) => [c.name, c.state])).toEqual([
      ["teams", "connected"],
      ["telegram", "connecting"],
    ]);
    tg.connected();
    tg.disconnected("Bot API error 502");
    tg.disconnected("ECONNREFUSED");
    tg.connecting();
    tg.connected();
    expect(t.changes.map((c) => [c.name, c.from ?? "-", c.to, c.reason ?? ""])).toEqual([
      ["teams", "-", "connected", ""],
      ["telegram", "-", "connecting", ""],
      ["telegram", "connecting", "connected", ""],
      ["telegram", "connected", "disconnected", "Bot API error 502"],
      ["telegram", "disconnected", "connecting", "ECONNREFUSED"],
      ["telegram", "connecting", "connected", ""],
    ]);
    // Back from disconnected (through connecting) is one reconnect; the first connect is none.
    expect(t.states.list().find((c) => c.name === "telegram")?.reconnects).toBe(1);
  });

  it("a removed channel's old port changes nothing, and a listener's failure is logged", () => {
    const t = table();
    const old = t.states.forChannel("discord");
    t.states.started("discord");
    t.states.remove("discord");
    old.disconnected("late");
    expect(t.states.list()).toEqual([]);
    t.states.onChange(() => {
      throw new Error("listener broke");
    });
    t.states.forChannel("discord");
    t.states.started("discord");
    expect(t.states.state("discord")).toBe("connected");
    expect(t.logger.entries.some((e) => e.level === "error" && e.message.includes("listener failed"))).toBe(
      true,
    );
  });
});
