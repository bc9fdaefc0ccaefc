/**
 * Golden transcripts: the ordered Feishu message requests (method, route, msg_type and the `md` each
 * `post` carries) the renderer makes for the shared scenarios (test/helpers/golden-scenarios.ts),
 * against the fake, compared with fixtures/golden/feishu-*.json. The clock is fixed, so the status
 * line is deterministic; message ids are normalized. Re-record after an intended change with
 * `npm run golden:record` and review the diff like code.
 */
import { afterEach } from "vitest";
import { createClient, createHttp, FeishuRest } from "../../src/feishu/client.js";
import { PromptLedger } from "../../src/feishu/prompts.js";
import { FeishuRenderer } from "../../src/feishu/renderer.js";
import { FeishuTransport } from "../../src/feishu/transport.js";
import { realClock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { postMarkdown } from "../fakes/feishu/render.js";
import { FakeFeishu } from "../fakes/feishu/server.js";
import { testDrops } from "../helpers/drops.js";
import type { RendererScenario } from "../helpers/golden-scenarios.js";
import {
  describeGolden,
  fencedPlan,
  firstSeenIds,
  playRendererScenario,
  rendererScenarios,
} from "../helpers/golden-scenarios.js";

const SCENARIOS = rendererScenarios({
  greeting: 'Hello <at user_id="all"></at>! Here is some code:\n\n```ts\nconst x = 1;\n',
  longAnswer: fencedPlan(140),
  secret: "Your key is AKIA**Q7ZR3M5T**XW2KP9VB and [AKIAQ7ZR3M](https://x.example)5TXW2KP9VB.",
});

let fake: FakeFeishu | undefined;
afterEach(async () => {
  await fake?.stop();
});

function normalize(value: unknown): unknown {
  const ids = firstSeenIds();
  return JSON.parse(JSON.stringify(value).replace(/om_\d+/g, ids("id")));
}

async function record(scenario: RendererScenario) {
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
  const transport = new FeishuTransport({
    drops: testDrops(new MemoryAuditSink(), "feishu"),
    audit: new MemoryAuditSink(),
    rest,
    logger,
  });
  const anchor = fake.seedMessage({ openId: "ou_golden0000000000000000000000000001" }, "go");
  const renderer = new FeishuRenderer({
    post: (md) => transport.postMarkdown({ replyTo: anchor, chatId: "" }, md),
    prompts: new PromptLedger(),
    now: () => 0,
    logger,
    commands: { new: "`/new`", stop: "`/stop`" },
  });
  // A Feishu prompt is answered by a typed reply: the press is followed by its outcome on screen.
  const permissionAnswers = await playRendererScenario(scenario, renderer, { markDecided: true });
  const calls = fake.callsTo(/^(POST|PUT) \/open-apis\/im\/v1\/messages/).map((c) => ({
    call: `${c.method} ${c.path}`,
    msgType: c.body?.msg_type,
    md: postMarkdown(JSON.parse(String(c.body?.content ?? "{}"))),
  }));
  return normalize({ calls, permissionAnswers });
}

describeGolden("feishu", SCENARIOS, record);
