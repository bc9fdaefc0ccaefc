import { describe, expect, it } from "vitest";
import { SessionTrust } from "../../../src/messaging/approval/session-trust.js";
import { MemoryAuditSink } from "../../../src/messaging/security/audit.js";
import { MemorySessionStore } from "../../../src/messaging/session/session-store.js";
import { APPROVAL_AUTO } from "../../../src/messaging/turn/driver.js";

const a = "telegram:agent:direct:1";
const b = "telegram:agent:direct:2";

describe("SessionTrust", () => {
  it("a grant sets BOTH halves: the mapping the driver reads and the policy a subagent reads", () => {
    const store = new MemorySessionStore();
    const audit = new MemoryAuditSink();
    const trust = new SessionTrust(audit);
    trust.addTrustedSession(a, { sessions: store, source: "telegram", caller: "u1" });
    expect(trust.isSessionTrusted(a)).toBe(true);
    expect(store.approvalPolicyOf(a)).toBe(APPROVAL_AUTO);
    expect(trust.isSessionTrusted(b)).toBe(false);
    expect(audit.find("session_trust.grant", "granted")[0]?.fields).toMatchObject({
      session: a,
      caller: "u1",
    });
  });

  it("clearTrustedSessions undoes both halves without the caller handing the store back", () => {
    const store = new MemorySessionStore();
    const other = new MemorySessionStore();
    const audit = new MemoryAuditSink();
    const trust = new SessionTrust(audit);
    trust.addTrustedSession(a, { sessions: store });
    trust.addTrustedSession(b, { sessions: other });
    expect(trust.clearTrustedSessions()).toBe(2);
    expect(trust.isSessionTrusted(a) || trust.isSessionTrusted(b)).toBe(false);
    expect(store.approvalPolicyOf(a)).toBe("");
    expect(other.approvalPolicyOf(b)).toBe("");
    expect(audit.find("session_trust.revoke", "revoked")).toHaveLength(2);
  });

  it("the driver predicate is read per call, so a revoke lands on the next tool", () => {
    const store = new MemorySessionStore();
    const trust = new SessionTrust();
    const autoApproveSession = trust.predicate(a);
    expect(autoApproveSession()).toBe(false);
    trust.addTrustedSession(a, { sessions: store });
    expect(autoApproveSession()).toBe(true);
    expect(trust.revokeTrustedSession(a)).toBe(true);
    expect(autoApproveSession()).toBe(false);
    expect(trust.revokeTrustedSession(a)).toBe(false);
  });

  it("a failed policy write leaves no half-grant behind", () => {
    const trust = new SessionTrust();
    const broken = {
      setApprovalPolicy: () => {
        throw new Error("store closed");
      },
    };
    expect(() => trust.addTrustedSession(a, { sessions: broken })).toThrow("store closed");
    expect(trust.isSessionTrusted(a)).toBe(false);
  });

  it("a failed policy reset still drops the in-memory half, and is raised rather than swallowed", () => {
    const trust = new SessionTrust();
    let fail = false;
    const flaky = {
      setApprovalPolicy: () => {
        if (fail) throw new Error("disk");
      },
    };
    const store = new MemorySessionStore();
    trust.addTrustedSession(a, { sessions: flaky });
    trust.addTrustedSession(b, { sessions: store });
    fail = true;
    expect(() => trust.clearTrustedSessions()).toThrow(AggregateError);
    expect(trust.trustedKeys()).toEqual([]);
    expect(store.approvalPolicyOf(b)).toBe("");
  });
});
