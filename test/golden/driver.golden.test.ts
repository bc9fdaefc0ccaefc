/**
 * Golden transcripts: the ordered renderer calls the TurnDriver makes for scripted provider streams,
 * compared against fixtures/golden/driver-*.json (through the shared record/compare step in
 * test/helpers/golden-scenarios.ts). Re-record after an intended change with
 * `npm run golden:record` and review the diff like code.
 */
import { PendingApprovals, WidgetApprovalDecider } from "../../src/messaging/approval/approvals.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import type { TurnPolicy } from "../../src/messaging/turn/driver.js";
import { TurnDriver } from "../../src/messaging/turn/driver.js";
import { RecordingRenderer } from "../../src/messaging/turn/recording-renderer.js";
import type { ScriptedTurn } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { describeGolden } from "../helpers/golden-scenarios.js";

interface Scenario {
  turn: ScriptedTurn;
  policy?: TurnPolicy;
  /** Press this verdict on every prompt. */
  press?: "approve" | "deny";
}

const SCENARIOS: Record<string, Scenario> = {
  "plain-answer": {
    turn: {
      steps: [
        { type: "thinking", text: "The user wants a greeting." },
        { type: "text", text: "Hello! Here is some code:\n\n```ts\nconst x = 1;\n" },
        { type: "text", text: "```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n" },
        { type: "usage", used: 1200, size: 200000 },
        { type: "complete", stopReason: "end_turn" },
      ],
    },
  },
  "tool-approved": {
    press: "approve",
    turn: {
      steps: [
        { type: "text", text: "Let me run the tests." },
        { type: "tool_call", toolCallId: "t1", title: "npm test", kind: "execute", purpose: "Run the suite" },
        {
          type: "permission_request",
          requestId: "r1",
          toolCallId: "t1",
          title: "npm test",
          kind: "execute",
          options: [
            { optionId: "allow", name: "Allow once", kind: "allow_once" },
            { optionId: "always", name: "Always allow", kind: "allow_always" },
            { optionId: "reject", name: "Reject", kind: "reject_once" },
          ],
        },
      ],
      onPermission: {
        approve: [
          { type: "tool_result", toolCallId: "t1", status: "completed", final: true },
          { type: "text", text: "All 12 tests passed." },
          { type: "complete", stopReason: "end_turn" },
        ],
      },
    },
  },
  "steer-and-secret": {
    turn: {
      steps: [
        { type: "text", text: "Working on it. Your key AKIAIOSF" },
        { type: "text", text: "ODNN7EXAMPLE is exposed. [STEERING ste" },
        { type: "text", text: "er-1: also check the weather]Weather is sunny.\n[OPTIONS: Thanks | More]" },
        { type: "steer_consumed", id: "1", summary: "also check the weather" },
        { type: "complete", stopReason: "end_turn" },
      ],
    },
  },
  "compaction-then-answer": {
    turn: {
      steps: [
        {
          type: "text",
          text: "<compaction-summary>Earlier we discussed the deploy plan.</compaction-summary>",
        },
        { type: "compaction", contextUsagePct: 8 },
        { type: "text", text: "Continuing: the deploy is ready." },
        { type: "complete", stopReason: "end_turn" },
      ],
    },
  },
};

async function record(scenario: Scenario) {
  const reg = new PendingApprovals();
  const decider = new WidgetApprovalDecider(reg);
  const renderer = new RecordingRenderer();
  if (scenario.press) {
    const verdict = scenario.press;
    renderer.onPrompt = (requestId, nonce) => void decider.press("golden", requestId, nonce, verdict);
  }
  const provider = new ScriptedProvider([scenario.turn]);
  const driver = new TurnDriver({
    provider,
    renderer,
    audit: new MemoryAuditSink(),
    sessionKey: "golden",
    policy: { decider, ...scenario.policy },
  });
  const text = await driver.run("prompt");
  return { calls: renderer.calls, returnedText: text, permissionAnswers: provider.answers };
}

// Compared in the form the fixture holds: through JSON and back.
describeGolden("driver", SCENARIOS, async (scenario) => JSON.parse(JSON.stringify(await record(scenario))));
