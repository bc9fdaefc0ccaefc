import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ApprovalDecider } from "../../../src/messaging/approval/approvals.js";
import { PendingApprovals, WidgetApprovalDecider } from "../../../src/messaging/approval/approvals.js";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../../src/messaging/security/audit.js";
import type { TurnPolicy } from "../../../src/messaging/turn/driver.js";
import { TurnDriver } from "../../../src/messaging/turn/driver.js";
import type { ProviderEvent } from "../../../src/messaging/turn/provider-events.js";
import { RecordingRenderer } from "../../../src/messaging/turn/recording-renderer.js";
import type { ScriptedTurn, ScriptStep } from "../../../src/providers/scripted.js";
import { ScriptedProvider } from "../../../src/providers/scripted.js";

const text = (t: string): ProviderEvent => ({ type: "text", text: t });
const done: ProviderEvent = { type: "complete", stopReason: "end_turn" };

async function drive(
  turn: ScriptedTurn | ScriptStep[],
  policy: TurnPolicy = {},
  extra: { logger?: MemoryLogger } = {},
) {
  const provider = new ScriptedProvider([turn]);
  const renderer = new RecordingRenderer();
  const audit = new MemoryAuditSink();
  const driver = new TurnDriver({ provider, renderer, audit, sessionKey: "web:c1", policy, ...extra });
  const result = await driver.run("hello");
  return { provider, renderer, audit, driver, result };
}

function chunksOf(s: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (s.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let prev = 0;
  for (const p of points) {
    out.push(s.slice(prev, p));
    prev = p;
  }
  out.push(s.slice(prev));
  return out.filter((c) => c.length > 0);
}

describe("TurnDriver: streaming and framing", () => {
  it("dispatches text, thinking, tools and done in order, returning the redacted text", async () => {
    const { renderer, result } = await drive([
      text("Hello "),
      { type: "thinking", text: "pondering" },
      { type: "tool_call", toolCallId: "t1", title: "Read file", kind: "read", purpose: "look" },
      text("world"),
      done,
    ]);
    expect(renderer.coalesced().map((c) => c.call)).toEqual([
      "onTurnStart",
      "onTextChunk",
      "onThinking",
      "onToolCall",
      "onTextChunk",
      "onDone",
    ]);
    expect(result).toBe("Hello world");
  });

  const FRAME_TEXT = "Before the fold. [STEERING steer-42: answered [the] weather first] After the fold.";

  it("a steering frame split at every possible chunk boundary yields the same OutputEvents", async () => {
    const reference = (await drive([text(FRAME_TEXT), done])).renderer.coalesced();
    expect(reference).toEqual([
      { call: "onTurnStart" },
      { call: "onTextChunk", text: "Before the fold. " },
      { call: "onSteerConsumed", steerId: "42", summary: "answered [the] weather first" },
      { call: "onTextChunk", text: " After the fold." },
      { call: "onDone", stopReason: "end_turn" },
    ]);
    for (let i = 1; i < FRAME_TEXT.length; i++) {
      const { renderer } = await drive([text(FRAME_TEXT.slice(0, i)), text(FRAME_TEXT.slice(i)), done]);
      expect(renderer.coalesced()).toEqual(reference);
    }
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(), { maxLength: 12 }), async (cuts) => {
        const { renderer } = await drive([...chunksOf(FRAME_TEXT, cuts).map(text), done]);
        expect(renderer.coalesced()).toEqual(reference);
      }),
      { numRuns: 100 },
    );
  });

  it("pairs the inline frame and the typed event: exactly one STEER_CONSUMED in either order", async () => {
    for (const order of ["typed-first", "frame-first"] as const) {
      const typed: ProviderEvent = { type: "steer_consumed", id: "7", summary: "noted" };
      const frame = text("a[STEERING steer-7: noted]b");
      const { renderer } = await drive(order === "typed-first" ? [typed, frame, done] : [frame, typed, done]);
      expect(renderer.calls.filter((c) => c.call === "onSteerConsumed")).toHaveLength(1);
      expect(renderer.allStrings().join("")).not.toContain("STEERING");
    }
  });

  it("prose that merely looks like a frame start is released unchanged", async () => {
    const { renderer, result } = await drive([
      text("see [STEERING steer-"),
      text("x\nnot a frame] and [STEER"),
      done,
    ]);
    expect(result).toBe("see [STEERING steer-x\nnot a frame] and [STEER");
    expect(renderer.calls.some((c) => c.call === "onSteerConsumed")).toBe(false);
  });

  it("a summary-bearing compaction notice becomes the terse receipt; the summary never renders", async () => {
    const { renderer, result } = await drive([
      text("  <compaction-sum"),
      text("mary>The user asked about SECRET-PLAN details"),
      text("</compaction-summary>\nActual answer."),
      done,
    ]);
    expect(renderer.calls).toContainEqual({
      call: "onCompaction",
      contextUsagePct: null,
      receipt: "✅ Context compacted.",
    });
    expect(renderer.allStrings().join("")).not.toContain("SECRET-PLAN");
    expect(result).toBe("Actual answer.");
  });

  it("a typed compaction event with a summary yields only the receipt", async () => {
    const { renderer } = await drive([
      { type: "compaction", contextUsagePct: 12, summary: "long summary body" },
      done,
    ]);
    expect(renderer.calls).toContainEqual({
      call: "onCompaction",
      contextUsagePct: 12,
      receipt: "✅ Context compacted.",
    });
    expect(renderer.allStrings().join("")).not.toContain("long summary body");
  });

  it("passes the [OPTIONS: …] trailer through unchanged", async () => {
    const { result } = await drive([text("Pick one:\n[OPTIONS: Yes | No]"), done]);
    expect(result).toBe("Pick one:\n[OPTIONS: Yes | No]");
  });

  it("logs and skips a malformed provider event; the turn continues", async () => {
    const logger = new MemoryLogger();
    const { result, renderer } = await drive(
      [
        text("a"),
        { raw: { type: "text", text: 42 } },
        { raw: null },
        { raw: { type: "warp" } },
        text("b"),
        done,
      ],
      {},
      { logger },
    );
    expect(result).toBe("ab");
    expect(logger.entries.filter((e) => e.message === "malformed provider event skipped")).toHaveLength(3);
    expect(renderer.calls.at(-1)).toEqual({ call: "onDone", stopReason: "end_turn" });
  });

  it("a failing renderer marks deliveryFailed instead of stranding the agent", async () => {
    const provider = new ScriptedProvider([[text("x"), done]]);
    const renderer = new RecordingRenderer();
    renderer.onTextChunk = async () => {
      throw new Error("platform down");
    };
    const driver = new TurnDriver({ provider, renderer, audit: new MemoryAuditSink(), sessionKey: "k" });
    await driver.run("go");
    expect(renderer.deliveryFailed).toBe(true);
    expect(driver.stopReason).toBe("end_turn");
  });

  it("a provider error ends the turn with DONE(error) and propagates", async () => {
    const provider = new ScriptedProvider([[text("partial"), { throws: "agent exited" }]]);
    const renderer = new RecordingRenderer();
    const driver = new TurnDriver({ provider, renderer, audit: new MemoryAuditSink(), sessionKey: "k" });
    await expect(driver.run("go")).rejects.toThrow("agent exited");
    // The reason travels with the ending: the chat shows why, not only that it failed.
    expect(renderer.calls.at(-1)).toEqual({ call: "onDone", stopReason: "error", error: "agent exited" });
  });
});

