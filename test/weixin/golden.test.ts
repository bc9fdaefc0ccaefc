/**
 * Golden transcripts: the ordered iLink sendmessage bodies (the text each carries, its context
 * token) the renderer makes for scripted agent streams, against the fake, compared with
 * fixtures/golden/weixin-*.json. The clock is fixed, so the status line is deterministic; client
 * ids are normalized. Re-record after an intended change with
 * `PARLEY_RECORD_GOLDEN=1 npx vitest run test/weixin/golden.test.ts` and review the diff like code.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { PendingApprovals, WidgetApprovalDecider } from "../../src/messaging/approval/approvals.js";
import { realClock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { approvalOutcomeLabel } from "../../src/messaging/channel/render-kit.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { TurnDriver } from "../../src/messaging/turn/driver.js";
import type { ScriptedTurn } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { IlinkClient } from "../../src/weixin/client.js";
import { PeerState } from "../../src/weixin/peers.js";
import { PeerPolicy } from "../../src/weixin/policy.js";
import { WeixinRenderer } from "../../src/weixin/renderer.js";
import { WeixinTransport } from "../../src/weixin/transport.js";
import { FakeIlink } from "../fakes/weixin/server.js";

const RECORD = process.env.PARLEY_RECORD_GOLDEN === "1";
const PEER = "golden0001@im.wechat";

const code = Array.from({ length: 140 }, (_, i) => `  step_${i}: run("task ${i}") # keep going`).join("\n");

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
        {
          type: "text",
          text: "Your key is AKIA**Q7ZR3M5T**XW2KP9VB and [AKIAQ7ZR3M](https://x.example)5TXW2KP9VB.",
        },
        { type: "complete", stopReason: "end_turn" },
      ],
    },
  },
};

let fake: FakeIlink | undefined;
afterEach(async () => {
  await fake?.stop();
});

async function record(name: string) {
  const scenario = SCENARIOS[name];
  if (!scenario) throw new Error(name);
  fake = await FakeIlink.start({ lifetimeMs: 30_000 });
  const logger = new MemoryLogger();
  const peers = new PeerState({ logger });
  await peers.rememberToken(PEER, fake.push(PEER, "go").contextToken);
  const transport = new WeixinTransport({
    audit: new MemoryAuditSink(),
    client: new IlinkClient({ origin: fake.origin, token: fake.token, timers: realClock }),
    policy: new PeerPolicy({ dmPolicy: "allowlist", allowedUserIds: [PEER] }),
    peers,
    logger,
    sendGapMs: 0,
  });
  const renderer = new WeixinRenderer({
    post: (md) => transport.postMarkdown(PEER, md),
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
  const sends = fake.callsTo("sendmessage").map((c) => {
    const msg = c.body?.msg as {
      to_user_id?: string;
      context_token?: string;
      message_type?: number;
      item_list?: { text_item?: { text?: string } }[];
    };
    return {
      to: msg.to_user_id,
      contextToken: msg.context_token,
      messageType: msg.message_type,
      text: (msg.item_list ?? []).map((i) => i.text_item?.text ?? "").join(""),
    };
  });
  return { sends, permissionAnswers: provider.answers };
}

describe("weixin golden transcripts", () => {
  for (const name of Object.keys(SCENARIOS)) {
    it(name, async () => {
      const path = new URL(`../../fixtures/golden/weixin-${name}.json`, import.meta.url);
      const actual = await record(name);
      if (RECORD) writeFileSync(path, `${JSON.stringify(actual, null, 2)}\n`);
      expect(existsSync(path), "missing golden file; re-record (see the header)").toBe(true);
      expect(actual).toEqual(JSON.parse(readFileSync(path, "utf8")));
    });
  }
});
