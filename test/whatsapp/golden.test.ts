/**
 * Golden transcripts: what the whole WhatsApp channel sends for the shared scenarios
 * (test/helpers/golden-scenarios.ts): each text, edit and reaction, in order, as the fake's server
 * received it, compared against fixtures/golden/whatsapp-*.json. Re-record after an intended change
 * with `npm run golden:record` and review the diff like code.
 *
 * Deterministic by construction: the channel runs on a manual clock that is never advanced, so no
 * throttled live frame fires and each transcript is the seal sequence (live streaming is pinned by
 * renderer.test.ts); message ids are replaced by their position in the transcript.
 */
import { expect } from "vitest";
import type { FakeWhatsApp } from "../fakes/whatsapp/server.js";
import { permissionRequest } from "../helpers/events.js";
import type { ChannelScenario } from "../helpers/golden-scenarios.js";
import { channelScenarios, describeGolden } from "../helpers/golden-scenarios.js";
import { ManualClock } from "../helpers/manual-clock.js";
import { connected, fakeWhatsAppLab, selfChat } from "./harness.js";

const lab = fakeWhatsAppLab();

const SCENARIOS = channelScenarios({
  greeting: [
    "# Hello\n\nHere is **some** _code_ and ~~old~~ `x__y`:\n\n```ts\nconst x = 1 < 2;\n",
    "```\n\n| name | size |\n|---|---|\n| a.txt | 1 KB |\n\n```mermaid\ngraph LR\nA[Start] --> B[End]\n```\n",
    "See [the docs](https://example.com/docs).",
  ],
  secret: ["Your key is AKIA**Q7ZR", "3M5TXW2KP9VB** — rotate it. Ask @4917012345678 too."],
  permission: permissionRequest({ requestId: "r1", title: "npm test" }),
});

const finished = (fake: FakeWhatsApp, n = 1) =>
  fake.waitFor(() => fake.visible().filter((v) => v.includes("Finished in")).length >= n, 5000, "the answer");

/** The transcript: sends, edits and reactions, message ids replaced by their order of appearance. */
function transcript(fake: FakeWhatsApp): unknown[] {
  const ids = new Map<string, string>();
  const name = (id: string) => {
    if (!ids.has(id)) ids.set(id, `#${ids.size + 1}`);
    return ids.get(id);
  };
  return fake.records.flatMap((r): Record<string, string | undefined>[] => {
    if (r.kind === "send") return [{ send: name(r.id), text: r.text }];
    if (r.kind === "edit") return [{ edit: name(r.id), text: r.text }];
    if (r.kind === "react") return [{ react: name(r.target), emoji: r.emoji }];
    return [];
  });
}

async function record(scenario: ChannelScenario) {
  const c = await lab.channel({ turns: () => scenario.turns, overrides: { clock: new ManualClock() } });
  await connected(c, lab.fake);
  selfChat(lab.fake, scenario.says);
  if (scenario.approves) {
    // Approved the WhatsApp way: a typed `1` once the prompt is on screen.
    await lab.fake.waitFor(
      () => lab.fake.visible().some((v) => v.includes("Permission needed")),
      5000,
      "the prompt",
    );
    selfChat(lab.fake, "1");
  }
  await finished(lab.fake);
  // No message parley sent may notify anyone by a mention.
  expect(lab.fake.messages.every((m) => m.mentions === 0)).toBe(true);
  const key = [...c.providers.keys()][0] ?? "";
  return { calls: transcript(lab.fake), prompts: c.providers.get(key)?.prompts ?? [] };
}

describeGolden("whatsapp", SCENARIOS, record);
