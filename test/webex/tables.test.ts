/**
 * Tables in a Webex answer (policy auto): a grid that would cross one message is shown as cards,
 * each readable on its own; a table no card can show and no message can hold (a header-only grid
 * hundreds of columns wide) is kept raw and cut by the byte-exact chunker, so its pieces put back
 * together are the table exactly, while the rest of the answer keeps the fence-safe splitter.
 */
import { describe, expect, it } from "vitest";
import { WEBEX_MAX_BYTES } from "../../src/webex/format.js";
import type { WebexOptions } from "./harness.js";
import { ALICE, DM, done, text, until, webexLab } from "./harness.js";

const lab = webexLab();
const channel = (o?: WebexOptions) => lab.channel(o);
const posted = () => lab.fake.botMessages(DM).map((m) => m.markdown);
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function fencesBalanced(markdown: string): boolean {
  return markdown.split("\n").filter((l) => l.trimStart().startsWith("```")).length % 2 === 0;
}

describe("webex tables", () => {
  it("a long narrow table becomes cards instead of a grid cut across messages", async () => {
    const rows = Array.from({ length: 400 }, (_, i) => `| row${i} | ${i * 7} |`).join("\n");
    await channel({
      turns: [[text(`Totals:\n\n| name | total |\n|---|---|\n${rows}\n\nEnd of totals.`), done]],
    });
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "totals" });
    await until(() => posted().some((v) => v.includes("End of totals.")), "the answer");
    const all = posted();
    expect(all.length).toBeGreaterThan(1);
    for (const m of all) expect(m).not.toContain("```");
    const joined = all.join("\n");
    for (const i of [0, 199, 399]) expect(joined).toContain(`**row${i}**\n- total: ${i * 7}`);
  });

  it("deliberate improvement over the spec: only an over-size raw grid takes the byte-exact chunker", async () => {
    // A header-only table (no row to make a card from) far wider than one message, in CJK and emoji.
    const header = `| ${Array.from({ length: 900 }, (_, i) => `列🙂${i}`).join(" | ")} |`;
    const table = `${header}\n|${"---|".repeat(900)}`;
    const code = `\`\`\`python\n${'print("数据")\n'.repeat(700)}\`\`\``;
    const answer = `Here is the schema.\n\n${table}\n\nAnd the loader:\n\n${code}\n\nDone.`;
    await channel({ turns: [[text(answer), done]] });
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "schema" });
    await until(() => posted().some((v) => v.includes("Done.")), "the answer");
    const all = posted();
    for (const m of all) {
      expect(Buffer.byteLength(m, "utf8")).toBeLessThanOrEqual(WEBEX_MAX_BYTES);
      expect(LONE_SURROGATE.test(m), "a cut surrogate pair").toBe(false);
    }
    // The table's pieces are consecutive messages whose concatenation is the table, byte for byte.
    const first = all.findIndex((m) => m.startsWith("| 列🙂0 |"));
    expect(first).toBeGreaterThan(-1);
    let joined = "";
    let last = first;
    while (joined.length < table.length && last < all.length) joined += all[last++];
    expect(last - first).toBeGreaterThan(2);
    expect(joined).toBe(table);
    // Everything else went through the fence-safe splitter: the long code block is cut into
    // several messages, each with its fence balanced.
    const rest = [...all.slice(0, first), ...all.slice(last)];
    expect(rest.filter((m) => m.includes('print("数据")')).length).toBeGreaterThan(1);
    for (const m of rest) expect(fencesBalanced(m), m.slice(0, 60)).toBe(true);
  });
});
