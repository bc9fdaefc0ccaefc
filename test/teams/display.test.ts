/**
 * What reaches a Teams user, end to end through the fake: every activity within 16,000 code points
 * and the byte bound, fences balanced; a credential split across agent chunks, hidden by markup in
 * a table that becomes cards, or shaped as a picture's name never reaches any text, card or
 * attachment name; the markdown subset (headings bold, no live HTML); [OPTIONS:] as chips picked
 * back as the user's next message; the model list as a card; local pictures inline after the text.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Json } from "../fakes/teams/server.js";
import type { Stack } from "./helpers.js";
import { cardTexts, done, FAST_OR_DEEP, seen, startStack, text, visible } from "./helpers.js";

const KEY = "AKIAQ7ZR3M5TXW2KP9VB";
const PNG = Uint8Array.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1,
  8, 6, 0, 0, 0,
]);
const GIF = Uint8Array.from([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const shownIn = (s: Stack) => s.fake.shown(s.fake.personalConversation(s.alice));
const footer = (s: Stack) => seen(s.fake, /Finished in \d+s/);

/** Markup and invisible characters removed: what a reader sees and could copy. */
function plain(s: string): string {
  return s
    .replace(/<[^>]*>/g, "")
    .replace(/&#?\w+;/g, "")
    .replace(/[*_`~\\\u200b-\u200d\u2060\ufeff]/g, "");
}

function fenceCount(text: string): number {
  return text.split("\n").filter((l) => /^\s{0,3}(```|~~~)/.test(l)).length;
}

describe("teams: what is shown", () => {
  it("every activity holds 16,000 code points and the byte bound; fences stay balanced", async () => {
    // Three-byte characters: the byte bound binds first.
    const para = `${"漢字かな交じり文。".repeat(40)}\n\n`;
    const code = `\`\`\`ts\n${"const 値 = 1;\n".repeat(400)}\`\`\`\n\n`;
    const long = Array.from({ length: 12 }, (_, i) => (i % 3 === 2 ? code : para.repeat(8)));
    stack = await startStack({ turns: [[...long.map(text), done]] });
    await stack.driver.post(stack.driver.message(stack.alice, "write a lot"));
    await footer(stack);
    const shown = shownIn(stack);
    expect(shown.length).toBeGreaterThan(2);
    for (const m of shown) {
      expect(Array.from(m.text).length).toBeLessThanOrEqual(16_000);
      expect(Buffer.byteLength(m.text)).toBeLessThanOrEqual(24_000);
      expect(fenceCount(m.text) % 2).toBe(0);
    }
  });

  it(`${KEY} split across chunks, hidden in a table that becomes cards, in a chip or a picture's name never shows`, async () => {
    const cwd = mkdtempSync(join(tmpdir(), "parley-teams-cwd-"));
    writeFileSync(join(cwd, `${KEY}.png`), PNG);
    // Wider than a grid may be on a phone: rendered as cards, one "- header: value" line per cell.
    const note = "a description long enough that no grid fits";
    const table = `| name | value | note |\n|---|---|---|\n| aws | AKIAQ7ZR3M**5TXW2KP9VB** | ${note} |\n| kept | plain | ${note} |\n`;
    stack = await startStack({
      provider: { cwd },
      turns: [
        [
          text("First AKIAQ7ZR3M"),
          text("5TXW2KP9VB then a table:\n\n"),
          text(table),
          text(`\n![${KEY}](./${KEY}.png)\n`),
          text(`[OPTIONS: use ${KEY} | no]`),
          done,
        ],
      ],
    });
    await stack.driver.post(stack.driver.message(stack.alice, "go"));
    await footer(stack);
    // The chips card comes last: everything the turn shows is on screen then.
    await vi.waitFor(() =>
      expect(shownIn(stack as Stack).some((m) => cardTexts(m).buttons.length > 0)).toBe(true),
    );
    const shown = shownIn(stack);
    for (const m of shown) {
      const card = cardTexts(m);
      const names = m.attachments.map((a) => String(a.name ?? ""));
      for (const form of [m.text, card.text, ...card.buttons, ...names]) {
        expect(form).not.toContain(KEY);
        expect(plain(form)).not.toContain(KEY);
      }
    }
    // The table was shown, as cards, with its harmless row intact; the chips kept their harmless one.
    expect(visible(stack.fake).join("\n")).toContain("value: plain");
    expect(visible(stack.fake)).toContain("no");
  });

  it("the markdown subset: a heading becomes a bold line, HTML shows as text, code keeps its brackets", async () => {
    stack = await startStack({
      turns: [[text("# Summary\n\nSee <b>this</b> and `a<b>` here.\n\n```\nif (a < b) {}\n```"), done]],
    });
    await stack.driver.post(stack.driver.message(stack.alice, "go"));
    await footer(stack);
    const answer = shownIn(stack)[0]?.text ?? "";
    expect(answer).toContain("**Summary**");
    expect(answer).not.toMatch(/^#/m);
    expect(answer).toContain("See &lt;b>this&lt;/b> and `a<b>` here.");
    expect(answer).toContain("if (a < b) {}");
  });

  it("[OPTIONS:] become a card of chips; a pick settles the card and is the user's next message, never a command", async () => {
    stack = await startStack({
      turns: [
        [text("Which one?\n[OPTIONS: /new | Plain answer]"), done],
        [text("picked"), done],
      ],
    });
    const { driver, alice, fake } = stack;
    await driver.post(driver.message(alice, "ask me"));
    const chips = await vi.waitFor(() => {
      const found = shownIn(stack as Stack).find((m) => cardTexts(m).buttons.length > 0);
      if (!found) throw new Error("no chips yet");
      return found;
    });
    expect(cardTexts(chips).buttons).toEqual(["/new", "Plain answer"]);
    const data = ((chips.attachments[0]?.content ?? {}) as { actions: { data: Json }[] }).actions[0]
      ?.data as Json;
    expect(data).toEqual({ parley: "option", i: 0 });
    await vi.waitFor(() => expect(stack?.sessions.isBusy(stack.startedKeys[0] ?? "")).toBe(false));
    await driver.post(driver.submit(alice, chips.id, data));
    await seen(fake, "picked");
    // The label went to the agent as text: "/new" started no fresh conversation.
    expect(stack.provider.prompts.at(-1)).toContain("/new");
    expect(visible(fake).some((v) => v.includes("Fresh conversation"))).toBe(false);
    expect(cardTexts(chips)).toEqual({ text: "✔️ /new", buttons: [] });
    // A second press on the settled card finds nothing to choose.
    await driver.post(driver.submit(alice, chips.id, data));
    await seen(fake, "That choice is no longer available.");
    expect(stack.provider.prompts).toHaveLength(2);
  });

  it("/model posts the agent's models as a card; a press switches and settles it", async () => {
    stack = await startStack({ turns: [[text("hi"), done]], provider: { modelMenu: FAST_OR_DEEP } });
    const { driver, alice } = stack;
    await driver.post(driver.message(alice, "hello"));
    await footer(stack);
    await vi.waitFor(() => expect(stack?.sessions.isBusy(stack.startedKeys[0] ?? "")).toBe(false));
    await driver.post(driver.message(alice, "/model"));
    const list = await vi.waitFor(() => {
      const found = shownIn(stack as Stack).find((m) => cardTexts(m).buttons.some((b) => b.includes("Deep")));
      if (!found) throw new Error("no model card");
      return found;
    });
    const deep = cardTexts(list).buttons.findIndex((b) => b.includes("Deep"));
    await driver.post(driver.submit(alice, list.id, { parley: "model", i: deep }));
    await vi.waitFor(() => expect(stack?.provider.modelChoices).toEqual(["deep"]));
    await vi.waitFor(() => expect(cardTexts(list).buttons).toEqual([]));
  });

  it("a local PNG follows the text as its own inline picture; a GIF is refused by path, visibly", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "parley-teams-cwd-"));
    writeFileSync(join(cwd, "chart.png"), PNG);
    writeFileSync(join(cwd, "spin.gif"), GIF);
    stack = await startStack({
      provider: { cwd },
      turns: [[text("Here:\n\n![chart](./chart.png)\n\n![spinner](./spin.gif)\n"), done]],
    });
    await stack.driver.post(stack.driver.message(stack.alice, "draw"));
    await vi.waitFor(() => expect(shownIn(stack as Stack).some((m) => m.attachments.length > 0)).toBe(true));
    const shown = shownIn(stack);
    const textAt = shown.findIndex((m) => m.text.startsWith("Here:"));
    const imageAt = shown.findIndex((m) => m.attachments.some((a) => a.contentType === "image/png"));
    expect(textAt).toBeGreaterThanOrEqual(0);
    expect(imageAt).toBeGreaterThan(textAt);
    const image = shown[imageAt]?.attachments[0] as Json;
    expect(image).toEqual({
      contentType: "image/png",
      contentUrl: `data:image/png;base64,${Buffer.from(PNG).toString("base64")}`,
      name: "chart.png",
    });
    expect(shown[imageAt]?.text).toBe("");
    expect(shown[textAt]?.text).not.toContain("chart.png");
    expect(shown[textAt]?.text).toContain("spin.gif");
    expect(shown[textAt]?.text).toContain("is not a PNG or JPEG");
  });
});
