import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DashboardTtlError,
  DEFAULT_DASHBOARD_TTL_SECONDS,
  formatTtl,
  listsHostState,
  MAX_DASHBOARD_TTL_SECONDS,
  normalizeTaskArg,
  type OverrideGrant,
  parseDashboardTtl,
  parseSimpleDuration,
  runYoloCommand,
  SafetyOverride,
  sharedHelpLines,
  YOLO_PHRASING_MARKDOWN,
  YOLO_PHRASING_PLAIN,
  YOLO_SCOPE_NOTE,
} from "../../../src/messaging/approval/grant.js";
import type { Clock } from "../../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../../src/messaging/security/audit.js";

const MIN = 60_000;
const HOUR = 60 * MIN;

/** A clock whose time moves only when told; due timers fire on advance. */
class FakeClock implements Clock {
  t = 1_000_000;
  private seq = 0;
  readonly due = new Map<number, { at: number; fn: () => void }>();
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    this.seq += 1;
    this.due.set(this.seq, { at: this.t + ms, fn });
    return this.seq;
  }
  clearTimeout(handle: unknown): void {
    this.due.delete(handle as number);
  }
  advance(ms: number): void {
    this.t += ms;
    for (const [id, timer] of [...this.due].sort((x, y) => x[1].at - y[1].at)) {
      if (timer.at > this.t) continue;
      this.due.delete(id);
      timer.fn();
    }
  }
}

function override(extra: Partial<ConstructorParameters<typeof SafetyOverride>[0]> = {}) {
  const clock = new FakeClock();
  const audit = new MemoryAuditSink();
  const grant = new SafetyOverride({ audit, clock, ...extra });
  return { clock, audit, grant };
}

describe("SafetyOverride", () => {
  it("arms for the default TTL, answers per read, and expires on the clock", () => {
    const { clock, audit, grant } = override();
    expect(grant.isActive()).toBe(false);
    const armed = grant.arm({ source: "telegram", caller: "u1" });
    expect(armed).toMatchObject({ ttlMs: HOUR, renewed: false });
    expect(grant.isActive()).toBe(true);
    expect(audit.find("safety_override", "granted")[0]?.fields).toMatchObject({
      source: "telegram",
      caller: "u1",
      ttl_s: 3600,
      renewed: false,
    });
    clock.t += HOUR - 1;
    expect(grant.isActive()).toBe(true);
    clock.t += 1;
    // No timer has fired yet: the per-read check alone is enough to be correct.
    expect(grant.isActive()).toBe(false);
    expect(audit.find("safety_override", "expired")).toHaveLength(1);
    expect(grant.isActive()).toBe(false);
    expect(audit.find("safety_override", "expired")).toHaveLength(1);
  });

  it("audits and announces a lapse nobody asked about", () => {
    const lapsed: OverrideGrant[] = [];
    const { clock, audit, grant } = override({ onExpire: (g) => lapsed.push(g) });
    grant.arm({ ttlMs: 10 * MIN, source: "dashboard", caller: "op" });
    clock.advance(10 * MIN);
    expect(audit.find("safety_override", "expired")).toHaveLength(1);
    expect(lapsed).toEqual([{ expiresAtMs: clock.t, source: "dashboard", caller: "op" }]);
    expect(clock.due.size).toBe(0);
  });

  it("renews from now, replacing the old expiry", () => {
    const { clock, audit, grant } = override();
    grant.arm({ ttlMs: 10 * MIN, source: "s", caller: "c" });
    clock.advance(9 * MIN);
    expect(grant.arm({ ttlMs: 10 * MIN, source: "s", caller: "c" }).renewed).toBe(true);
    clock.advance(5 * MIN);
    expect(grant.isActive()).toBe(true);
    expect(grant.remainingMs()).toBe(5 * MIN);
    clock.advance(5 * MIN);
    expect(grant.isActive()).toBe(false);
    expect(audit.find("safety_override", "expired")).toHaveLength(1);
    expect(audit.find("safety_override", "granted").map((r) => r.fields.renewed)).toEqual([false, true]);
  });

  it("clamps a TTL to the ceiling and rejects a non-positive one", () => {
    const { grant } = override({ maxTtlMs: 2 * HOUR });
    expect(grant.arm({ ttlMs: 100 * HOUR, source: "s", caller: "c" }).ttlMs).toBe(2 * HOUR);
    expect(() => grant.arm({ ttlMs: 0, source: "s", caller: "c" })).toThrow(RangeError);
  });

  it("disarm is audited once and cancels the expiry timer", () => {
    const { clock, audit, grant } = override();
    grant.arm({ source: "s", caller: "c" });
    expect(grant.disarm({ source: "s", caller: "c" })).toBe(true);
    expect(grant.disarm({ source: "s", caller: "c" })).toBe(false);
    expect(audit.find("safety_override", "revoked")).toHaveLength(1);
    expect(clock.due.size).toBe(0);
  });

  it("persists the expiry so a restart inside the window keeps the grant", () => {
    let saved: OverrideGrant | null = null;
    const persistence = {
      load: () => saved,
      save: (g: OverrideGrant | null) => {
        saved = g;
      },
    };
    const first = override({ persistence });
    first.grant.arm({ ttlMs: HOUR, source: "dashboard", caller: "op" });
    expect(saved).toMatchObject({ source: "dashboard" });

    const audit = new MemoryAuditSink();
    const clock = new FakeClock();
    clock.t = first.clock.t + 30 * MIN;
    const restarted = new SafetyOverride({ audit, clock, persistence });
    expect(restarted.isActive()).toBe(true);
    expect(restarted.remainingMs()).toBe(30 * MIN);
    expect(audit.find("safety_override", "granted")[0]?.fields.reason).toBe("restored");
    restarted.disarm({ source: "telegram", caller: "u" });
    expect(saved).toBeNull();
  });

  it("a grant that lapsed while stopped is audited as expired and cleared", () => {
    let saved: OverrideGrant | null = { expiresAtMs: 5, source: "dashboard", caller: "op" };
    const { grant, audit } = override({
      persistence: {
        load: () => saved,
        save: (g) => {
          saved = g;
        },
      },
    });
    expect(grant.isActive()).toBe(false);
    expect(audit.find("safety_override", "expired")[0]?.fields.reason).toBe("while_stopped");
    expect(saved).toBeNull();
  });

  it("an unreadable persisted grant starts disarmed, loudly", () => {
    const logger = new MemoryLogger();
    const { grant, audit } = override({
      logger,
      persistence: {
        load: () => {
          throw new Error("bad json");
        },
        save: () => {},
      },
    });
    expect(grant.isActive()).toBe(false);
    expect(audit.find("safety_override", "failed")).toHaveLength(1);
    expect(logger.entries.some((e) => e.level === "error")).toBe(true);
  });

  it("a failed save is logged and audited, never swallowed", async () => {
    const logger = new MemoryLogger();
    const { grant, audit } = override({
      logger,
      persistence: { load: () => null, save: () => Promise.reject(new Error("disk")) },
    });
    grant.arm({ source: "s", caller: "c" });
    await new Promise((r) => setImmediate(r));
    expect(grant.isActive()).toBe(true);
    expect(audit.find("safety_override", "failed")[0]?.fields.reason).toBe("persist_failed");
    expect(logger.entries.some((e) => e.level === "error")).toBe(true);
  });
});

