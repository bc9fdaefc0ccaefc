/**
 * Golden transcripts: the ordered Discord REST calls (method, route, JSON body) the renderer makes
 * for scripted agent streams, compared against fixtures/golden/discord-*.json. Timers are fake and
 * never advanced, so no throttled live frame fires and the transcript is deterministic; snowflakes
 * and nonces are normalized. Re-record after an intended change with
 * `PARLEY_RECORD_GOLDEN=1 npx vitest run test/discord/golden.test.ts` and review the diff like code.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { DiscordClient } from "../../src/discord/client.js";
import { DiscordRenderer } from "../../src/discord/renderer.js";
import { PendingApprovals, WidgetApprovalDecider } from "../../src/messaging/approval/approvals.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { TurnDriver } from "../../src/messaging/turn/driver.js";
import type { ScriptedTurn } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { FakeDiscord } from "../fakes/discord/server.js";
import { DM, FakeTimers } from "./helpers.js";

const RECORD = process.env.PARLEY_RECORD_GOLDEN === "1";

const code = Array.from({ length: 90 }, (_, i) => `  step_${i}: run("task ${i}") # keep going`).join("\n");

const SCENARIOS: Record<string, { turn: ScriptedTurn; press?: "approve" | "deny"; steer?: string }> = {
  "plain-answer": {
    turn: {
      steps: [
        { type: "thinking", text: "The user wants a greeting." },
        { type: "text", text: "Hello @everyone! Here is some code:\n\n```ts\nconst x = 1;\n" },
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
        { type: "text", text: "Your key is AKIA**IOSFODNN7EXAMPLE** and <@123> pinged." },
        { type: "complete", stopReason: "end_turn" },
      ],
    },
  },
};

let fake: FakeDiscord | undefined;
let client: DiscordClient | undefined;
afterEach(async () => {
  await client?.close();
  await fake?.close();
});

function normalize(value: unknown): unknown {
  const ids = new Map<string, string>();
  const text = JSON.stringify(value)
    .replace(/\d{17,20}/g, (id) => {
      if (!ids.has(id)) ids.set(id, `<id${ids.size + 1}>`);
      return ids.get(id) as string;
    })
    .replace(/a:r1:[A-Za-z0-9_-]{22}:/g, "a:r1:<nonce>:");
  return JSON.parse(text);
}

async function record(name: string) {
  const scenario = SCENARIOS[name];
  if (!scenario) throw new Error(name);
  fake = await new FakeDiscord().start();
  client = new DiscordClient({
    token: fake.token,
    apiBase: fake.apiBase,
    intents: 0,
    logger: new MemoryLogger(),
    onDispatch: () => {},
  });
  const renderer = new DiscordRenderer({
    rest: client,
    channelId: DM,
    toggles: { reactionsEnabled: false, showThinking: false },
    audit: new MemoryAuditSink(),
    logger: new MemoryLogger(),
    clock: new FakeTimers(),
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
    .filter((c) => c.method !== "GET" && !/\/typing$/.test(c.path))
    .map((c) => ({ call: `${c.method} ${c.path}`, body: c.body }));
  return normalize({ calls, permissionAnswers: provider.answers });
}

describe("discord golden transcripts", () => {
  for (const name of Object.keys(SCENARIOS)) {
    it(name, async () => {
      const path = new URL(`../../fixtures/golden/discord-${name}.json`, import.meta.url);
      const actual = await record(name);
      if (RECORD) writeFileSync(path, `${JSON.stringify(actual, null, 2)}\n`);
      expect(existsSync(path), "missing golden file; re-record (see the header)").toBe(true);
      expect(actual).toEqual(JSON.parse(readFileSync(path, "utf8")));
    });
  }
});
