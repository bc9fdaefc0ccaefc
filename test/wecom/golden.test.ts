/**
 * Golden transcripts: the ordered WeCom wire traffic (stream frames on the message's req_id, pushes,
 * response_url posts) the renderer makes for scripted agent streams, compared against
 * fixtures/golden/wecom-*.json. The clock is manual and never advanced, so no throttled live frame
 * fires and the transcript is deterministic; req_ids and stream ids are normalized. Re-record after
 * an intended change with `PARLEY_RECORD_GOLDEN=1 npx vitest run test/wecom/golden.test.ts` and
 * review the diff like code.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { PendingApprovals, WidgetApprovalDecider } from "../../src/messaging/approval/approvals.js";
import { approvalOutcomeLabel } from "../../src/messaging/channel/render-kit.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { TurnDriver } from "../../src/messaging/turn/driver.js";
import type { ScriptedTurn } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { permissionRequest } from "../helpers/events.js";
import { ManualClock } from "../helpers/manual-clock.js";
import type { Wired } from "./helpers.js";
import { wire } from "./helpers.js";

const RECORD = process.env.PARLEY_RECORD_GOLDEN === "1";

// Past one bubble's byte cap in CJK (3 bytes each): the head is sealed in the bubble, the tail pushed.
const cjk = Array.from(
  { length: 40 },
  (_, i) => `第${i}段：${"企业微信的长连接机器人逐字流式回答。".repeat(12)}`,
).join("\n\n");

const SCENARIOS: Record<string, { turn: ScriptedTurn; press?: "approve" | "deny"; steer?: string }> = {
  "plain-answer": {
    turn: {
      steps: [
        { type: "thinking", text: "The user wants a greeting." },
        { type: "text", text: "Hello @all! Here is some code:\n\n```ts\nconst x = 1;\n" },
        { type: "text", text: "```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nBye." },
        { type: "complete", stopReason: "end_turn" },
      ],
    },
  },
  "long-answer": {
    turn: {
      steps: [
        { type: "text", text: `计划如下：\n\n${cjk}\n\n以上。` },
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
        permissionRequest({ requestId: "r1", title: "npm test", kind: "execute" }),
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
        { type: "text", text: "Your key is AKIA**IOSFODNN7EXAMPLE** and <@zhangsan> pinged." },
        { type: "complete", stopReason: "end_turn" },
      ],
    },
  },
};

let w: Wired | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

/** Ids the fake or the renderer made up, numbered in order of first appearance. */
function normalize(value: unknown): unknown {
  const ids = new Map<string, string>();
  const text = JSON.stringify(value).replace(
    /\bcb-[a-z0-9-]+|\baibot_send_msg_[a-z0-9_]+|\bturn:[a-f0-9-]{36}/g,
    (id) => {
      if (!ids.has(id)) ids.set(id, `<id${ids.size + 1}>`);
      return ids.get(id) as string;
    },
  );
  return JSON.parse(text);
}

async function record(name: string) {
  const scenario = SCENARIOS[name];
  if (!scenario) throw new Error(name);
  // Acks arrive over a real socket while the manual clock stands still: their bound never fires.
  w = await wire({ clock: new ManualClock(), ackTimeoutMs: 3_600_000 });
  const fake = w.fake;
  const renderer = w.renderer(w.message({ text: "prompt" }), { throttleMs: 1000 });
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
          // As the hub does for a typed reply: the verdict, then the prompt on screen closed.
          if (press)
            setTimeout(() => {
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
  const wireCalls = fake.frames
    .filter((f) => f.cmd === "aibot_respond_msg" || f.cmd === "aibot_send_msg")
    .map((f) => ({ cmd: f.cmd, reqId: f.reqId, body: f.body }));
  const posts = fake.posts.map((p) => ({ content: p.content }));
  return normalize({
    frames: wireCalls,
    posts,
    visible: fake.visible(),
    permissionAnswers: provider.answers,
  });
}

describe("wecom golden transcripts", () => {
  for (const name of Object.keys(SCENARIOS)) {
    it(name, async () => {
      const path = new URL(`../../fixtures/golden/wecom-${name}.json`, import.meta.url);
      const actual = await record(name);
      if (RECORD) writeFileSync(path, `${JSON.stringify(actual, null, 2)}\n`);
      expect(existsSync(path), "missing golden file; re-record (see the header)").toBe(true);
      expect(actual).toEqual(JSON.parse(readFileSync(path, "utf8")));
    });
  }
});
