/**
 * Golden transcripts: the ordered `send` requests (handle, service, flat text) the iMessage renderer
 * makes for scripted agent streams, through the real framing to the fake imsg, compared with
 * fixtures/golden/imessage-*.json. The clock is fixed, so the status line is deterministic.
 * Re-record after an intended change with
 * `PARLEY_RECORD_GOLDEN=1 npx vitest run test/imessage/golden.test.ts` and review the diff like code.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { ImsgClient } from "../../src/imessage/client.js";
import { OwnMessageLedger } from "../../src/imessage/ledger.js";
import { Presence } from "../../src/imessage/presence.js";
import { IMessageRenderer } from "../../src/imessage/renderer.js";
import { IMessageSurface } from "../../src/imessage/surface.js";
import { IMessageTransport } from "../../src/imessage/transport.js";
import { PendingApprovals, WidgetApprovalDecider } from "../../src/messaging/approval/approvals.js";
import { type Clock, realClock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { approvalOutcomeLabel } from "../../src/messaging/channel/render-kit.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { TurnDriver } from "../../src/messaging/turn/driver.js";
import type { ScriptedTurn } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { FakeImsgFolder } from "../fakes/imessage/control.js";

const RECORD = process.env.PARLEY_RECORD_GOLDEN === "1";
const HANDLE = "+61400000000";
const code = Array.from({ length: 140 }, (_, i) => `  step_${i}: run("task ${i}") # keep going`).join("\n");

const SCENARIOS: Record<string, { turn: ScriptedTurn; press?: "approve" | "deny"; steer?: string }> = {
  "plain-answer": {
    turn: {
      steps: [
        { type: "thinking", text: "The user wants a greeting." },
        { type: "text", text: "# Hello\n\n**Hi** there! Here is some code:\n\n```ts\nconst x = 1;\n" },
        {
          type: "text",
          text: "```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nSee [the docs](https://example.com). Bye.",
        },
        { type: "complete", stopReason: "end_turn" },
      ],
    },
  },
  "long-answer": {
    turn: {
      steps: [
        { type: "text", text: `Plan:\n\n\`\`\`yaml\n${code}\n\`\`\`\n\n${"That is the plan. ".repeat(120)}` },
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
        {
          type: "text",
          text: "Your key is AKIA**Q7ZR3M5T**XW2KP9VB and [AKIAQ7ZR3M](https://x.example)5TXW2KP9VB.",
        },
        { type: "complete", stopReason: "end_turn" },
      ],
    },
  },
};

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

async function record(name: string) {
  const scenario = SCENARIOS[name];
  if (!scenario) throw new Error(name);
  const folder = new FakeImsgFolder();
  const logger = new MemoryLogger();
  const client = new ImsgClient({
    cliPath: folder.cliPath,
    dbPath: folder.dbPath,
    clock: realClock,
    logger,
    onNotification: () => {},
    onStarted: async () => {},
  });
  await client.start();
  stops.push(() => client.stop());
  const fixed: Clock = { ...realClock, now: () => 0 };
  const transport = new IMessageTransport({
    audit: new MemoryAuditSink(),
    imsg: client,
    allowedHandles: [HANDLE],
    ledger: new OwnMessageLedger(fixed),
    service: "imessage",
    clock: realClock,
    logger,
  });
  const surface = new IMessageSurface(
    {
      transport,
      presence: new Presence(client, logger),
      agentName: "golden",
      commands: { new: "/new", stop: "/stop" },
    },
    { clock: fixed, logger },
  );
  const renderer = new IMessageRenderer({
    post: (md) => surface.postTo(HANDLE, md),
    typing: async () => {},
    clock: fixed,
    logger,
    commands: { new: "/new", stop: "/stop" },
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
          if (press)
            setTimeout(() => {
              // As the hub does for a typed reply: settle the prompt, then show its outcome.
              decider.press("golden", request.requestId, ticket.nonce, press);
              void renderer.markApproval(request.requestId, approvalOutcomeLabel(press));
            }, 20);
          return ticket;
        },
      },
    },
  });
  await driver.run("prompt");
  await renderer.close();
  const sends = folder
    .requests()
    .filter((r) => r.method === "send" && r.answered === undefined)
    .map((r) => r.params);
  return { sends, permissionAnswers: provider.answers };
}

describe("imessage golden transcripts", () => {
  for (const name of Object.keys(SCENARIOS)) {
    it(name, async () => {
      const path = new URL(`../../fixtures/golden/imessage-${name}.json`, import.meta.url);
      const actual = await record(name);
      if (RECORD) writeFileSync(path, `${JSON.stringify(actual, null, 2)}\n`);
      expect(existsSync(path), "missing golden file; re-record (see the header)").toBe(true);
      expect(actual).toEqual(JSON.parse(readFileSync(path, "utf8")));
    });
  }
});
