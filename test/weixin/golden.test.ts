/**
 * Golden transcripts: the ordered iLink sendmessage bodies (the text each carries, its recipient and
 * context token) the renderer makes for the shared scenarios (test/helpers/golden-scenarios.ts),
 * against the fake, compared with fixtures/golden/weixin-*.json. The clock is fixed, so the status
 * line is deterministic. Re-record after an intended change with `npm run golden:record` and review
 * the diff like code.
 */
import { afterEach } from "vitest";
import { realClock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { IlinkClient } from "../../src/weixin/client.js";
import { PeerState } from "../../src/weixin/peers.js";
import { PeerPolicy } from "../../src/weixin/policy.js";
import { WeixinRenderer } from "../../src/weixin/renderer.js";
import { WeixinTransport } from "../../src/weixin/transport.js";
import { FakeIlink } from "../fakes/weixin/server.js";
import { testDrops } from "../helpers/drops.js";
import type { RendererScenario } from "../helpers/golden-scenarios.js";
import {
  describeGolden,
  fencedPlan,
  playRendererScenario,
  rendererScenarios,
} from "../helpers/golden-scenarios.js";

const PEER = "golden0001@im.wechat";

const SCENARIOS = rendererScenarios({
  // A 1:1 chat has no mass-mention grammar: the greeting carries none.
  greeting: "Hello! Here is some code:\n\n```ts\nconst x = 1;\n",
  longAnswer: fencedPlan(140),
  secret: "Your key is AKIA**Q7ZR3M5T**XW2KP9VB and [AKIAQ7ZR3M](https://x.example)5TXW2KP9VB.",
});

let fake: FakeIlink | undefined;
afterEach(async () => {
  await fake?.stop();
});

async function record(scenario: RendererScenario) {
  fake = await FakeIlink.start({ lifetimeMs: 30_000 });
  const logger = new MemoryLogger();
  const peers = new PeerState({ logger });
  await peers.rememberToken(PEER, fake.push(PEER, "go").contextToken);
  const transport = new WeixinTransport({
    drops: testDrops(new MemoryAuditSink(), "weixin"),
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
  // A WeChat prompt is answered by a typed reply: the press is followed by its outcome on screen.
  const permissionAnswers = await playRendererScenario(scenario, renderer, { markDecided: true });
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
  return { sends, permissionAnswers };
}

describeGolden("weixin", SCENARIOS, record);
