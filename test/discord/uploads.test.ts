/**
 * Local images in an answer: a reference inside the agent's cwd is uploaded as a multipart
 * attachment (the bytes read once, the markup cut), one outside the root is refused visibly (its
 * markup stays and a note says why), and a path inside a code fence is literal text.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Stack } from "./helpers.js";
import { ALICE, DM, startStack, untilFooter } from "./helpers.js";

const PNG = Uint8Array.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1,
  8, 6, 0, 0, 0,
]);

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe("discord: uploads", () => {
  it("uploads an image inside the cwd and refuses one outside it, visibly", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "parley-cwd-"));
    writeFileSync(join(cwd, "out.png"), PNG);
    const outside = mkdtempSync(join(tmpdir(), "parley-outside-"));
    mkdirSync(join(outside, "x"));
    writeFileSync(join(outside, "x", "leak.png"), PNG);
    const reply = `Here is the chart:\n\n![chart](./out.png)\n\nAnd ![other](${outside}/x/leak.png) too.\n\n\`\`\`\n![literal](./out.png)\n\`\`\``;
    stack = await startStack({
      turns: [
        [
          { type: "text", text: reply },
          { type: "complete", stopReason: "end_turn" },
        ],
      ],
      provider: { cwd },
    });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "plot it" });
    await untilFooter(stack.fake, DM);
    const [message] = stack.fake.channelMessages(DM);
    expect(message?.attachments).toEqual([
      expect.objectContaining({ filename: "out.png", size: PNG.length, description: "chart" }),
    ]);
    const uploads = stack.fake.calls.filter((c) => c.files.length > 0);
    expect(uploads).toHaveLength(1);
    expect(uploads[0]?.files[0]?.bytes).toEqual(PNG);
    expect(uploads[0]?.files[0]?.field).toBe("files[0]");
    expect((uploads[0]?.body as { allowed_mentions?: unknown } | undefined)?.allowed_mentions).toEqual({
      parse: [],
    });
    const content = message?.content ?? "";
    expect(content).not.toContain("![chart](./out.png)");
    expect(content).toContain(`![other](${outside}/x/leak.png)`);
    expect(content).toContain("```\n![literal](./out.png)\n```");
    expect(content).toMatch(/-# ⚠️ image not sent: .+/);
    expect(stack.audit.find("discord_renderer.upload_files", "refused")).toHaveLength(1);
  });

  it("an image-only reply ships as an attachment with no raw path", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "parley-cwd-"));
    writeFileSync(join(cwd, "only.png"), PNG);
    stack = await startStack({
      turns: [
        [
          { type: "text", text: "![](only.png)" },
          { type: "complete", stopReason: "end_turn" },
        ],
      ],
      provider: { cwd },
    });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "just the picture" });
    await untilFooter(stack.fake, DM);
    const [message] = stack.fake.channelMessages(DM);
    expect(message?.attachments.map((a) => a.filename)).toEqual(["only.png"]);
    expect(message?.content).toMatch(/^-# Finished in \d+s$/);
  });
});

describe("discord: a failed upload", () => {
  it("still sends the text, with the image markup restored and the failure reported", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "parley-cwd-"));
    writeFileSync(join(cwd, "out.png"), PNG);
    stack = await startStack({
      turns: [
        [
          { type: "text", text: "Chart: ![chart](./out.png)" },
          { type: "complete", stopReason: "end_turn" },
        ],
      ],
      provider: { cwd },
    });
    stack.fake.failNext((method, path) => method === "POST" && /\/messages$/.test(path), {
      status: 413,
      code: 40005,
    });
    stack.fake.userMessage({ channelId: DM, userId: ALICE, content: "plot it" });
    await untilFooter(stack.fake, DM);
    const [message] = stack.fake.channelMessages(DM);
    expect(message?.attachments).toEqual([]);
    expect(message?.content).toMatch(
      /^Chart:\s*\n!\[chart\]\(\.\/out\.png\)\n-# ⚠️ the image upload failed\n-# Finished/,
    );
  });
});
