/**
 * Files both ways. In: a shared file is downloaded with the bot token from the host derived from
 * slack.apiUrl only (here: the fake's exact origin), without redirects; a file URL off that host, or
 * one that redirects, is refused without the token ever leaving (the refusal is one visible line).
 * Out: a local image becomes a file in the thread through the external upload flow, its bytes sent
 * to the admitted upload URL without the token; in a shared channel thread nothing is uploaded and
 * the note says so.
 */

import { mkdtempSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PromptContent } from "../../src/messaging/turn/provider-events.js";
import { admitFileUrl, fileOriginsFor } from "../../src/slack/attachments.js";
import type { Stack } from "./helpers.js";
import { ALICE, CHANNEL, DM, done, settled, shown, startStack, text, untilFooter } from "./helpers.js";

const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

let stack: Stack | undefined;
let elsewhere:
  | { origin: string; hits: { path: string; authorization?: string }[]; server: Server }
  | undefined;

beforeEach(async () => {
  const hits: { path: string; authorization?: string }[] = [];
  const server = createServer((req, res) => {
    hits.push({
      path: req.url ?? "",
      ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
    });
    res.writeHead(200, { "content-type": "image/png" }).end(PNG);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  elsewhere = { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, server };
});

afterEach(async () => {
  await stack?.close();
  stack = undefined;
  await new Promise<void>((resolve) => elsewhere?.server.close(() => resolve()));
});

const blocks = (p: string | PromptContent[] | undefined): PromptContent[] => (Array.isArray(p) ? p : []);

describe("slack: files in", () => {
  it("downloads a shared image with the bot token, from the configured origin, into the agent's prompt", async () => {
    stack = await startStack({ turns: [[text("A red pixel."), done]] });
    Object.assign(stack.provider, { promptCapabilities: { image: true } });
    const file = stack.fake.shareFile({ name: "pixel.png", mimetype: "image/png", bytes: PNG });
    stack.fake.userMessage({
      channel: DM,
      user: ALICE,
      text: "what is this?",
      files: [file],
      subtype: "file_share",
    });
    await untilFooter(stack.fake, DM);
    expect(stack.provider.prompts).toEqual([
      [
        { type: "text", text: "what is this?" },
        { type: "image", mimeType: "image/png", data: PNG.toString("base64") },
      ],
    ]);
    expect(stack.fake.fileRequests.map((r) => r.authorization)).toEqual([`Bearer ${stack.fake.botToken}`]);
  });

  it("refuses a file off the allowed host, and one that redirects, without sending the token anywhere else", async () => {
    stack = await startStack({ turns: [[text("ok"), done]] });
    const f = stack.fake;
    const offHost = f.shareFile({ name: "far.png", url: `${elsewhere?.origin}/files-pri/far.png` });
    const redirecting = f.shareFile({ name: "moved.png", redirectTo: `${elsewhere?.origin}/grab.png` });
    const { ts } = f.userMessage({
      channel: DM,
      user: ALICE,
      text: "two files",
      files: [offHost, redirecting],
      subtype: "file_share",
    });
    await untilFooter(f, DM);
    await settled(stack);
    const said = shown(f, DM, ts).join("\n");
    expect(said).toContain("Could not read far.png");
    expect(said).toContain("only HTTPS downloads are allowed");
    expect(said).toContain("Could not read moved.png");
    expect(said).toContain("redirect, which is not followed");
    // The foreign host was never contacted; only the admitted host saw the token (and answered 302).
    expect(elsewhere?.hits).toEqual([]);
    expect(f.fileRequests.map((r) => r.path)).toEqual([expect.stringContaining("/moved.png")]);
    const note = blocks(stack.provider.prompts[0]).at(-1);
    expect(note).toMatchObject({ type: "text", text: expect.stringMatching(/far\.png[\s\S]*moved\.png/) });
  });

  it("admits only Slack's file host for the public API: HTTPS, the exact host, the default port", () => {
    const slack = fileOriginsFor("https://slack.com/api");
    expect(admitFileUrl("https://files.slack.com/files-pri/T1-F1/a.png", slack).hostname).toBe(
      "files.slack.com",
    );
    for (const bad of [
      "http://files.slack.com/files-pri/T1-F1/a.png",
      "https://files.slack.com.evil.example/a.png",
      "https://files.slack.com:8443/a.png",
      "https://user:pw@files.slack.com/a.png",
      "https://evil.example/a.png",
      "not a url",
    ])
      expect(() => admitFileUrl(bad, slack), bad).toThrow();
  });
});

describe("slack: files out", () => {
  it("uploads a local image into the DM thread through the external flow, never with the token", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "parley-slack-out-"));
    writeFileSync(join(cwd, "chart.png"), PNG);
    stack = await startStack({
      provider: { cwd },
      turns: [[text("Here is the chart:\n![Q3 chart](./chart.png)\n"), done]],
    });
    const { ts } = stack.fake.userMessage({ channel: DM, user: ALICE, text: "chart please" });
    await untilFooter(stack.fake, DM);
    await settled(stack);
    const files = stack.fake.thread(DM, ts).flatMap((m) => m.files);
    expect(files).toEqual([
      expect.objectContaining({ name: "chart.png", title: "Q3 chart", bytes: PNG.length }),
    ]);
    expect(stack.fake.uploads.map((u) => u.authorization)).toEqual([undefined]);
    expect(shown(stack.fake, DM, ts)[0]).toMatch(/^Here is the chart:/);
    expect(shown(stack.fake, DM, ts).join("\n")).not.toContain("./chart.png");
  });

  it("uploads nothing into a shared channel thread: the path stays visible, with the reason", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "parley-slack-out-"));
    writeFileSync(join(cwd, "chart.png"), PNG);
    stack = await startStack({ provider: { cwd }, turns: [[text("Here:\n![chart](./chart.png)\n"), done]] });
    const f = stack.fake;
    const { ts } = f.userMessage({ channel: CHANNEL, user: ALICE, text: `<@${f.botUserId}> chart please` });
    await untilFooter(f, CHANNEL);
    await settled(stack);
    expect(f.uploads).toEqual([]);
    const said = shown(f, CHANNEL, ts).join("\n");
    expect(said).toContain("./chart.png");
    expect(said).toContain("files are not uploaded into a shared channel thread");
    expect(stack.audit.find("slack_renderer.upload_files", "refused")[0]?.fields).toMatchObject({
      reason: "shared_audience",
    });
  });
});
