/**
 * Golden transcripts: the ordered Discord REST calls (method, route, JSON body) the renderer makes
 * for the shared scenarios (test/helpers/golden-scenarios.ts), compared against
 * fixtures/golden/discord-*.json. Timers are fake and never advanced, so no throttled live frame
 * fires and the transcript is deterministic; snowflakes and nonces are normalized. Re-record after an
 * intended change with `npm run golden:record` and review the diff like code.
 */
import { afterEach } from "vitest";
import { DiscordClient } from "../../src/discord/client.js";
import { DiscordRenderer } from "../../src/discord/renderer.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { FakeDiscord } from "../fakes/discord/server.js";
import type { RendererScenario } from "../helpers/golden-scenarios.js";
import {
  describeGolden,
  fencedPlan,
  firstSeenIds,
  playRendererScenario,
  rendererScenarios,
} from "../helpers/golden-scenarios.js";
import { DM, FakeTimers } from "./helpers.js";

const SCENARIOS = rendererScenarios({
  greeting: "Hello @everyone! Here is some code:\n\n```ts\nconst x = 1;\n",
  longAnswer: fencedPlan(90),
  secret: "Your key is AKIA**IOSFODNN7EXAMPLE** and <@123> pinged.",
});

let fake: FakeDiscord | undefined;
let client: DiscordClient | undefined;
afterEach(async () => {
  await client?.close();
  await fake?.close();
});

function normalize(value: unknown): unknown {
  const ids = firstSeenIds();
  const text = JSON.stringify(value)
    .replace(/\d{17,20}/g, ids("id"))
    .replace(/a:r1:[A-Za-z0-9_-]{22}:/g, "a:r1:<nonce>:");
  return JSON.parse(text);
}

async function record(scenario: RendererScenario) {
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
  const permissionAnswers = await playRendererScenario(scenario, renderer);
  const calls = fake.calls
    .filter((c) => c.method !== "GET" && !/\/typing$/.test(c.path))
    .map((c) => ({ call: `${c.method} ${c.path}`, body: c.body }));
  return normalize({ calls, permissionAnswers });
}

describeGolden("discord", SCENARIOS, record);
