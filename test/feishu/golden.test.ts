/**
 * Golden transcripts: the ordered Feishu message requests (method, route, msg_type and the `md` each
 * `post` carries) the renderer makes for scripted agent streams, against the fake, compared with
 * fixtures/golden/feishu-*.json. The clock is fixed, so the status line is deterministic; message
 * ids are normalized. Re-record after an intended change with
 * `PARLEY_RECORD_GOLDEN=1 npx vitest run test/feishu/golden.test.ts` and review the diff like code.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { createClient, createHttp, FeishuRest } from "../../src/feishu/client.js";
import { PromptLedger } from "../../src/feishu/prompts.js";
import { FeishuRenderer } from "../../src/feishu/renderer.js";
import { FeishuTransport } from "../../src/feishu/transport.js";
import { PendingApprovals, WidgetApprovalDecider } from "../../src/messaging/approval/approvals.js";
import { realClock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { approvalOutcomeLabel } from "../../src/messaging/channel/render-kit.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { TurnDriver } from "../../src/messaging/turn/driver.js";
import type { ScriptedTurn } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { postMarkdown } from "../fakes/feishu/render.js";
import { FakeFeishu } from "../fakes/feishu/server.js";

const RECORD = process.env.PARLEY_RECORD_GOLDEN === "1";

const code = Array.from({ length: 140 }, (_, i) => `  step_${i}: run("task ${i}") # keep going`).join("\n");

const SCENARIOS: Record<string, { turn: ScriptedTurn; press?: "approve" | "deny"; steer?: string }> = {
  "plain-answer": {
    turn: {
      steps: [
        { type: "thinking", text: "The user wants a greeting." },
        { type: "text", text: 'Hello <at user_id="all"></at>! Here is some code:\n\n```ts\nconst x = 1;\n' },
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
        {
          type: "text",
          text: "Your key is AKIA**Q7ZR3M5T**XW2KP9VB and [AKIAQ7ZR3M](https://x.example)5TXW2KP9VB.",
        },
        { type: "complete", stopReason: "end_turn" },
      ],
    },
  },
};

let fake: FakeFeishu | undefined;
afterEach(async () => {
  await fake?.stop();
});

function normalize(value: unknown): unknown {
  const ids = new Map<string, string>();
  const text = JSON.stringify(value).replace(/om_\d+/g, (id) => {
    if (!ids.has(id)) ids.set(id, `<id${ids.size + 1}>`);
    return ids.get(id) as string;
  });
  return JSON.parse(text);
}

async function record(name: string) {
  const scenario = SCENARIOS[name];
  if (!scenario) throw new Error(name);
  fake = await FakeFeishu.start({ lifetimeMs: 30_000 });
  const logger = new MemoryLogger();
  const rest = new FeishuRest({
    client: createClient({
      appId: fake.appId,
      appSecret: fake.appSecret,
      origin: fake.origin,
      http: createHttp(),
      logger,
    }),
    clock: realClock,
    logger,
  });
  const transport = new FeishuTransport({ audit: new MemoryAuditSink(), rest, logger });
  const anchor = fake.seedMessage({ openId: "ou_golden0000000000000000000000000001" }, "go");
  const renderer = new FeishuRenderer({
    post: (md) => transport.postMarkdown({ replyTo: anchor, chatId: "" }, md),
    prompts: new PromptLedger(),
    now: () => 0,
    logger,
    commands: { new: "`/new`", stop: "`/stop`" },
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
  const calls = fake.callsTo(/^(POST|PUT) \/open-apis\/im\/v1\/messages/).map((c) => ({
    call: `${c.method} ${c.path}`,
    msgType: c.body?.msg_type,
    md: postMarkdown(JSON.parse(String(c.body?.content ?? "{}"))),
  }));
  return normalize({ calls, permissionAnswers: provider.answers });
}

describe("feishu golden transcripts", () => {
  for (const name of Object.keys(SCENARIOS)) {
    it(name, async () => {
      const path = new URL(`../../fixtures/golden/feishu-${name}.json`, import.meta.url);
      const actual = await record(name);
      if (RECORD) writeFileSync(path, `${JSON.stringify(actual, null, 2)}\n`);
      expect(existsSync(path), "missing golden file; re-record (see the header)").toBe(true);
      expect(actual).toEqual(JSON.parse(readFileSync(path, "utf8")));
    });
  }
});
