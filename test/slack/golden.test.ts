/**
 * Golden transcripts: the ordered Web API calls (method and arguments) the whole Slack channel makes
 * for scripted agent streams, compared against fixtures/golden/slack-*.json, and IDENTICAL in both
 * modes: Socket Mode and the Events API over HTTP (signed by the fake) only change how deliveries
 * arrive, never what the user is shown. Slack records its own scenarios (threads, two prompts, a
 * picked option) through the shared record/compare step (test/helpers/golden-scenarios.ts).
 * Re-record after an intended change with `npm run golden:record` and review the diff like code.
 *
 * Deterministic by construction: the renderer runs with no throttle (every agent event is rendered
 * before the next is taken), the clock never moves (so elapsed times read 0s), reactions are off,
 * and timestamps and nonces are normalized.
 */
import { afterEach, expect } from "vitest";
import type { ScriptedTurn, ScriptStep } from "../../src/providers/scripted.js";
import { describeGolden, fencedPlan, firstSeenIds, toolPermission } from "../helpers/golden-scenarios.js";
import { ManualClock } from "../helpers/manual-clock.js";
import type { Mode, Stack } from "./helpers.js";
import { ALICE, buttonIds, DM, done, settled, startStack, text, until, untilFooter } from "./helpers.js";

const UNRECORDED = new Set(["auth.test", "apps.connections.open"]);

const permission = (requestId: string, title: string): ScriptStep =>
  toolPermission({ requestId, toolCallId: `t-${requestId}`, title });

interface Scenario {
  turns: (ScriptedTurn | ScriptStep[])[];
  play: (s: Stack) => Promise<void>;
}

/** Alice's first message, and the thread it opens. */
function open(s: Stack, words: string): string {
  return s.fake.userMessage({ channel: DM, user: ALICE, text: words }).ts;
}

async function pressWhere(s: Stack, suffix: string): Promise<void> {
  let target: { ts: string; id: string } | undefined;
  await until(() => {
    for (const m of s.fake.botMessages(DM)) {
      const id = buttonIds(m).find((b) => b.endsWith(suffix));
      if (id) target = { ts: m.ts, id };
    }
    return target !== undefined;
  }, `a button ending ${suffix}`);
  if (target) s.fake.press({ ts: target.ts, actionId: target.id, user: ALICE });
}

const SCENARIOS: Record<string, Scenario> = {
  "streamed-dm": {
    turns: [
      [
        { type: "thinking", text: "The user wants a greeting." },
        text("Hello! Here is **some** code:\n\n```ts\nconst x = 1 < 2;\n"),
        text("```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"),
        text("Nobody gets pinged: <!channel> <@U0000000002> [docs](https://example.com/a).\nBye."),
        done,
      ],
    ],
    play: async (s) => {
      open(s, "hi");
      await untilFooter(s.fake, DM);
    },
  },
  "long-fenced": {
    turns: [[text(fencedPlan(120)), done]],
    play: async (s) => {
      open(s, "plan it");
      await untilFooter(s.fake, DM);
    },
  },
  "approve-deny": {
    turns: [
      {
        steps: [text("Let me run the tests.\n"), permission("r1", "npm test")],
        onPermission: { approve: [text("All 12 tests passed."), done] },
      },
      {
        steps: [text("Now the deploy.\n"), permission("r2", "deploy --prod")],
        onPermission: { deny: [text("Not deployed."), done] },
      },
    ],
    play: async (s) => {
      const thread = open(s, "test it");
      await pressWhere(s, ":1");
      await untilFooter(s.fake, DM);
      await settled(s);
      s.fake.userMessage({ channel: DM, user: ALICE, text: "deploy it", threadTs: thread });
      await until(
        () => s.fake.botMessages(DM).some((m) => /deploy --prod/.test(m.text)),
        "the second prompt",
      );
      await pressWhere(s, ":0");
      await untilFooter(s.fake, DM, 2);
    },
  },
  options: {
    turns: [
      [text("Which one?\n[OPTIONS: Alpha | Beta | Gamma]"), done],
      [text("You picked Beta."), done],
    ],
    play: async (s) => {
      open(s, "choose");
      await untilFooter(s.fake, DM);
      await settled(s);
      await pressWhere(s, "opt:1");
      await untilFooter(s.fake, DM, 2);
    },
  },
  tools: {
    turns: [
      [
        text("Checking.\n"),
        { type: "tool_call", toolCallId: "t1", title: "npm test", kind: "execute" },
        { type: "tool_call_update", toolCallId: "t1", status: "completed" },
        { type: "tool_call", toolCallId: "t2", title: "git status", kind: "execute" },
        text("All good."),
        done,
      ],
    ],
    play: async (s) => {
      open(s, "check");
      await untilFooter(s.fake, DM);
    },
  },
};

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** Timestamps numbered by first appearance, nonces masked, JSON-encoded form fields read back. */
function normalize(value: unknown): unknown {
  const ids = firstSeenIds();
  const text = JSON.stringify(value)
    .replace(/\d{10}\.\d{6}/g, ids("ts"))
    .replace(/(parley:a:[^:"\\]+:)[A-Za-z0-9_-]{22}(:[10g])/g, "$1<nonce>$2");
  return JSON.parse(text);
}

function decoded(args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    out[k] = typeof v === "string" && /^[[{]/.test(v) ? JSON.parse(v) : v;
  }
  return out;
}

async function record(name: string, mode: Mode): Promise<unknown> {
  const scenario = SCENARIOS[name];
  if (!scenario) throw new Error(name);
  stack = await startStack({
    mode,
    turns: scenario.turns,
    clock: new ManualClock(),
    slack: { reactionsEnabled: false, showThinking: true },
  });
  await scenario.play(stack);
  await settled(stack);
  const calls = stack.fake.calls
    .filter((c) => !UNRECORDED.has(c.method))
    .map((c) => ({ call: c.method, args: decoded(c.args), ...(c.error ? { error: c.error } : {}) }));
  const transcript = normalize({ calls, permissionAnswers: stack.provider.answers });
  await stack.close();
  stack = undefined;
  return transcript;
}

describeGolden(
  "slack",
  SCENARIOS,
  async (_scenario, name) => {
    const socket = await record(name, "socket");
    const http = await record(name, "http");
    expect(http).toEqual(socket);
    return socket;
  },
  { title: (name) => `${name}: the same in Socket Mode and over HTTP`, timeoutMs: 30_000 },
);
