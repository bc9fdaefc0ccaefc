/**
 * Golden transcripts, written once for every channel: the scenarios each channel records, the
 * harness that plays one through a renderer under the real TurnDriver, and the record/compare step
 * against fixtures/golden/<channel>-<scenario>.json. A channel's golden test gives only what differs:
 * its fake and how it reads a transcript off it, its renderer, and the texts its platform treats
 * specially (mentions, markup, byte caps). Re-record after an intended change with
 * `npm run golden:record` and review the fixture diff like code.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PendingApprovals, WidgetApprovalDecider } from "../../src/messaging/approval/approvals.js";
import { approvalOutcomeLabel } from "../../src/messaging/channel/render-kit.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { TurnDriver } from "../../src/messaging/turn/driver.js";
import type { Renderer } from "../../src/messaging/turn/renderer.js";
import type { ScriptedTurn, ScriptStep } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { done, text } from "./channel-under-test.js";

/** The re-record switch `npm run golden:record` sets: each transcript is written, then compared as always. */
export const RECORDING_GOLDEN = process.env.PARLEY_RECORD_GOLDEN === "1";

/** Every chat channel records these five, so a new channel is held to the same list as the rest. */
export type GoldenScenario =
  | "plain-answer"
  | "long-answer"
  | "options-and-steer"
  | "tool-approved"
  | "secret-in-emphasis";

/**
 * Compares a transcript with fixtures/golden/<fixture>.json (writing it first when re-recording).
 * A missing file fails: a golden test that compares nothing would pass on any regression.
 */
function expectGolden(fixture: string, actual: unknown): void {
  const path = new URL(`../../fixtures/golden/${fixture}.json`, import.meta.url);
  if (RECORDING_GOLDEN) writeFileSync(path, `${JSON.stringify(actual, null, 2)}\n`);
  expect(existsSync(path), `missing fixtures/golden/${fixture}.json; run npm run golden:record`).toBe(true);
  expect(actual).toEqual(JSON.parse(readFileSync(path, "utf8")));
}

/**
 * `<channel> golden transcripts`: one test a scenario, comparing what `transcript` returns with
 * fixtures/golden/<channel>-<scenario>.json. Any other assertion a channel makes goes in `transcript`.
 */
export function describeGolden<S>(
  channel: string,
  scenarios: Record<string, S>,
  transcript: (scenario: S, name: string) => Promise<unknown>,
  o: { title?: (name: string) => string; timeoutMs?: number } = {},
): void {
  describe(`${channel} golden transcripts`, () => {
    for (const [name, scenario] of Object.entries(scenarios)) {
      it(
        o.title?.(name) ?? name,
        async () => expectGolden(`${channel}-${name}`, await transcript(scenario, name)),
        o.timeoutMs,
      );
    }
  });
}

/**
 * Names each distinct id by its order of first appearance (`<id1>`, `<uuid2>`: one count across the
 * prefixes), so a transcript shows which ids repeat, never their random values.
 */
export function firstSeenIds(): (prefix: string) => (id: string) => string {
  const ids = new Map<string, string>();
  return (prefix) => (id) => {
    if (!ids.has(id)) ids.set(id, `<${prefix}${ids.size + 1}>`);
    return ids.get(id) as string;
  };
}

/** A tool prompt offering Allow once / Reject (Slack's ids its tool call after the request). */
export function toolPermission(
  o: { requestId?: string; toolCallId?: string; title?: string } = {},
): ScriptStep {
  return {
    type: "permission_request",
    requestId: o.requestId ?? "r1",
    toolCallId: o.toolCallId ?? "t1",
    title: o.title ?? "npm test",
    kind: "execute",
    options: [
      { optionId: "allow", name: "Allow once", kind: "allow_once" },
      { optionId: "reject", name: "Reject", kind: "reject_once" },
    ],
  };
}

/** A plan in a long yaml fence: `lines` lines, to be cut across a platform's messages. */
export function fencedPlan(lines: number, task = "task"): string {
  const code = Array.from({ length: lines }, (_, i) => `  step_${i}: run("${task} ${i}") # keep going`).join(
    "\n",
  );
  return `Plan:\n\n\`\`\`yaml\n${code}\n\`\`\`\n\nThat is the plan.`;
}

// ---- Renderer scenarios: one agent turn played through a channel's renderer under the TurnDriver.

export interface RendererScenario {
  turn: ScriptedTurn;
  /** The verdict pressed on the tool prompt. */
  press?: "approve" | "deny";
  /** The user's words the hub hands the renderer for the steer chip. */
  steer?: string;
}

/** What a channel's platform treats specially, in its own syntax. */
export interface RendererScenarioTexts {
  /** plain-answer's first chunk, ending inside an open ts fence: a mass mention, markup to escape. */
  greeting: string;
  /** long-answer's one text: past the platform's message cap (see fencedPlan). */
  longAnswer: string;
  /** secret-in-emphasis's one text: a credential cut by emphasis (and a mention). */
  secret: string;
  /** The tool prompt of tool-approved (default toolPermission()). */
  permission?: ScriptStep;
}

