/**
 * Golden transcripts: the ordered Connector calls (method, route, activity) the Teams renderer makes
 * for scripted agent streams, through the real SDK client against the fake, compared with
 * fixtures/golden/teams-*.json. The renderer's clock never moves, so no throttled live frame fires
 * and the transcript is deterministic; ids, the conversation and nonces are normalized; typing
 * indicators are left out. The scenarios are the shared ones (test/helpers/golden-scenarios.ts).
 * Re-record after an intended change with `npm run golden:record` and review the diff like code.
 */
import { afterEach } from "vitest";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { ChoiceBook } from "../../src/teams/cards.js";
import { TeamsOutbox } from "../../src/teams/outbox.js";
import { TeamsRenderer } from "../../src/teams/renderer.js";
import { FakeTeams } from "../fakes/teams/server.js";
import type { RendererScenario } from "../helpers/golden-scenarios.js";
import {
  describeGolden,
  fencedPlan,
  firstSeenIds,
  playRendererScenario,
  rendererScenarios,
} from "../helpers/golden-scenarios.js";
import { ManualClock } from "../helpers/manual-clock.js";
import { teamsClientOn } from "./helpers.js";

const SCENARIOS = rendererScenarios({
  greeting: "# Hello\n\nHere is <b>some</b> code:\n\n```ts\nconst x = 1 < 2;\n",
  longAnswer: fencedPlan(900),
  secret: "Your key is AKIA**IOSFODNN7EXAMPLE** and <at>everyone</at> pinged.",
});

let fake: FakeTeams | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

function normalize(value: unknown, f: FakeTeams): unknown {
  const named = firstSeenIds();
  const text = JSON.stringify(value)
    .split(encodeURIComponent(f.personalConversation([...f.users.values()][0] as never)))
    .join("<conversation>")
    .replace(/1%3A[0-9a-f]+|1:[0-9a-f]{6,}/g, named("id"))
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, named("uuid"))
    .replace(/"n":"[A-Za-z0-9_-]{22}"/g, '"n":"<nonce>"');
  return JSON.parse(text);
}

async function record(scenario: RendererScenario) {
  fake = await new FakeTeams().start();
  const alice = fake.addUser("Alice");
  const logger = new MemoryLogger();
  const client = teamsClientOn(fake, { logger, connector: { minGapMs: 0 } });
  const outbox = new TeamsOutbox({
    sender: client,
    address: {
      conversationId: fake.personalConversation(alice),
      serviceUrl: fake.serviceUrl,
      userAccountId: alice.accountId,
      identity: alice.upn,
      botId: `28:${fake.appId}`,
    },
    audit: new MemoryAuditSink(),
    logger,
  });
  const renderer = new TeamsRenderer({
    outbox,
    owner: false,
    choices: new ChoiceBook(),
    audit: new MemoryAuditSink(),
    logger,
    clock: new ManualClock(),
  });
  const permissionAnswers = await playRendererScenario(scenario, renderer, { pressAfterMs: 50 });
  const calls = fake.calls
    .filter((c) => c.method !== "GET" && (c.body as { type?: string } | undefined)?.type !== "typing")
    .map((c) => {
      const b = (c.body ?? {}) as Record<string, unknown>;
      return {
        call: `${c.method} ${c.path}`,
        body: { type: b.type, text: b.text, textFormat: b.textFormat, attachments: b.attachments },
      };
    });
  return normalize({ calls, permissionAnswers }, fake);
}

describeGolden("teams", SCENARIOS, record);
