/**
 * Golden transcripts: the ordered Webex REST calls (method, route, JSON body) the renderer makes for
 * the shared scenarios (test/helpers/golden-scenarios.ts), compared against
 * fixtures/golden/webex-*.json. Timers are manual and never advanced, so no status frame fires and
 * the transcript is deterministic; ids and nonces are normalized. Re-record after an intended change
 * with `npm run golden:record` and review the diff like code.
 */
import { afterEach } from "vitest";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { WebexRenderer } from "../../src/webex/renderer.js";
import { webexClient } from "../conformance/webex.harness.js";
import { FakeWebex } from "../fakes/webex/server.js";
import type { RendererScenario } from "../helpers/golden-scenarios.js";
import {
  describeGolden,
  fencedPlan,
  firstSeenIds,
  playRendererScenario,
  rendererScenarios,
} from "../helpers/golden-scenarios.js";
import { ManualClock } from "../helpers/manual-clock.js";

const ROOM = "room-golden";

const SCENARIOS = rendererScenarios({
  greeting: "Hello! Here is some code:\n\n```ts\nconst x = 1;\n",
  longAnswer: fencedPlan(400, "任务"),
  secret: "Your key is AKIA**Q7ZR3M5TXW2KP9VB** — keep it safe.",
});

let fake: FakeWebex | undefined;
afterEach(async () => {
  await fake?.close();
});

function normalize(value: unknown): unknown {
  const ids = firstSeenIds();
  const text = JSON.stringify(value)
    // Hydra ids (base64 of ciscospark://…) and the per-prompt nonce.
    .replace(/Y2lzY29zcGFyazovL[A-Za-z0-9+/]+/g, ids("id"))
    .replace(/"parley\.nonce":"[^"]+"/g, '"parley.nonce":"<nonce>"');
  return JSON.parse(text);
}

async function record(scenario: RendererScenario) {
  fake = await new FakeWebex().start();
  fake.addRoom(ROOM, "direct");
  const renderer = new WebexRenderer({
    rest: webexClient(fake),
    roomId: ROOM,
    logger: new MemoryLogger(),
    clock: new ManualClock(),
  });
  // The hub writes a decided prompt's outcome onto it (a press or a typed reply): so does the player.
  const permissionAnswers = await playRendererScenario(scenario, renderer, { markDecided: true });
  const calls = fake.calls
    .filter((c) => c.method !== "GET")
    .map((c) => ({ call: `${c.method} ${c.path}`, body: c.body }));
  return normalize({ calls, permissionAnswers });
}

describeGolden("webex", SCENARIOS, record);