export function rendererScenarios(t: RendererScenarioTexts): Record<GoldenScenario, RendererScenario> {
  return {
    "plain-answer": {
      turn: {
        steps: [
          { type: "thinking", text: "The user wants a greeting." },
          text(t.greeting),
          text("```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nBye."),
          done,
        ],
      },
    },
    "long-answer": { turn: { steps: [text(t.longAnswer), done] } },
    "options-and-steer": {
      steer: "also check the weather",
      turn: {
        steps: [
          text("Listing files. [STEERING steer-1: weather too]"),
          text("Weather is sunny.\n[OPTIONS: Thanks | More detail]"),
          done,
        ],
      },
    },
    "tool-approved": {
      press: "approve",
      turn: {
        steps: [
          text("Let me run the tests."),
          {
            type: "tool_call",
            toolCallId: "t1",
            title: "npm test",
            kind: "execute",
            purpose: "Run the suite",
          },
          t.permission ?? toolPermission(),
        ],
        onPermission: { approve: [text("All 12 tests passed."), done] },
      },
    },
    "secret-in-emphasis": { turn: { steps: [text(t.secret), done] } },
  };
}

/** A renderer that shows the steer chip and writes a verdict onto its prompt. */
export type GoldenRenderer = Renderer & Required<Pick<Renderer, "noteSteer" | "markApproval">>;

export interface PlayOptions {
  /** Real milliseconds between the prompt opening and the press (default 20). */
  pressAfterMs?: number;
  /**
   * After the press, write its outcome onto the prompt, as the hub does for a typed reply (on a
   * platform whose prompt has no buttons the press alone changes nothing on screen).
   */
  markDecided?: boolean;
}

/**
 * Runs the scenario's turn through `renderer` under the real TurnDriver (a widget decider pressing
 * the scenario's verdict), then closes the renderer; the caller reads the transcript off its fake.
 * Returns the verdicts the agent received.
 */
export async function playRendererScenario(
  scenario: RendererScenario,
  renderer: GoldenRenderer,
  o: PlayOptions = {},
): Promise<ScriptedProvider["answers"]> {
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
              decider.press("golden", request.requestId, ticket.nonce, press);
              if (o.markDecided) void renderer.markApproval(request.requestId, approvalOutcomeLabel(press));
            }, o.pressAfterMs ?? 20);
          return ticket;
        },
      },
    },
  });
  await driver.run("prompt");
  await renderer.close();
  return provider.answers;
}

// ---- Channel scenarios: the whole channel against its fake, the user typing and pressing.

export interface ChannelScenario {
  turns: (ScriptedTurn | ScriptStep[])[];
  /** What the user sends to start the turn. */
  says: string;
  /** The user approves the tool prompt, the channel's own way (a button, a typed reply). */
  approves?: boolean;
}

/** What a channel's platform treats specially, in its own syntax. */
export interface ChannelScenarioTexts {
  /** plain-answer's chunks after the thinking: markup, a fence, a table. */
  greeting: string[];
  /** secret-in-emphasis's chunks: a credential cut by emphasis across chunks. */
  secret: string[];
  /** The tool prompt of tool-approved. */
  permission: ScriptStep;
}

export function channelScenarios(t: ChannelScenarioTexts): Record<GoldenScenario, ChannelScenario> {
  return {
    "plain-answer": {
      says: "hi",
      turns: [[{ type: "thinking", text: "The user wants a greeting." }, ...t.greeting.map(text), done]],
    },
    "long-answer": {
      says: "write a lot",
      turns: [
        [
          text(`${"Paragraph of prose that goes on for a while. ".repeat(60)}\n\n`),
          text(
            `\`\`\`py\n${"print('a fenced line that will be cut across messages')\n".repeat(60)}\`\`\`\n\n`,
          ),
          text("The end."),
          done,
        ],
      ],
    },
    "options-and-steer": {
      says: "list files",
      turns: [
        [
          text("The directory has 3 files.\n[OPTIONS: Show them | Done]"),
          { type: "steer_consumed", id: "s1", summary: "also check the weather" },
          text("Weather: sunny."),
          done,
        ],
      ],
    },
    "tool-approved": {
      says: "run the tests",
      approves: true,
      turns: [
        {
          steps: [
            text("Let me run the tests."),
            { type: "tool_call", toolCallId: "t1", title: "npm test", kind: "execute" },
            t.permission,
          ],
          onPermission: {
            approve: [
              { type: "tool_result", toolCallId: "t1", status: "completed", final: true },
              text("All 12 tests passed."),
              done,
            ],
          },
        },
      ],
    },
    "secret-in-emphasis": { says: "what is my key", turns: [[...t.secret.map(text), done]] },
  };
}
