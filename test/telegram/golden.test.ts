/**
 * Golden transcripts: the ordered chat-addressed Bot API calls the whole Telegram channel makes for
 * the shared scenarios (test/helpers/golden-scenarios.ts), compared against
 * fixtures/golden/telegram-*.json. Re-record after an intended change with `npm run golden:record`
 * and review the diff like code.
 *
 * Deterministic by construction: the channel runs on a manual clock that is never advanced, so the
 * throttled live frames never fire and each transcript is the seal sequence (live streaming is
 * pinned by renderer.test.ts); only calls a chat's pacer orders are recorded (typing, polling and
 * callback answers run beside that queue, so their interleaving is not part of the contract).
 */
import { afterEach, beforeEach } from "vitest";
import { FakeTelegram } from "../fakes/telegram/server.js";
import type { ChannelScenario } from "../helpers/golden-scenarios.js";
import { channelScenarios, describeGolden, toolPermission } from "../helpers/golden-scenarios.js";
import type { ChannelUnderTest } from "./channel-harness.js";
import { OWNER, startChannel } from "./channel-harness.js";
import { ManualClock } from "./helpers.js";

const ORDERED = new Set([
  "sendMessage",
  "editMessageText",
  "editMessageReplyMarkup",
  "setMessageReaction",
  "sendPhoto",
]);

const SCENARIOS = channelScenarios({
  greeting: [
    "Hello! Here is **some** code:\n\n```ts\nconst x = 1 < 2;\n",
    "```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
  ],
  secret: ["Your key is AKIA**IOSF", "ODNN7EXAMPLE** — rotate it."],
  permission: toolPermission(),
});

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

const finished = (n = 1) =>
  fake.waitFor(
    () => fake.sentMessages(OWNER).filter((m) => m.visible.includes("Finished in")).length >= n,
    5000,
    "the answer",
  );

/** Presses the first button (Allow) of the permission prompt. */
async function approve(): Promise<void> {
  await fake.waitFor(
    () => fake.sentMessages(OWNER).some((m) => m.visible.includes("Permission needed")),
    5000,
    "the prompt",
  );
  const prompt = fake.sentMessages(OWNER).find((m) => m.visible.includes("Permission needed"));
  if (!prompt) throw new Error("no prompt");
  const keyboard = prompt.replyMarkup as { inline_keyboard: { callback_data: string }[][] };
  fake.pushCallback({ id: OWNER }, prompt.messageId, keyboard.inline_keyboard[0]?.[0]?.callback_data ?? "");
}

/** Nonces are random per prompt: the transcript shows their shape, not their value. */
function stable(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value).replace(/(a:[^:"]+:)[A-Za-z0-9_-]{22}(:[10t])/g, "$1<nonce>$2"));
}

async function record(scenario: ChannelScenario) {
  channel = await startChannel(fake, {
    turns: () => scenario.turns,
    overrides: { clock: new ManualClock() },
  });
  fake.pushMessage({ id: OWNER }, scenario.says);
  if (scenario.approves) await approve();
  await finished();
  const calls = fake.calls
    .filter((c) => ORDERED.has(c.method))
    .map((c) => ({ method: c.method, ok: c.ok, params: c.params }));
  return stable({
    calls,
    prompts: channel.providers.get("telegram:default:direct:42")?.prompts ?? [],
  });
}

describeGolden("telegram", SCENARIOS, record);
