/**
 * Golden transcripts: what the whole WhatsApp channel sends for scripted agent streams (each text,
 * edit and reaction, in order, as the fake's server received it), compared against
 * fixtures/golden/whatsapp-*.json. Re-record after an intended change with
 * `PARLEY_RECORD_GOLDEN=1 npx vitest run test/whatsapp/golden.test.ts` and review the diff like code.
 *
 * Deterministic by construction: the channel runs on a manual clock that is never advanced, so no
 * throttled live frame fires and each transcript is the seal sequence (live streaming is pinned by
 * renderer.test.ts); message ids are replaced by their position in the transcript.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ScriptedTurn, ScriptStep } from "../../src/providers/scripted.js";
import type { FakeWhatsApp } from "../fakes/whatsapp/server.js";
import { permissionRequest } from "../helpers/events.js";
import { ManualClock } from "../helpers/manual-clock.js";
import type { ChannelUnderTest } from "./harness.js";
import { connected, done, fakeWhatsAppLab, selfChat, text } from "./harness.js";

const RECORD = process.env.PARLEY_RECORD_GOLDEN === "1";
const lab = fakeWhatsAppLab();

interface Scenario {
  turns: (ScriptedTurn | ScriptStep[])[];
  play: (fake: FakeWhatsApp, c: ChannelUnderTest) => Promise<void>;
}

const finished = (fake: FakeWhatsApp, n = 1) =>
  fake.waitFor(() => fake.visible().filter((v) => v.includes("Finished in")).length >= n, 5000, "the answer");

const SCENARIOS: Record<string, Scenario> = {
  "plain-answer": {
    turns: [
      [
        { type: "thinking", text: "The user wants a greeting." },
        text("# Hello\n\nHere is **some** _code_ and ~~old~~ `x__y`:\n\n```ts\nconst x = 1 < 2;\n"),
        text(
          "```\n\n| name | size |\n|---|---|\n| a.txt | 1 KB |\n\n```mermaid\ngraph LR\nA[Start] --> B[End]\n```\n",
        ),
        text("See [the docs](https://example.com/docs)."),
        done,
      ],
    ],
    play: async (fake) => {
      selfChat(fake, "hi");
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
      selfChat(fake, "write a lot");
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
      selfChat(fake, "list files");
      await finished(fake);
    },
  },
  "tool-approved": {
    turns: [
      {
        steps: [
          text("Let me run the tests."),
          { type: "tool_call", toolCallId: "t1", title: "npm test", kind: "execute" },
          permissionRequest({ requestId: "r1", title: "npm test" }),
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
      selfChat(fake, "run the tests");
      await fake.waitFor(
        () => fake.visible().some((v) => v.includes("Permission needed")),
        5000,
        "the prompt",
      );
      selfChat(fake, "1");
      await finished(fake);
    },
  },
  "secret-in-emphasis": {
    turns: [
      [text("Your key is AKIA**Q7ZR"), text("3M5TXW2KP9VB** — rotate it. Ask @4917012345678 too."), done],
    ],
    play: async (fake) => {
      selfChat(fake, "what is my key");
      await finished(fake);
    },
  },
};

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

describe("whatsapp golden transcripts", () => {
  for (const [name, scenario] of Object.entries(SCENARIOS)) {
    it(name, async () => {
      const path = new URL(`../../fixtures/golden/whatsapp-${name}.json`, import.meta.url);
      const c = await lab.channel({ turns: () => scenario.turns, overrides: { clock: new ManualClock() } });
      await connected(c, lab.fake);
      await scenario.play(lab.fake, c);
      const key = [...c.providers.keys()][0] ?? "";
      const actual = { calls: transcript(lab.fake), prompts: c.providers.get(key)?.prompts ?? [] };
      if (RECORD) writeFileSync(path, `${JSON.stringify(actual, null, 2)}\n`);
      expect(existsSync(path), "missing golden file; re-record with PARLEY_RECORD_GOLDEN=1").toBe(true);
      expect(actual).toEqual(JSON.parse(readFileSync(path, "utf8")));
      // No message parley sent may notify anyone by a mention.
      expect(lab.fake.messages.every((m) => m.mentions === 0)).toBe(true);
    });
  }
});
