/**
 * Golden transcripts: the ordered WeCom wire traffic (stream frames on the message's req_id, pushes,
 * response_url posts) the renderer makes for the shared scenarios (test/helpers/golden-scenarios.ts),
 * compared against fixtures/golden/wecom-*.json. The clock is manual and never advanced, so no
 * throttled live frame fires and the transcript is deterministic; req_ids and stream ids are
 * normalized. Re-record after an intended change with `npm run golden:record` and review the diff
 * like code.
 */
import { afterEach } from "vitest";
import { permissionRequest } from "../helpers/events.js";
import type { RendererScenario } from "../helpers/golden-scenarios.js";
import {
  describeGolden,
  firstSeenIds,
  playRendererScenario,
  rendererScenarios,
} from "../helpers/golden-scenarios.js";
import { ManualClock } from "../helpers/manual-clock.js";
import type { Wired } from "./helpers.js";
import { wire } from "./helpers.js";

// Past one bubble's byte cap in CJK (3 bytes each): the head is sealed in the bubble, the tail pushed.
const cjk = Array.from(
  { length: 40 },
  (_, i) => `第${i}段：${"企业微信的长连接机器人逐字流式回答。".repeat(12)}`,
).join("\n\n");

const SCENARIOS = rendererScenarios({
  greeting: "Hello @all! Here is some code:\n\n```ts\nconst x = 1;\n",
  longAnswer: `计划如下：\n\n${cjk}\n\n以上。`,
  secret: "Your key is AKIA**IOSFODNN7EXAMPLE** and <@zhangsan> pinged.",
  permission: permissionRequest({ requestId: "r1", title: "npm test", kind: "execute" }),
});

let w: Wired | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

/** Ids the fake or the renderer made up, numbered in order of first appearance. */
function normalize(value: unknown): unknown {
  const ids = firstSeenIds();
  const text = JSON.stringify(value).replace(
    /\bcb-[a-z0-9-]+|\baibot_send_msg_[a-z0-9_]+|\bturn:[a-f0-9-]{36}/g,
    ids("id"),
  );
  return JSON.parse(text);
}

async function record(scenario: RendererScenario) {
  // Acks arrive over a real socket while the manual clock stands still: their bound never fires.
  w = await wire({ clock: new ManualClock(), ackTimeoutMs: 3_600_000 });
  const fake = w.fake;
  const renderer = w.renderer(w.message({ text: "prompt" }), { throttleMs: 1000 });
  // A WeCom prompt is answered by a typed reply: the verdict, then the prompt on screen closed.
  const permissionAnswers = await playRendererScenario(scenario, renderer, { markDecided: true });
  const wireCalls = fake.frames
    .filter((f) => f.cmd === "aibot_respond_msg" || f.cmd === "aibot_send_msg")
    .map((f) => ({ cmd: f.cmd, reqId: f.reqId, body: f.body }));
  const posts = fake.posts.map((p) => ({ content: p.content }));
  return normalize({ frames: wireCalls, posts, visible: fake.visible(), permissionAnswers });
}

describeGolden("wecom", SCENARIOS, record);