describe("TurnDriver: the agent's lifecycle notices", () => {
  const AKIA = "AKIAQ7ZR3M5TXW2KP9VB";

  it("a tool retitle and status reach the renderer, redacted like the call itself", async () => {
    const provider = new ScriptedProvider([
      [
        { type: "tool_call", toolCallId: "t1", title: "Terminal", kind: "execute" },
        { type: "tool_call_update", toolCallId: "t1", title: `curl -H ${AKIA}`, status: "in_progress" },
        { type: "tool_call_update", toolCallId: "t1", status: "completed" },
        { type: "complete", stopReason: "end_turn" },
      ],
    ]);
    const renderer = new RecordingRenderer();
    await new TurnDriver({ provider, renderer, audit: new MemoryAuditSink(), sessionKey: "k" }).run("go");
    const updates = renderer.calls.filter((c) => c.call === "onToolUpdate");
    expect(updates).toEqual([
      {
        call: "onToolUpdate",
        toolCallId: "t1",
        title: expect.stringMatching(/^curl -H /),
        status: "in_progress",
      },
      { call: "onToolUpdate", toolCallId: "t1", status: "completed" },
    ]);
    expect(renderer.allStrings().join("\n")).not.toContain(AKIA);
  });

  it("a wait in line, a silence and a fresh session become agent statuses; a restored session says nothing", async () => {
    const provider = new ScriptedProvider([
      [
        { type: "agent_wait", position: 2 },
        { type: "session_resume", outcome: "restored", cause: "idle", reason: "restored" },
        { type: "session_resume", outcome: "fresh", cause: "agent_exited", reason: `key ${AKIA} lost` },
        { type: "silence", seconds: 30 },
        { type: "complete", stopReason: "end_turn" },
      ],
    ]);
    const renderer = new RecordingRenderer();
    await new TurnDriver({ provider, renderer, audit: new MemoryAuditSink(), sessionKey: "k" }).run("go");
    const statuses = renderer.calls.flatMap((c) => (c.call === "onAgentStatus" ? [c.status] : []));
    expect(statuses).toEqual([
      { type: "waiting", position: 2 },
      { type: "fresh_session", cause: "agent_exited", reason: expect.stringMatching(/^key .* lost$/) },
      { type: "silent", seconds: 30 },
    ]);
    expect(renderer.allStrings().join("\n")).not.toContain(AKIA);
  });

  it("a failure's reason is one redacted line", async () => {
    const provider = new ScriptedProvider([[{ throws: `API Error\n  at call (${AKIA})` }]]);
    const renderer = new RecordingRenderer();
    const driver = new TurnDriver({ provider, renderer, audit: new MemoryAuditSink(), sessionKey: "k" });
    await expect(driver.run("go")).rejects.toThrow();
    const done = renderer.calls.at(-1);
    expect(done).toMatchObject({
      call: "onDone",
      stopReason: "error",
      error: expect.stringMatching(/^API Error at call/),
    });
    expect(JSON.stringify(done)).not.toContain(AKIA);
  });
});

