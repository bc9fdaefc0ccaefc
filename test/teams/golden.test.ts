/**
 * Golden transcripts: the ordered Connector calls (method, route, activity) the Teams renderer makes
 * for scripted agent streams, through the real SDK client against the fake, compared with
 * fixtures/golden/teams-*.json. The renderer's clock never moves, so no throttled live frame fires
 * and the transcript is deterministic; ids, the conversation and nonces are normalized; typing
 * indicators are left out. Re-record after an intended change with
 * `PARLEY_RECORD_GOLDEN=1 npx vitest run test/teams/golden.test.ts` and review the diff like code.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { PendingApprovals, WidgetApprovalDecider } from "../../src/messaging/approval/approvals.js";
import { realClock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { TurnDriver } from "../../src/messaging/turn/driver.js";
import type { ScriptedTurn } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { ChoiceBook } from "../../src/teams/cards.js";
import { TeamsClient } from "../../src/teams/client.js";
import { TeamsOutbox } from "../../src/teams/outbox.js";
import { TeamsRenderer } from "../../src/teams/renderer.js";
import { connectorHostGate } from "../../src/teams/transport.js";
import { FakeTeams } from "../fakes/teams/server.js";
import { ManualClock } from "../helpers/manual-clock.js";

const RECORD = process.env.PARLEY_RECORD_GOLDEN === "1";

const code = Array.from({ length: 900 }, (_, i) => `  step_${i}: run("task ${i}") # keep going`).join("\n");

const SCENARIOS: Record<string, { turn: ScriptedTurn; press?: "approve" | "deny"; steer?: string }> = {
  "plain-answer": {
    turn: {
      steps: [
        { type: "thinking", text: "The user wants a greeting." },
        { type: "text", text: "# Hello\n\nHere is <b>some</b> code:\n\n```ts\nconst x = 1 < 2;\n" },
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
        { type: "text", text: "Your key is AKIA**IOSFODNN7EXAMPLE** and <at>everyone</at> pinged." },
        { type: "complete", stopReason: "end_turn" },
      ],
    },
  },
};

let fake: FakeTeams | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

function normalize(value: unknown, f: FakeTeams): unknown {
  const ids = new Map<string, string>();
  const named = (prefix: string) => (id: string) => {
    if (!ids.has(id)) ids.set(id, `<${prefix}${ids.size + 1}>`);
    return ids.get(id) as string;
  };
  const text = JSON.stringify(value)
    .split(encodeURIComponent(f.personalConversation([...f.users.values()][0] as never)))
    .join("<conversation>")
    .replace(/1%3A[0-9a-f]+|1:[0-9a-f]{6,}/g, named("id"))
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, named("uuid"))
    .replace(/"n":"[A-Za-z0-9_-]{22}"/g, '"n":"<nonce>"');
  return JSON.parse(text);
}

async function record(name: string) {
  const scenario = SCENARIOS[name];
  if (!scenario) throw new Error(name);
  fake = await new FakeTeams().start();
  const alice = fake.addUser("Alice");
  const gate = connectorHostGate([fake.connectorHost]);
  const logger = new MemoryLogger();
  const client = new TeamsClient({
    appId: fake.appId,
    password: fake.password,
    authority: `${fake.loginUrl}/botframework.com`,
    tenantId: fake.tenantId,
    openIdMetadataUrl: fake.openIdMetadataUrl,
    tokenIssuer: fake.tokenIssuer,
    admits: gate.admits,
    clock: realClock,
    logger,
    connector: { minGapMs: 0 },
  });
  const outbox = new TeamsOutbox({
    sender: client,
    address: {
      conversationId: fake.personalConversation(alice),
      serviceUrl: fake.serviceUrl,
      userAccountId: alice.accountId,
      identity: alice.upn,
      botId: `28:${fake.appId}`,
    },
    audit: new MemoryAuditSink(),
    logger,
  });
  const renderer = new TeamsRenderer({
    outbox,
    owner: false,
    choices: new ChoiceBook(),
    audit: new MemoryAuditSink(),
    logger,
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
          if (press) setTimeout(() => decider.press("golden", request.requestId, ticket.nonce, press), 50);
          return ticket;
        },
      },
    },
  });
  await driver.run("prompt");
  await renderer.close();
  const calls = fake.calls
    .filter((c) => c.method !== "GET" && (c.body as { type?: string } | undefined)?.type !== "typing")
    .map((c) => {
      const b = (c.body ?? {}) as Record<string, unknown>;
      return {
        call: `${c.method} ${c.path}`,
        body: { type: b.type, text: b.text, textFormat: b.textFormat, attachments: b.attachments },
      };
    });
  return normalize({ calls, permissionAnswers: provider.answers }, fake);
}

describe("teams golden transcripts", () => {
  for (const name of Object.keys(SCENARIOS)) {
    it(name, async () => {
      const path = new URL(`../../fixtures/golden/teams-${name}.json`, import.meta.url);
      const actual = await record(name);
      if (RECORD) writeFileSync(path, `${JSON.stringify(actual, null, 2)}\n`);
      expect(existsSync(path), "missing golden file; re-record (see the header)").toBe(true);
      expect(actual).toEqual(JSON.parse(readFileSync(path, "utf8")));
    });
  }
});
