import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ApprovalRequest } from "../../../src/messaging/approval/approvals.js";
import {
  PendingApprovals,
  parseTypedVerdict,
  RECEIPT_EXPIRED,
  TextReplyApprovalDecider,
  WidgetApprovalDecider,
} from "../../../src/messaging/approval/approvals.js";
import { MemoryAuditSink } from "../../../src/messaging/security/audit.js";

const request = (requestId = "r1", sessionKey = "web:c1"): ApprovalRequest => ({
  sessionKey,
  requestId,
  toolCallId: "t1",
  toolTitle: "Run tests",
  toolPurpose: "",
  toolKind: "execute",
  options: [],
});

describe("PendingApprovals", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("a stale, mismatched or missing nonce never approves (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.option(fc.string(), { nil: undefined }),
        fc.boolean(),
        async (presented, settleFirst) => {
          const reg = new PendingApprovals({ timeoutMs: 1000 });
          const ticket = reg.open("s", "r", {});
          if (settleFirst) reg.resolve("s", "r", ticket.nonce, "deny"); // makes any later press stale
          const outcome = reg.resolve("s", "r", presented ?? null, "approve");
          if (!settleFirst && presented === ticket.nonce) return; // the one legitimate case
          expect(outcome).toBe("stale");
          vi.advanceTimersByTime(1000);
          expect(await ticket.verdict).toBe("deny");
        },
      ),
      { numRuns: 200 },
    );
  });

  it("the right nonce approves exactly once", async () => {
    const reg = new PendingApprovals();
    const t = reg.open("s", "r");
    expect(reg.resolve("s", "r", t.nonce, "approve")).toBe("resolved");
    expect(reg.resolve("s", "r", t.nonce, "deny")).toBe("stale");
    expect(await t.verdict).toBe("approve");
  });

  it("matches checks a nonce without settling, auditing or approving anything", async () => {
    const audit = new MemoryAuditSink();
    const reg = new PendingApprovals({ audit });
    const t = reg.open("s", "r");
    expect(reg.matches("s", "r", `${t.nonce}x`)).toBe(false);
    expect(reg.matches("s", "other", t.nonce)).toBe(false);
    expect(reg.matches("s", "r", t.nonce)).toBe(true);
    expect(reg.isOpen("s", "r")).toBe(true);
    expect(audit.records).toEqual([]);
    expect(reg.resolve("s", "r", t.nonce, "deny")).toBe("resolved");
    expect(reg.matches("s", "r", t.nonce)).toBe(false);
    expect(await t.verdict).toBe("deny");
  });

  it("keys by session AND request id", async () => {
    const reg = new PendingApprovals();
    const a = reg.open("s1", "r");
    reg.open("s2", "r");
    expect(reg.resolve("s2", "r", a.nonce, "approve")).toBe("stale");
  });

  it("denies on timeout after announcing it; a throwing notice is still a deny", async () => {
    const audit = new MemoryAuditSink();
    const errors: unknown[] = [];
    const reg = new PendingApprovals({ audit, timeoutMs: 5000, onError: (e) => errors.push(e) });
    const spoken: string[] = [];
    const t1 = reg.open("s", "r1", { onTimeout: () => void spoken.push("r1") });
    const t2 = reg.open("s", "r2", {
      onTimeout: () => {
        throw new Error("post failed");
      },
    });
    await vi.advanceTimersByTimeAsync(5000);
    expect(await t1.verdict).toBe("deny");
    expect(await t2.verdict).toBe("deny");
    expect(spoken).toEqual(["r1"]);
    expect(errors).toHaveLength(1);
    expect(audit.find("tool_permission", "denied")).toHaveLength(2);
    expect(reg.resolve("s", "r1", t1.nonce, "approve")).toBe("stale");
  });

  it("abort denies", async () => {
    const reg = new PendingApprovals();
    const ac = new AbortController();
    const t = reg.open("s", "r", { signal: ac.signal });
    ac.abort();
    expect(await t.verdict).toBe("deny");
  });
});

describe("typed replies", () => {
  it("only a message that is entirely a verdict counts", () => {
    expect(parseTypedVerdict("1")).toBe("approve");
    expect(parseTypedVerdict(" 2 \n")).toBe("deny");
    expect(parseTypedVerdict("3")).toBe("approve_always");
    for (const t of ["1 please", "11", "yes", "", "1.", "run 1"]) expect(parseTypedVerdict(t)).toBeNull();
  });

  it("resolves the newest open prompt, names the prompt it settled, and reports expiry neutrally", async () => {
    const reg = new PendingApprovals();
    const d = new TextReplyApprovalDecider(reg);
    const ticket = d.open(request(), new AbortController().signal);
    expect(d.handleReply("web:c1", "not a verdict")).toBeNull();
    // "3" is the agent's own "allow always": the verdict goes to the agent, no parley grant is armed.
    expect(d.handleReply("web:c1", "3")).toEqual({ requestId: "r1", verdict: "approve_always" });
    expect(await ticket.verdict).toBe("approve_always");
    expect(d.handleReply("web:c1", "1")).toBe(RECEIPT_EXPIRED);
    expect(d.handleReply("web:other", "2")).toBe(RECEIPT_EXPIRED);
  });
});

describe("widget presses", () => {
  it("a press with a wrong nonce gets the neutral receipt and the prompt stays open", async () => {
    const reg = new PendingApprovals();
    const d = new WidgetApprovalDecider(reg);
    const ticket = d.open(request(), new AbortController().signal);
    expect(d.press("web:c1", "r1", "forged", "approve")).toBe(RECEIPT_EXPIRED);
    expect(reg.hasOpen("web:c1")).toBe(true);
    expect(d.press("web:c1", "r1", ticket.nonce, "deny")).toBe("");
    expect(await ticket.verdict).toBe("deny");
  });
});