describe("TurnDriver: redaction", () => {
  const KEYS = [
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB",
    "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
    "xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx",
  ];

  it("a credential planted anywhere and streamed in random chunks never reaches the renderer", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...KEYS),
        fc.string({ maxLength: 80 }),
        fc.string({ maxLength: 80 }),
        fc.array(fc.nat(), { maxLength: 15 }),
        fc.constantFrom("text", "thinking", "tool", "permission"),
        async (key, before, after, cuts, where) => {
          const body = `${before} ${key} ${after}`;
          const steps: ScriptStep[] =
            where === "text"
              ? chunksOf(body, cuts).map(text)
              : where === "thinking"
                ? [{ type: "thinking", text: body }]
                : where === "tool"
                  ? [{ type: "tool_call", toolCallId: "t", title: body, kind: "execute", purpose: body }]
                  : [
                      {
                        type: "permission_request",
                        requestId: "r",
                        toolCallId: "t",
                        title: body,
                        kind: "execute",
                        options: [{ optionId: "o", name: body, kind: "allow_once" }],
                      },
                    ];
          const reg = new PendingApprovals();
          const decider = new WidgetApprovalDecider(reg);
          const provider = new ScriptedProvider([[...steps, done]]);
          const renderer = new RecordingRenderer();
          renderer.onPrompt = (requestId, nonce) => void decider.press("k", requestId, nonce, "deny");
          const driver = new TurnDriver({
            provider,
            renderer,
            audit: new MemoryAuditSink(),
            sessionKey: "k",
            policy: { decider },
          });
          await driver.run("go");
          for (const s of renderer.allStrings()) expect(s).not.toContain(key);
          expect(
            renderer.calls
              .filter((c) => c.call === "onTextChunk")
              .map((c) => ("text" in c ? c.text : ""))
              .join(""),
          ).not.toContain(key);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe("TurnDriver: approval ladder", () => {
  const permission = (requestId = "r1", kind = "execute"): ProviderEvent => ({
    type: "permission_request",
    requestId,
    toolCallId: "t1",
    title: "Run rm",
    kind,
    options: [
      { optionId: "a", name: "Allow", kind: "allow_once" },
      { optionId: "d", name: "Reject", kind: "reject_once" },
    ],
  });
  const toolThenPermission = (kind = "execute"): ScriptStep[] => [
    { type: "tool_call", toolCallId: "t1", title: "Run rm", kind, purpose: "clean up" },
    permission("r1", kind),
    done,
  ];

  it("denies by default: interactive with no decider", async () => {
    const { provider, audit, renderer } = await drive(toolThenPermission());
    expect(provider.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
    expect(audit.find("tool_permission", "denied")[0]?.fields.reason).toBe("no_decider");
    expect(renderer.calls.some((c) => c.call === "onPromptChoice")).toBe(false);
  });

  it("auto and trust approve; trust-reads approves only reads", async () => {
    expect((await drive(toolThenPermission(), { approvalMode: "auto" })).provider.answers[0]?.verdict).toBe(
      "approve",
    );
    expect((await drive(toolThenPermission(), { approvalMode: "trust" })).provider.answers[0]?.verdict).toBe(
      "approve",
    );
    expect(
      (await drive(toolThenPermission("read"), { approvalMode: "trust-reads" })).provider.answers[0]?.verdict,
    ).toBe("approve");
    expect(
      (await drive(toolThenPermission("edit"), { approvalMode: "trust-reads" })).provider.answers[0]?.verdict,
    ).toBe("deny");
  });

  it("denyAllTools beats every approve path", async () => {
    const { provider, audit } = await drive(toolThenPermission(), {
      denyAllTools: true,
      approvalMode: "auto",
      autoApproveSession: () => true,
      autoApproveTool: () => true,
    });
    expect(provider.answers[0]?.verdict).toBe("deny");
    expect(audit.records[0]?.fields.reason).toBe("deny_all_tools");
  });

  it("reads the predicates per request, so a revoke applies to the very next tool", async () => {
    let grant = true;
    const provider = new ScriptedProvider([
      {
        steps: [permission("r1")],
        onPermission: { approve: [permission("r2"), done] },
      },
    ]);
    const renderer = new RecordingRenderer();
    const audit = new MemoryAuditSink();
    const driver = new TurnDriver({
      provider,
      renderer,
      audit,
      sessionKey: "k",
      policy: {
        autoApproveSession: () => {
          const now = grant;
          grant = false;
          return now;
        },
      },
    });
    await driver.run("go");
    expect(provider.answers.map((a) => a.verdict)).toEqual(["approve", "deny"]);
    expect(audit.records.map((r) => r.fields.reason)).toEqual(["session_trust", "no_decider"]);
  });

  it("hook auto-approve is keyed on the tool title", async () => {
    const { provider, audit } = await drive(toolThenPermission(), { autoApproveTool: (t) => t === "Run rm" });
    expect(provider.answers[0]?.verdict).toBe("approve");
    expect(audit.records[0]).toMatchObject({
      outcome: "auto_approved",
      fields: { reason: "hook_auto_approve" },
    });
  });

  it("interactive: PROMPT_CHOICE carries the title and the purpose of the SAME tool call, and the press decides", async () => {
    const reg = new PendingApprovals();
    const decider = new WidgetApprovalDecider(reg);
    const provider = new ScriptedProvider([
      [
        { type: "tool_call", toolCallId: "t1", title: "Run rm", kind: "execute", purpose: "purpose of A" },
        { type: "tool_call", toolCallId: "t2", title: "Fetch", kind: "fetch", purpose: "purpose of B" },
        permission("r1"),
        done,
      ],
    ]);
    const renderer = new RecordingRenderer();
    renderer.onPrompt = (requestId, nonce) => void decider.press("k", requestId, nonce, "approve");
    const audit = new MemoryAuditSink();
    await new TurnDriver({ provider, renderer, audit, sessionKey: "k", policy: { decider } }).run("go");
    const prompt = renderer.calls.find((c) => c.call === "onPromptChoice");
    expect(prompt).toMatchObject({ toolTitle: "Run rm", toolPurpose: "purpose of A" });
    expect(prompt && "options" in prompt ? prompt.options.map((o) => o.verdict) : []).toEqual([
      "approve",
      "deny",
    ]);
    expect(provider.answers[0]?.verdict).toBe("approve");
    expect(audit.records[0]).toMatchObject({ outcome: "approved", fields: { reason: "decider" } });
  });

  it("a prompt the renderer could not show is denied at once, not after the approval window", async () => {
    const reg = new PendingApprovals();
    const decider = new WidgetApprovalDecider(reg);
    const provider = new ScriptedProvider([
      [{ type: "tool_call", toolCallId: "t1", title: "Run rm", kind: "execute" }, permission("r1"), done],
    ]);
    const renderer = new RecordingRenderer();
    renderer.onPromptChoice = async () => {
      throw new Error("the platform refused the post");
    };
    const audit = new MemoryAuditSink();
    // No timer ever fires here (a never-answered prompt would wait the default window, minutes).
    await new TurnDriver({ provider, renderer, audit, sessionKey: "k", policy: { decider } }).run("go");
    expect(provider.answers).toEqual([{ requestId: "r1", verdict: "deny" }]);
    // The row says why: nobody was asked (unshown.test.ts covers the rest of the rule).
    expect(audit.records[0]).toMatchObject({ outcome: "denied", fields: { reason: "prompt_not_shown" } });
    // The prompt is closed: a late press approves nothing.
    expect(reg.isOpen("k", "r1")).toBe(false);
  });

  it("a decider that throws or never answers denies", async () => {
    const throwing: ApprovalDecider = {
      open: () => {
        throw new Error("boom");
      },
    };
    expect((await drive(toolThenPermission(), { decider: throwing })).provider.answers[0]?.verdict).toBe(
      "deny",
    );
    const silent: ApprovalDecider = { open: () => ({ nonce: "n", verdict: new Promise(() => {}) }) };
    expect(
      (await drive(toolThenPermission(), { decider: silent, deciderTimeoutMs: 20 })).provider.answers[0]
        ?.verdict,
    ).toBe("deny");
  });
});