describe("runYoloCommand", () => {
  const base = (grant: SafetyOverride) => ({
    override: grant,
    source: "telegram",
    caller: "u1",
    phrasing: YOLO_PHRASING_PLAIN,
  });

  it("status when off names how to turn it on and for how long", () => {
    const { grant } = override();
    expect(runYoloCommand("", base(grant))).toBe("Auto-approve is off. Send /yolo on to enable it for 1h.");
    expect(runYoloCommand("status", base(grant))).toBe(runYoloCommand("", base(grant)));
  });

  it("on: arms, names the scope in one sentence, and says how to stop", () => {
    const { grant } = override();
    const reply = runYoloCommand("on", base(grant));
    expect(reply).toBe(`⚠️ Auto-approve is ON for 1h. ${YOLO_SCOPE_NOTE} Send /yolo off to turn it off.`);
    expect(grant.isActive()).toBe(true);
    expect(YOLO_SCOPE_NOTE.split(/[.!?](\s|$)/).filter((s) => s.trim()).length).toBe(1);
  });

  it("on <ttl> and a bare <ttl> set the duration; a second on renews", () => {
    const { grant, clock } = override();
    expect(runYoloCommand("on 30m", base(grant))).toContain("ON for 30m.");
    clock.advance(20 * MIN);
    expect(runYoloCommand("2h", base(grant))).toContain("renewed for 2h from now.");
    expect(grant.remainingMs()).toBe(2 * HOUR);
  });

  it("says when a requested TTL was capped", () => {
    const { grant } = override();
    expect(runYoloCommand("on 3d", base(grant))).toContain("ON for 1d. (capped at 1d)");
  });

  it("status when on reports the time left", () => {
    const { grant, clock } = override();
    runYoloCommand("on 1h", base(grant));
    clock.advance(15 * MIN);
    expect(runYoloCommand("status", base(grant))).toBe(
      `⚠️ Auto-approve is ON (45m left). ${YOLO_SCOPE_NOTE} Send /yolo off to turn it off.`,
    );
  });

  it("off, and off again", () => {
    const { grant, audit } = override();
    runYoloCommand("on", base(grant));
    expect(runYoloCommand("OFF", base(grant))).toBe(
      "✅ Auto-approve is off. Tools will ask for approval again.",
    );
    expect(runYoloCommand("off", base(grant))).toBe("Auto-approve was already off.");
    expect(audit.find("safety_override", "revoked")[0]?.fields).toMatchObject({
      source: "telegram",
      caller: "u1",
    });
  });

  it("anything else answers with usage and arms nothing", () => {
    const { grant } = override();
    for (const arg of ["maybe", "on forever", "off now", "on 1h extra", "0m"]) {
      expect(runYoloCommand(arg, base(grant))).toBe(`Usage: ${YOLO_PHRASING_PLAIN.usage}`);
    }
    expect(grant.isActive()).toBe(false);
  });

  it("spellings are data: the markdown phrasing changes only the command spans", () => {
    const { grant } = override();
    const reply = runYoloCommand("", { ...base(grant), phrasing: YOLO_PHRASING_MARKDOWN });
    expect(reply).toBe("Auto-approve is off. Send `/yolo on` to enable it for 1h.");
  });
});

