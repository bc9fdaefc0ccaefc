/**
 * Lengths and secrets on Slack's own surfaces, streamed and edited alike: every message within 3,900
 * code points and every append within 12,000, fences balanced in each message; a key split over two
 * chunks, or over two appends inside `**`, never reaches what the user sees, a file title or a
 * block; and the model's `<!channel>` pings nobody.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  canonicalizeDisplay,
  decodeCharacterReferences,
} from "../../src/messaging/security/display-safety.js";
import { permissionRequest } from "../helpers/events.js";
import type { Stack } from "./helpers.js";
import { ALICE, DM, done, fenceLines, settled, startStack, text, until, untilFooter } from "./helpers.js";

const KEY = "AKIAQ7ZR3M5TXW2KP9VB";
const PNG = Uint8Array.from(
  Buffer.from(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000" +
      "1f15c4890000000d4944415478da63f8cfc0f01f0005000201a5f245e60000000049454e44ae426082",
    "hex",
  ),
);

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** Every form of everything the bot sent: raw text, appends, rendered text, blocks, labels, titles. */
function everything(s: Stack): string[] {
  const f = s.fake;
  const raw = f
    .botMessages()
    .flatMap((m) => [
      m.text,
      ...m.appends,
      JSON.stringify(m.blocks),
      ...f.visibleParts(m),
      ...[...m.tasks.values()].map((t) => t.title),
      ...m.files.map((x) => x.title),
    ]);
  const statuses = [...f.status.values(), ...f.titles.values()];
  return [...raw, ...statuses].flatMap((t) => [
    t,
    canonicalizeDisplay(decodeCharacterReferences(t)).replace(/\s/g, ""),
  ]);
}

describe.each([
  ["streamed", true],
  ["edited", false],
] as const)("slack limits and secrets (%s)", (_name, streaming) => {
  it("keeps every message within 3,900 code points, every append within 12,000, fences balanced", async () => {
    const para = "Prose that goes on for a while and then some more, to fill a message. ".repeat(12);
    const code = Array.from({ length: 70 }, (_, i) => `  line_${i} = compute(${i}) # ${"x".repeat(20)}`).join(
      "\n",
    );
    const chunks = Array.from({ length: 6 }, () => `${para}\n\n\`\`\`py\n${code}\n\`\`\`\n\n`);
    stack = await startStack({ slack: { streaming }, turns: [[...chunks.map(text), text("Done."), done]] });
    stack.fake.userMessage({ channel: DM, user: ALICE, text: "a lot please" });
    await untilFooter(stack.fake, DM);
    await settled(stack);
    const sent = stack.fake.botMessages(DM);
    expect(sent.length).toBeGreaterThan(4);
    expect(stack.fake.violations).toEqual([]);
    for (const m of sent) {
      expect(Array.from(m.text).length).toBeLessThanOrEqual(3900);
      for (const a of m.appends) expect(Array.from(a).length).toBeLessThanOrEqual(12_000);
      expect(fenceLines(m.text) % 2).toBe(0);
    }
    expect(stack.fake.callsTo(streaming ? "chat.startStream" : "chat.postMessage").length).toBeGreaterThan(0);
  });

  it("never shows a key split over chunks, appends or emphasis, in text, blocks, titles or statuses; pings nobody", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "parley-slack-img-"));
    writeFileSync(join(cwd, "shot.png"), PNG);
    stack = await startStack({
      slack: { streaming, showThinking: true },
      provider: { cwd },
      turns: [
        {
          steps: [
            { type: "thinking", text: `thinking about ${KEY.slice(0, 8)}` },
            { type: "thinking", text: `${KEY.slice(8)} now` },
            text(`First: key ${KEY.slice(0, 9)}`),
            text(`${KEY.slice(9)} is here.\n`),
            text(`Then **${KEY.slice(0, 10)}`),
            { delayMs: 5 },
            text(`${KEY.slice(10)}** in bold.\n`),
            // Markup that hides the key from a literal scan; Slack renders it whole.
            text(`And ${KEY.slice(0, 4)}**${KEY.slice(4, 12)}`),
            { delayMs: 5 },
            text(`**${KEY.slice(12)} rendered.\n`),
            text("Hey <!channel> and <@U0000000002>, see [this](https://example.com/x).\n"),
            text(`![${KEY}](./shot.png)\n`),
            { type: "tool_call", toolCallId: "t1", title: `curl -H "x: ${KEY}"`, kind: "fetch" },
            permissionRequest({ requestId: "r1", title: `aws --key ${KEY}` }),
          ],
          onPermission: { deny: [text(`[OPTIONS: use ${KEY} | no]`), done] },
        },
      ],
    });
    const { ts } = stack.fake.userMessage({ channel: DM, user: ALICE, text: "go" });
    const f = stack.fake;
    await until(
      () => f.botMessages(DM).some((m) => JSON.stringify(m.blocks).includes("parley:a:")),
      "the prompt",
    );
    f.userMessage({ channel: DM, user: ALICE, text: "2", threadTs: ts });
    await untilFooter(f, DM);
    await settled(stack);
    for (const form of everything(stack)) {
      expect(form).not.toContain(KEY);
      expect(form).not.toContain(KEY.slice(4));
    }
    expect(stack.fake.controlSequences()).toEqual([]);
    // The image still went up (its title redacted), beside the text, without the token.
    expect(f.botMessages(DM).flatMap((m) => m.files)).toHaveLength(1);
    expect(f.uploads.map((u) => u.authorization)).toEqual([undefined]);
  });
});
