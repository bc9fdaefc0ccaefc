/**
 * The upload half: local images the agent references ship as photos after the text seal, silently,
 * under the gates; refusals stay visible; a failed upload restores references without re-posting.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { PipelineProvider } from "../../src/messaging/turn/pipeline.js";
import { runTurnPipeline } from "../../src/messaging/turn/pipeline.js";
import type { ProviderEvent } from "../../src/messaging/turn/provider-events.js";
import type { ScriptStep } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { TelegramRenderer } from "../../src/telegram/renderer.js";
import { TelegramTransport } from "../../src/telegram/transport.js";
import type { UploadPolicy } from "../../src/telegram/uploads.js";
import { FakeTelegram } from "../fakes/telegram/server.js";
import { testDrops } from "../helpers/drops.js";
import { opsFor } from "./helpers.js";

const CHAT = 42;
const PNG = Uint8Array.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82, 1, 2, 3, 4,
]);
let fake: FakeTelegram;
let root: string;

beforeEach(async () => {
  fake = await FakeTelegram.start({ lifetimeMs: 30_000 });
  root = mkdtempSync(join(tmpdir(), "parley-tg-up-"));
  mkdirSync(join(root, "out"));
  writeFileSync(join(root, "out", "chart.png"), PNG);
  writeFileSync(join(root, "out", "pie.png"), PNG);
});

afterEach(async () => {
  await fake.stop();
});

const text = (t: string): ProviderEvent => ({ type: "text", text: t });
const done: ProviderEvent = { type: "complete", stopReason: "end_turn" };

async function turn(steps: ScriptStep[], uploads: Partial<UploadPolicy> = {}) {
  const transport = new TelegramTransport({
    drops: testDrops(new MemoryAuditSink(), "telegram"),
    audit: new MemoryAuditSink(),
    ops: opsFor(fake),
    allowedUserIds: new Set([String(CHAT)]),
  });
  const provider = new ScriptedProvider([steps]);
  const sessions = new SessionManager<PipelineProvider>({ createProvider: () => provider });
  const renderer = new TelegramRenderer(transport, {
    chatId: String(CHAT),
    throttleMs: 0,
    uploads: { root: async () => root, allowed: () => true, ...uploads },
  });
  const release = sessions.tryAcquire("k");
  if (!release) throw new Error("lock");
  return runTurnPipeline(
    { sessions, audit: new MemoryAuditSink() },
    {
      sessionKey: "k",
      channelType: "telegram",
      text: "go",
      renderer,
      release,
    },
  );
}

const bodies = () =>
  fake.calls
    .filter((c) => c.method === "sendMessage" || c.method === "editMessageText")
    .map((c) => String(c.params.text));

describe("uploads", () => {
  it("sends the photo after the text seal, silently, and no path flashes on screen", async () => {
    const result = await turn([
      text("Here is the chart:\n\n![chart](out/"),
      { delayMs: 5 },
      text("chart.png)\n\nDone."),
      done,
    ]);
    expect(result.ok).toBe(true);
    const methods = fake.calls.filter((c) => c.method !== "sendChatAction").map((c) => c.method);
    expect(methods.indexOf("sendPhoto")).toBeGreaterThan(methods.lastIndexOf("sendMessage"));
    const photo = fake.callsOf("sendPhoto")[0];
    expect(photo?.params.disable_notification).toBe("true");
    expect(Object.values(photo?.params ?? {}).some((v) => (v as { size?: number }).size === PNG.length)).toBe(
      true,
    );
    for (const b of bodies()) expect(b).not.toContain("out/chart.png");
    expect(fake.sentMessages(CHAT)[0]?.visible).toMatch(/^Here is the chart:\n\nDone\./);
  });

  it("several images go as one album", async () => {
    await turn([text("![a](out/chart.png)\n![b](out/pie.png)\nBoth."), done]);
    expect(fake.callsOf("sendMediaGroup")).toHaveLength(1);
    expect(fake.callsOf("sendMediaGroup")[0]?.params.media).toHaveLength(2);
  });

  it("a refused reference keeps its path visible and says why", async () => {
    await turn([text("Secret: ![k](/etc/passwd) and ![c](out/chart.png)"), done]);
    const shown = fake.sentMessages(CHAT)[0]?.visible ?? "";
    expect(shown).toContain("/etc/passwd");
    expect(shown).toContain("⚠️");
    expect(fake.callsOf("sendPhoto")).toHaveLength(1);
  });

  it("a restricted (temporary/incognito) conversation uploads nothing and keeps the path", async () => {
    await turn([text("![chart](out/chart.png)"), done], { allowed: () => false });
    expect(fake.callsOf("sendPhoto")).toHaveLength(0);
    expect(fake.sentMessages(CHAT)[0]?.visible).toContain("out/chart.png");
  });

  it("a failed upload restores the reference in one follow-up, without re-posting the answer", async () => {
    fake.inject("sendPhoto", { code: 400, description: "Bad Request: IMAGE_PROCESS_FAILED" });
    const result = await turn([text("The answer.\n\n![chart](out/chart.png)"), done]);
    expect(result.ok).toBe(true);
    const sent = fake.sentMessages(CHAT).map((m) => m.visible);
    expect(sent.filter((v) => v.includes("The answer."))).toHaveLength(1);
    expect(sent.at(-1)).toMatch(/^⚠️ Could not upload:\n!\[chart\]\(.*out\/chart\.png\)$/);
  });
});