describe("durations", () => {
  it("parseSimpleDuration", () => {
    expect(parseSimpleDuration("30m")).toBe(1800);
    expect(parseSimpleDuration("1h30m")).toBe(5400);
    expect(parseSimpleDuration("45")).toBe(2700);
    expect(parseSimpleDuration("2d")).toBe(172_800);
    expect(parseSimpleDuration("soon")).toBeNull();
    expect(parseSimpleDuration("-5m")).toBeNull();
  });

  it("formatTtl", () => {
    expect(formatTtl(0)).toBe("0s");
    expect(formatTtl(45)).toBe("45s");
    expect(formatTtl(90)).toBe("1m 30s");
    expect(formatTtl(3600)).toBe("1h");
    expect(formatTtl(5400.9)).toBe("1h 30m");
    expect(formatTtl(90_061)).toBe("1d 1h 1m 1s");
    expect(formatTtl(-3)).toBe("0s");
  });

  it("formatTtl round-trips through parseSimpleDuration (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 999_999 }), (seconds) => {
        expect(parseSimpleDuration(formatTtl(seconds).replace(/ /g, ""))).toBe(seconds);
      }),
    );
  });

  it("parseDashboardTtl: default for no argument, the injected parser otherwise, capped", () => {
    const seen: string[] = [];
    const parseDuration = (text: string) => {
      seen.push(text);
      const s = parseSimpleDuration(text);
      if (s === null) throw new Error("bad duration");
      return s;
    };
    expect(parseDashboardTtl(undefined, { parseDuration })).toBe(DEFAULT_DASHBOARD_TTL_SECONDS);
    expect(parseDashboardTtl("  ", { parseDuration })).toBe(DEFAULT_DASHBOARD_TTL_SECONDS);
    expect(parseDashboardTtl("2h", { parseDuration })).toBe(7200);
    expect(parseDashboardTtl("9d", { parseDuration })).toBe(MAX_DASHBOARD_TTL_SECONDS);
    expect(parseDashboardTtl("10m", { parseDuration, maxSeconds: 300 })).toBe(300);
    expect(seen).toEqual(["2h", "9d", "10m"]);
    expect(() => parseDashboardTtl("whenever", { parseDuration })).toThrow(DashboardTtlError);
    expect(() => parseDashboardTtl("x", { parseDuration: () => 0 })).toThrow(/must be positive/);
  });
});

describe("listsHostState", () => {
  it.each([
    ["/spawn", "list", true],
    ["spawn", "status", true],
    ["/spawn", "write a poem", false],
    ["/bg", "list", true],
    ["/task", "status", true],
    ["/task", "run status", true],
    ["/task", "run ./spec.md", false],
    ["/task", "cancel", false],
    ["/sessions", "", true],
    ["!cron", "", true],
    ["/stop", "", false],
    ["/compact", "", false],
  ])("%s %s -> %s", (command, arg, expected) => {
    expect(listsHostState(command, arg)).toBe(expected);
  });

  it("normalizes the task argument the same way the reply builder must", () => {
    expect(normalizeTaskArg("  run   status ")).toBe("status");
    expect(normalizeTaskArg("running")).toBe("running");
  });
});

describe("shared help text", () => {
  it("uses the channel's sigil", () => {
    expect(sharedHelpLines("!").every((line) => line.startsWith("!"))).toBe(true);
    expect(sharedHelpLines().some((line) => line.startsWith("/yolo"))).toBe(true);
  });
});
