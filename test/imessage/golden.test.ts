/**
 * Golden transcripts: the ordered `send` requests (handle, service, flat text) the iMessage renderer
 * makes for the shared scenarios (test/helpers/golden-scenarios.ts), through the real framing to the
 * fake imsg, compared with fixtures/golden/imessage-*.json. The clock is fixed, so the status line
 * is deterministic. Re-record after an intended change with `npm run golden:record` and review the
 * diff like code.
 */
import { afterEach } from "vitest";
import { OwnMessageLedger } from "../../src/imessage/ledger.js";
import { Presence } from "../../src/imessage/presence.js";
import { IMessageRenderer } from "../../src/imessage/renderer.js";
import { IMessageSurface } from "../../src/imessage/surface.js";
import { IMessageTransport } from "../../src/imessage/transport.js";
import { type Clock, realClock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { FakeImsgFolder } from "../fakes/imsg/control.js";
import { testDrops } from "../helpers/drops.js";
import type { RendererScenario } from "../helpers/golden-scenarios.js";
import {
  describeGolden,
  fencedPlan,
  playRendererScenario,
  rendererScenarios,
} from "../helpers/golden-scenarios.js";
import { imsgClientOn } from "./channel-harness.js";

const HANDLE = "+61400000000";

const SCENARIOS = rendererScenarios({
  greeting:
    "# Hello\n\n**Hi** there, see [the docs](https://example.com)! Here is some code:\n\n```ts\nconst x = 1;\n",
  longAnswer: fencedPlan(140),
  secret: "Your key is AKIA**Q7ZR3M5T**XW2KP9VB and [AKIAQ7ZR3M](https://x.example)5TXW2KP9VB.",
});

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

async function record(scenario: RendererScenario) {
  const folder = new FakeImsgFolder();
  const logger = new MemoryLogger();
  const client = imsgClientOn(folder, logger);
  await client.start();
  stops.push(() => client.stop());
  const fixed: Clock = { ...realClock, now: () => 0 };
  const transport = new IMessageTransport({
    drops: testDrops(new MemoryAuditSink(), "imessage"),
    audit: new MemoryAuditSink(),
    imsg: client,
    allowedHandles: [HANDLE],
    ledger: new OwnMessageLedger(fixed),
    service: "imessage",
    clock: realClock,
    logger,
  });
  const surface = new IMessageSurface(
    {
      transport,
      presence: new Presence(client, logger),
      agentName: "golden",
      commands: { new: "/new", stop: "/stop" },
    },
    { clock: fixed, logger },
  );
  const renderer = new IMessageRenderer({
    post: (md) => surface.postTo(HANDLE, md),
    typing: async () => {},
    clock: fixed,
    logger,
    commands: { new: "/new", stop: "/stop" },
  });
  // An iMessage prompt is answered by a typed reply: the press is followed by its outcome as a message.
  const permissionAnswers = await playRendererScenario(scenario, renderer, { markDecided: true });
  const sends = folder
    .requests()
    .filter((r) => r.method === "send" && r.answered === undefined)
    .map((r) => r.params);
  return { sends, permissionAnswers };
}

describeGolden("imessage", SCENARIOS, record);
