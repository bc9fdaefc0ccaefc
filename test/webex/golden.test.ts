/**
 * Golden transcripts: the ordered Webex REST calls (method, route, JSON body) the renderer makes for
 * scripted agent streams, compared against fixtures/golden/webex-*.json. Timers are manual and never
 * advanced, so no status frame fires and the transcript is deterministic; ids and nonces are
 * normalized. Re-record after an intended change with
 * `PARLEY_RECORD_GOLDEN=1 npx vitest run test/webex/golden.test.ts` and review the diff like code.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { PendingApprovals, WidgetApprovalDecider } from "../../src/messaging/approval/approvals.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { TurnDriver } from "../../src/messaging/turn/driver.js";
import type { ScriptedTurn } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { WebexRenderer } from "../../src/webex/renderer.js";
import { webexClient } from "../conformance/webex.harness.js";
import { FakeWebex } from "../fakes/webex/server.js";
import { ManualClock } from "../helpers/manual-clock.js";

const RECORD = process.env.PARLEY_RECORD_GOLDEN === "1";
const ROOM = "room-golden";

const code = Array.from({ length: 400 }, (_, i) => `  step_${i}: run("任务 ${i}") # keep going`).join("\n");

const SCENARIOS: Record<string, { turn: ScriptedTurn; press?: "approve" | "deny"; steer?: string }> = {
  "plain-answer": {
    turn: {
      steps: [
        { type: "thinking", text: "The user wants a greeting." },
        { type: "text", text: "Hello! Here is some code:\n\n```ts\nconst x = 1;\n" },
        { type: "text", text: "```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nBye." },
        { type: "complete", stopReason: "end_turn" },
      ],
    },
  },
  "long-answer": {
    turn: {
      steps: [
        { type: "text", text: `Plan:\n\n\`\`\`yaml\n${code}\n\`\`\`\n\nThat is the plan.` },
        { type: "complete", stopReason: "end_turn" },
      ],
    },
  },
  "options-and-steer": {
    steer: "also check the weather",
    turn: {
      steps: [
        { type: "text", text: "Listing files. [STEERING steer-1: weather too]" },
        { type: "text", text: "Weather is sunny.\n[OPTIONS: Thanks | More detail]" },
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
            { optionId: "reject", name: "Reject", kind: "reject_once" },
          ],
        },
      ],
      onPermission: {
        approve: [
          { type: "text", text: "All 12 tests passed." },
          { type: "complete", stopReason: "end_turn" },
        ],
      },
    },
  },
  "secret-in-emphasis": {
    turn: {
      steps: [
        { type: "text", text: "Your key is AKIA**Q7ZR3M5TXW2KP9VB** — keep it safe." },
        { type: "complete", stopReason: "end_turn" },
      ],
    },
  },
};

let fake: FakeWebex | undefined;
afterEach(async () => {
  await fake?.close();
});

function normalize(value: unknown): unknown {
  const ids = new Map<string, string>();
  const text = JSON.stringify(value)
    // Hydra ids (base64 of ciscospark://…) and the per-prompt nonce.
    .replace(/Y2lzY29zcGFyazovL[A-Za-z0-9+/]+/g, (id) => {
      if (!ids.has(id)) ids.set(id, `<id${ids.size + 1}>`);
      return ids.get(id) as string;
    })
    .replace(/"parley\.nonce":"[^"]+"/g, '"parley.nonce":"<nonce>"');
  return JSON.parse(text);
}

async function record(name: string) {
  const scenario = SCENARIOS[name];
  if (!scenario) throw new Error(name);
  fake = await new FakeWebex().start();
  fake.addRoom(ROOM, "direct");
  const renderer = new WebexRenderer({
    rest: webexClient(fake),
    roomId: ROOM,
    logger: new MemoryLogger(),
    clock: new ManualClock(),
  });
  if (scenario.steer) renderer.noteSteer(scenario.steer);
  const decider = new WidgetApprovalDecider(new PendingApprovals());
  const press = scenario.press;
  const provider = new ScriptedProvider([scenario.turn]);
  const driver = new TurnDriver({
    provider,
    renderer,
    audit: new MemoryAuditSink(),
    sessionKey: "golden",
    policy: {
      decider: {
        open: (request, signal) => {
          const ticket = decider.open(request, signal);
          if (press) setTimeout(() => decider.press("golden", request.requestId, ticket.nonce, press), 20);
          return ticket;
        },
      },
    },
  });
  await driver.run("prompt");
  await renderer.close();
  const calls = fake.calls
    .filter((c) => c.method !== "GET")
    .map((c) => ({ call: `${c.method} ${c.path}`, body: c.body }));
  return normalize({ calls, permissionAnswers: provider.answers });
}

describe("webex golden transcripts", () => {
  for (const name of Object.keys(SCENARIOS)) {
    it(name, async () => {
      const path = new URL(`../../fixtures/golden/webex-${name}.json`, import.meta.url);
      const actual = await record(name);
      if (RECORD) writeFileSync(path, `${JSON.stringify(actual, null, 2)}\n`);
      expect(existsSync(path), "missing golden file; re-record (see the header)").toBe(true);
      expect(actual).toEqual(JSON.parse(readFileSync(path, "utf8")));
    });
  }
});
