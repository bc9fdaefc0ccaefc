/**
 * The per-session tool-Trust grant: what ONE session's tools may skip asking about (not who may
 * connect). In memory only, so an ad-hoc grant dies with the process. The grant has TWO halves and
 * both are load-bearing: the in-memory mapping the driver's autoApproveSession predicate reads, and
 * the session's approval policy set to "auto" in the store, because a spawned subagent reads its
 * parent's policy and never this mapping. Layer: messaging.
 */
import type { AuditSink } from "../security/audit.js";
import type { SessionStore } from "../session/session-store.js";
import type { APPROVAL_AUTO } from "../turn/driver.js";

// Typed against the driver's constant without loading the driver module at runtime.
const POLICY_AUTO: typeof APPROVAL_AUTO = "auto";

/** The store slice the policy half needs. */
export type TrustPolicyStore = Pick<SessionStore, "setApprovalPolicy">;

/**
 * key -> the store holding its policy half. A MAPPING rather than a set, so a revoke can undo the
 * policy half too without its caller handing the store back; private, so every mutation goes
 * through the API and a half-grant is not expressible.
 */
export class SessionTrust {
  private readonly grants = new Map<string, TrustPolicyStore>();
  constructor(private readonly audit?: AuditSink) {}

  isSessionTrusted(key: string): boolean {
    return this.grants.has(key);
  }

  /** A predicate for TurnPolicy.autoApproveSession, read per request so a revoke lands on the next tool. */
  predicate(key: string): () => boolean {
    return () => this.grants.has(key);
  }

  /** Grant. The policy half is written first: if it throws, no in-memory half exists either. */
  addTrustedSession(
    key: string,
    opts: { sessions: TrustPolicyStore; source?: string; caller?: string },
  ): void {
    opts.sessions.setApprovalPolicy(key, POLICY_AUTO);
    this.grants.set(key, opts.sessions);
    this.audit?.log("session_trust.grant", "granted", {
      session: key,
      source: opts.source,
      caller: opts.caller,
    });
  }

  /**
   * Revoke one session. The in-memory half goes first and unconditionally (fail toward asking); a
   * policy write that fails is raised, because subagents would otherwise stay trusted unnoticed.
   */
  revokeTrustedSession(key: string, opts: { source?: string } = {}): boolean {
    const store = this.grants.get(key);
    if (!store) return false;
    this.grants.delete(key);
    this.audit?.log("session_trust.revoke", "revoked", { session: key, source: opts.source });
    // "" is the same value the dashboard's untrust toggle writes.
    store.setApprovalPolicy(key, "");
    return true;
  }

  /** Revoke every grant, both halves. Returns how many were revoked; policy failures are aggregated. */
  clearTrustedSessions(opts: { source?: string } = {}): number {
    const failures: unknown[] = [];
    let count = 0;
    for (const key of [...this.grants.keys()]) {
      try {
        if (this.revokeTrustedSession(key, opts)) count += 1;
      } catch (error) {
        count += 1;
        failures.push(error);
      }
    }
    if (failures.length > 0) {
      throw new AggregateError(
        failures,
        `session trust cleared, but ${failures.length} policy reset(s) failed`,
      );
    }
    return count;
  }

  trustedKeys(): string[] {
    return [...this.grants.keys()];
  }
}
