import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { GrantCaller, GrantChange } from "../../../src/messaging/approval/grant.js";
import {
  AutoApproveGrant,
  formatTtl,
  GRANT_LAPSED,
  GRANT_SCOPE_NOTE,
  parseSimpleDuration,
} from "../../../src/messaging/approval/grant.js";
import type { Clock } from "../../../src/messaging/base/clock.js";
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

function setup(extra: Partial<ConstructorParameters<typeof AutoApproveGrant>[0]> = {}) {
  const clock = new FakeClock();
  const audit = new MemoryAuditSink();
  const grant = new AutoApproveGrant({ audit, clock, ...extra });
  return { clock, audit, grant };
}

describe("AutoApproveGrant", () => {
  it("arms for the default TTL, answers per read, and expires on the clock", () => {
    const { clock, audit, grant } = setup();
    expect(grant.isActive()).toBe(false);
    const armed = grant.arm({ source: "telegram", caller: "u1" });
    expect(armed).toMatchObject({ ttlMs: HOUR, renewed: false });
    expect(grant.isActive()).toBe(true);
    expect(audit.find("auto_approve", "granted")[0]?.fields).toMatchObject({
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
    expect(audit.find("auto_approve", "expired")).toHaveLength(1);
    expect(grant.isActive()).toBe(false);
    expect(audit.find("auto_approve", "expired")).toHaveLength(1);
  });

  it("audits a lapse nobody asked about and tells the holder on their channel", () => {
    const told: string[] = [];
    const { clock, audit, grant } = setup();
    grant.arm({ ttlMs: 10 * MIN, source: "webchat", caller: "op", notify: (t) => void told.push(t) });
    clock.advance(10 * MIN);
    expect(audit.find("auto_approve", "expired")).toHaveLength(1);
    expect(told).toEqual([GRANT_LAPSED]);
    expect(clock.due.size).toBe(0);
  });

  it("renews from now, replacing the old expiry", () => {
    const { clock, audit, grant } = setup();
    grant.arm({ ttlMs: 10 * MIN, source: "s", caller: "c" });
    clock.advance(9 * MIN);
    expect(grant.arm({ ttlMs: 10 * MIN, source: "s", caller: "c" }).renewed).toBe(true);
    clock.advance(5 * MIN);
    expect(grant.isActive()).toBe(true);
    expect(grant.remainingMs()).toBe(5 * MIN);
    clock.advance(5 * MIN);
    expect(grant.isActive()).toBe(false);
    expect(audit.find("auto_approve", "expired")).toHaveLength(1);
    expect(audit.find("auto_approve", "granted").map((r) => r.fields.renewed)).toEqual([false, true]);
  });

  it("clamps a TTL to the ceiling and rejects a non-positive one", () => {
    const { grant } = setup({ maxTtlMs: 2 * HOUR });
    expect(grant.arm({ ttlMs: 100 * HOUR, source: "s", caller: "c" }).ttlMs).toBe(2 * HOUR);
    expect(() => grant.arm({ ttlMs: 0, source: "s", caller: "c" })).toThrow(RangeError);
  });

  it("disarm is audited once and cancels the expiry timer", () => {
    const { clock, audit, grant } = setup();
    grant.arm({ source: "s", caller: "c" });
    expect(grant.disarm({ source: "s", caller: "c" })).toBe(true);
    expect(grant.disarm({ source: "s", caller: "c" })).toBe(false);
    expect(audit.find("auto_approve", "revoked")).toHaveLength(1);
    expect(clock.due.size).toBe(0);
  });

  it("describe() says whether it is on and until when", () => {
    const { grant } = setup();
    expect(grant.describe()).toBe("off");
    grant.arm({ ttlMs: 30 * MIN, source: "telegram", caller: "u1" });
    expect(grant.describe()).toMatch(/^ON until \d\d:\d\d UTC \(30m left, armed on telegram\)$/);
  });
});

describe("one grant across gateways (onChange / adopt)", () => {
  it("reports each arm and disarm made here, in order, and not a lapse", () => {
    const { clock, grant } = setup();
    const changes: GrantChange[] = [];
    grant.onChange((c) => void changes.push(c));
    grant.arm({ ttlMs: 10 * MIN, source: "slack", caller: "U1" });
    grant.disarm({ source: "teams", caller: "a@x" });
    grant.arm({ ttlMs: 5 * MIN, source: "slack", caller: "U1" });
    clock.advance(5 * MIN);
    expect(changes.map((c) => c.state?.source ?? null)).toEqual(["slack", null, "slack"]);
    expect(changes[0]?.state).toEqual({ expiresAtMs: 1_000_000 + 10 * MIN, source: "slack", caller: "U1" });
    // Strictly increasing, even within one millisecond.
    expect(changes[1]?.atMs).toBeGreaterThan(changes[0]?.atMs ?? 0);
    expect(changes[2]?.atMs).toBeGreaterThan(changes[1]?.atMs ?? 0);
  });

  it("an adopted grant is active to the same expiry, but audits and tells nothing here", () => {
    const { clock, audit, grant } = setup();
    const changes: GrantChange[] = [];
    grant.onChange((c) => void changes.push(c));
    grant.adopt({ state: { expiresAtMs: clock.t + 10 * MIN, source: "slack", caller: "U1" }, atMs: clock.t });
    expect(grant.isActive()).toBe(true);
    expect(grant.describe()).toMatch(/armed on slack/);
    clock.advance(10 * MIN);
    expect(grant.isActive()).toBe(false);
    expect(audit.records).toEqual([]);
    // Adoption is never echoed back (it would be written again by the gateway that adopted it).
    expect(changes).toEqual([]);
  });

  it("the latest change wins: an older one is ignored, a later disarm ends a grant armed here quietly", () => {
    const told: string[] = [];
    const { clock, audit, grant } = setup();
    grant.arm({ ttlMs: 10 * MIN, source: "teams", caller: "a@x", notify: (t) => void told.push(t) });
    // A change made elsewhere before this arm (the other gateway's tick read it late): ignored.
    grant.adopt({ state: null, atMs: clock.t - 1 });
    expect(grant.isActive()).toBe(true);
    clock.t += 1000;
    grant.adopt({ state: null, atMs: clock.t });
    expect(grant.isActive()).toBe(false);
    clock.advance(10 * MIN);
    // Revoked elsewhere (audited there): no lapse row and no lapse notice here.
    expect(audit.find("auto_approve", "expired")).toEqual([]);
    expect(told).toEqual([]);
    // An expired grant adopted is nothing.
    grant.adopt({ state: { expiresAtMs: clock.t - 1, source: "slack", caller: "U1" }, atMs: clock.t + 1 });
    expect(grant.isActive()).toBe(false);
  });
});

describe("/yolo", () => {
  const owner: GrantCaller = {
    source: "telegram",
    caller: "u1",
    owner: true,
    direct: true,
    command: "/yolo",
  };

  it("status when off names how to turn it on and for how long (to the owner)", () => {
    const { grant } = setup();
    expect(grant.command("", owner)).toBe("Auto-approve is off. Send `/yolo on` to enable it for 1h.");
    expect(grant.command("status", owner)).toBe(grant.command("", owner));
  });

  it("on: arms with the scope note, records the caller and the channel", () => {
    const { grant, audit } = setup();
    const reply = grant.command("on", owner);
    expect(reply).toBe(`⚠️ Auto-approve is ON for 1h. ${GRANT_SCOPE_NOTE} Send \`/yolo off\` to turn it off.`);
    expect(GRANT_SCOPE_NOTE.split(/[.!?](\s|$)/).filter((s) => s.trim()).length).toBe(1);
    expect(audit.find("auto_approve", "granted")[0]?.fields).toMatchObject({
      source: "telegram",
      caller: "u1",
    });
  });

  it("durations: on 30m, a bare 2h renews, and a TTL past the ceiling is capped", () => {
    const { grant } = setup();
    expect(grant.command("on 30m", owner)).toContain("ON for 30m.");
    expect(grant.command("2h", owner)).toContain("renewed for 2h from now.");
    expect(grant.command("on 3d", owner)).toContain("renewed for 1d from now. (capped at 1d)");
  });

  it("a non-owner, or the owner outside a direct conversation, cannot arm it; each refusal audited", () => {
    const { grant, audit } = setup();
    expect(grant.command("on", { ...owner, caller: "u2", owner: false })).toBe(
      "Only the owner of this bot can switch auto-approve on.",
    );
    expect(grant.command("on 2h", { ...owner, direct: false })).toBe(
      "Auto-approve can only be switched on in a direct conversation with the bot.",
    );
    expect(grant.isActive()).toBe(false);
    expect(audit.find("auto_approve", "refused").map((r) => r.fields)).toEqual([
      { source: "telegram", caller: "u2", reason: "not_owner" },
      { source: "telegram", caller: "u1", reason: "not_direct" },
    ]);
    // Status stays readable; it names no way to arm for someone who cannot.
    expect(grant.command("status", { ...owner, owner: false })).toBe("Auto-approve is off.");
  });

  it("off is the safe direction: any admitted user may, and it is audited with who", () => {
    const { grant, audit } = setup();
    grant.command("on", owner);
    expect(grant.command("OFF", { ...owner, caller: "u2", owner: false })).toBe(
      "✅ Auto-approve is off. Tools will ask for approval again.",
    );
    expect(grant.command("off", owner)).toBe("Auto-approve was already off.");
    expect(audit.find("auto_approve", "revoked")[0]?.fields).toMatchObject({
      source: "telegram",
      caller: "u2",
    });
  });

  it("status while on says until when", () => {
    const { grant, clock } = setup();
    grant.command("on 1h", owner);
    clock.advance(15 * MIN);
    expect(grant.command("status", owner)).toMatch(
      /^⚠️ Auto-approve is ON until \d\d:\d\d UTC \(45m left, armed on telegram\)\./,
    );
  });

  it("anything else answers with usage and arms nothing", () => {
    const { grant } = setup();
    for (const arg of ["maybe", "on forever", "off now", "on 1h extra", "0m"]) {
      expect(grant.command(arg, owner)).toBe("Usage: `/yolo on [30m|2h]` | `/yolo off` | `/yolo status`");
    }
    expect(grant.isActive()).toBe(false);
  });

  it("spells the command the way the channel does", () => {
    const { grant } = setup();
    expect(grant.command("", { ...owner, command: "!yolo" })).toBe(
      "Auto-approve is off. Send `!yolo on` to enable it for 1h.",
    );
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
});
