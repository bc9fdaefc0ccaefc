/**
 * Golden transcripts: the ordered chat-addressed Bot API calls the whole Telegram channel makes for
 * scripted agent streams, compared against fixtures/golden/telegram-*.json. Re-record after an
 * intended change with `PARLEY_RECORD_GOLDEN=1 npx vitest run test/telegram/golden.test.ts` and
 * review the diff like code.
 *
 * Deterministic by construction: the channel runs on a manual clock that is never advanced, so the
 * throttled live frames never fire and each transcript is the seal sequence (live streaming is
 * pinned by renderer.test.ts); only calls a chat's pacer orders are recorded (typing, polling and
 * callback answers run beside that queue, so their interleaving is not part of the contract).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ScriptedTurn, ScriptStep } from "../../src/providers/scripted.js";
import { FakeTelegram } from "../fakes/telegram/server.js";
import type { ChannelUnderTest } from "./channel-harness.js";
import { done, OWNER, startChannel, text } from "./channel-harness.js";
import { ManualClock } from "./helpers.js";

const RECORD = process.env.PARLEY_RECORD_GOLDEN === "1";
const ORDERED = new Set([
  "sendMessage",
  "editMessageText",
  "editMessageReplyMarkup",
  "setMessageReaction",
  "sendPhoto",
]);

const permission: ScriptStep = {
  type: "permission_request",
  requestId: "r1",
  toolCallId: "t1",
  title: "npm test",
  kind: "execute",
  options: [
    { optionId: "allow", name: "Allow once", kind: "allow_once" },
    { optionId: "reject", name: "Reject", kind: "reject_once" },
  ],
};

interface Scenario {
  turns: (ScriptedTurn | ScriptStep[])[];
  /** Drive the conversation; `fake` is live and the channel is started. */
  play: (fake: FakeTelegram) => Promise<void>;
}

const finished = (fake: FakeTelegram, n = 1) =>
  fake.waitFor(
    () => fake.sentMessages(OWNER).filter((m) => m.visible.includes("Finished in")).length >= n,
    5000,
    "the answer",
  );

const SCENARIOS: Record<string, Scenario> = {
  "plain-answer": {
    turns: [
      [
        { type: "thinking", text: "The user wants a greeting." },
        text("Hello! Here is **some** code:\n\n```ts\nconst x = 1 < 2;\n"),
        text("```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"),
        done,
      ],
    ],
    play: async (fake) => {
      fake.pushMessage({ id: OWNER }, "hi");
      await finished(fake);
    },
  },
  "long-answer": {
    turns: [
      [
        text(`${"Paragraph of prose that goes on for a while. ".repeat(60)}\n\n`),
        text(`\`\`\`py\n${"print('a fenced line that will be cut across messages')\n".repeat(60)}\`\`\`\n\n`),
        text("The end."),
        done,
      ],
    ],
    play: async (fake) => {
      fake.pushMessage({ id: OWNER }, "write a lot");
      await finished(fake);
    },
  },
  "options-and-steer": {
    turns: [
      [
        text("The directory has 3 files.\n[OPTIONS: Show them | Done]"),
        { type: "steer_consumed", id: "s1", summary: "also check the weather" },
        text("Weather: sunny."),
        done,
      ],
    ],
    play: async (fake) => {
      fake.pushMessage({ id: OWNER }, "list files");
      await finished(fake);
    },
  },
  "tool-approved": {
    turns: [
      {
        steps: [
          text("Let me run the tests."),
          { type: "tool_call", toolCallId: "t1", title: "npm test", kind: "execute" },
          permission,
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
    play: async (fake) => {
      fake.pushMessage({ id: OWNER }, "run the tests");
      await fake.waitFor(
        () => fake.sentMessages(OWNER).some((m) => m.visible.includes("Permission needed")),
        5000,
        "the prompt",
      );
      const prompt = fake.sentMessages(OWNER).find((m) => m.visible.includes("Permission needed"));
      if (!prompt) throw new Error("no prompt");
      const keyboard = prompt.replyMarkup as { inline_keyboard: { callback_data: string }[][] };
      fake.pushCallback(
        { id: OWNER },
        prompt.messageId,
        keyboard.inline_keyboard[0]?.[0]?.callback_data ?? "",
      );
      await finished(fake);
    },
  },
  "secret-in-emphasis": {
    turns: [[text("Your key is AKIA**IOSF"), text("ODNN7EXAMPLE** — rotate it."), done]],
    play: async (fake) => {
      fake.pushMessage({ id: OWNER }, "what is my key");
      await finished(fake);
    },
  },
};

let fake: FakeTelegram;
let channel: ChannelUnderTest | undefined;

beforeEach(async () => {
  fake = await FakeTelegram.start({ lifetimeMs: 30_000 });
});

afterEach(async () => {
  await channel?.stop();
  channel = undefined;
  await fake.stop();
});

/** Nonces are random per prompt: the transcript shows their shape, not their value. */
function stable(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value).replace(/(a:[^:"]+:)[A-Za-z0-9_-]{22}(:[10t])/g, "$1<nonce>$2"));
}

describe("telegram golden transcripts", () => {
  for (const [name, scenario] of Object.entries(SCENARIOS)) {
    it(name, async () => {
      const path = new URL(`../../fixtures/golden/telegram-${name}.json`, import.meta.url);
      channel = await startChannel(fake, {
        turns: () => scenario.turns,
        overrides: { clock: new ManualClock() },
      });
      await scenario.play(fake);
      const calls = fake.calls
        .filter((c) => ORDERED.has(c.method))
        .map((c) => ({ method: c.method, ok: c.ok, params: c.params }));
      const actual = stable({
        calls,
        prompts: channel.providers.get("telegram:default:direct:42")?.prompts ?? [],
      });
      if (RECORD) writeFileSync(path, `${JSON.stringify(actual, null, 2)}\n`);
      expect(existsSync(path), "missing golden file; re-record with PARLEY_RECORD_GOLDEN=1").toBe(true);
      expect(actual).toEqual(JSON.parse(readFileSync(path, "utf8")));
    });
  }
});
